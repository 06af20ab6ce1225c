"""Websocket URL routes of the game app.

The game route takes only what :func:`game.models.new_game_id` makes, so nothing else (a NUL, an empty
id, a slash) reaches the database; every other path goes to :class:`NoRouteConsumer`.
"""

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import path, re_path

from game.lobby.socket import LobbyConsumer
from game.models import GAME_ID_PATTERN
from game.people.socket import PeopleConsumer
from game.round.protocol import CLOSE_NO_SUCH_GAME
from game.round.socket import GameConsumer
from game.tournaments.socket import TournamentConsumer
from game.tournaments.urls import ID_PATTERN as TOURNAMENT_ID


class NoRouteConsumer(AsyncWebsocketConsumer):
    """A websocket path no route matches (``/ws/game//``, ``/ws/nothing/``): accepted, then closed with
    code 4404 as a game that does not exist is, instead of channels' "No route found" error (an HTTP 500).
    No channel layer: it opens no channel in Redis."""

    channel_layer_alias = None  # type: ignore[assignment]  # channels reads None as "no layer"; its stubs say str

    async def connect(self):
        await self.accept()
        await self.close(code=CLOSE_NO_SUCH_GAME, reason="no route for this path")


websocket_urlpatterns = [
    # Channels' URLRouter takes ASGI applications where Django's stubs expect views.
    re_path(rf"^ws/game/(?P<game_id>{GAME_ID_PATTERN})/$", GameConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/lobby/", LobbyConsumer.as_asgi()),  # type: ignore[arg-type]
    re_path(rf"^ws/tournament/(?P<tournament_id>{TOURNAMENT_ID})/$", TournamentConsumer.as_asgi()),  # type: ignore[arg-type]
    path("ws/people/", PeopleConsumer.as_asgi()),  # type: ignore[arg-type]
    re_path(r"", NoRouteConsumer.as_asgi()),  # type: ignore[arg-type]
]
