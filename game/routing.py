"""Websocket URL routes of the game app."""

from django.urls import path

from game.consumers import GameConsumer

websocket_urlpatterns = [
    path("ws/game/<str:game_id>/", GameConsumer.as_asgi()),
]
