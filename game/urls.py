"""HTTP routes of the game app."""

from django.urls import path

from game import engine_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("g/<str:game_id>/", views.game_page, name="game"),
    path("g/<str:game_id>/join", views.join, name="join"),
    path("g/<str:game_id>.pdn", views.game_pdn, name="game_pdn"),
    path("games/live", views.live_games, name="live_games"),
    path("computer", engine_views.play_computer, name="play_computer"),
    path("analysis", engine_views.analysis_page, name="analysis"),
    path("analysis/position", engine_views.analysis_position, name="analysis_position"),
    path("analysis/search", engine_views.analysis_search, name="analysis_search"),
]
