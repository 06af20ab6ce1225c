"""The learning app's HTTP routes (included by :mod:`game.urls`)."""

from django.urls import path

from . import review_views

urlpatterns = [
    path("g/<game_id:game_id>/review", review_views.review, name="game_review"),
]
