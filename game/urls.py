"""HTTP routes of the game app."""

from django.urls import path

from game import views

urlpatterns = [
    path("", views.home, name="home"),
    path("g/<str:game_id>/", views.game_page, name="game"),
    path("g/<str:game_id>/join", views.join, name="join"),
]
