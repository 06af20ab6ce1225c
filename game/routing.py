"""Websocket URL routes of the game app."""

from django.urls import path

from game.consumers import GameConsumer
from game.lobby import LobbyConsumer

websocket_urlpatterns = [
    path("ws/game/<str:game_id>/", GameConsumer.as_asgi()),
    path("ws/lobby/", LobbyConsumer.as_asgi()),
]
