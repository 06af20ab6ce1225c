"""Routes of the account pages: the site's own (delete), then allauth's (``accounts/``: log in,
sign up, log out, passwords, email addresses)."""

from django.urls import include, path

from game.accounts import views

urlpatterns = [
    path("delete/", views.delete, name="account_delete"),
    path("", include("allauth.urls")),
]
