"""The routes of the turn mails' pages (included by :mod:`game.urls`)."""

from django.urls import path

from game.correspondence import views

urlpatterns = [
    path("mail/unsubscribe/<str:token>", views.unsubscribe, name="turn_mails_unsubscribe"),
    path("settings/notifications", views.notification_settings, name="notification_settings"),
]
