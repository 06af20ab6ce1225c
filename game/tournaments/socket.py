"""The tournament page's socket: it only listens.

``/ws/tournament/<id>/`` joins the tournament's group and its player's (:mod:`game.tournaments.live`)
and forwards ``standings`` (what :func:`game.tournaments.standings.public` returns, at most once a
second) and, to a paired player's sockets only, ``paired`` (``game``, ``url``).  The page sends
nothing; anything it sends is answered with an ``error`` ``no_messages`` to it alone.
"""

from __future__ import annotations

import logging

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from game.sockets import in_db_thread

from . import live, standings
from .models import Tournament

log = logging.getLogger(__name__)

#: Close code of a socket for a tournament that does not exist.
CLOSE_NO_SUCH_TOURNAMENT = 4404


class TournamentConsumer(AsyncJsonWebsocketConsumer):
    """One viewer of a tournament page."""

    groups_joined: list[str]

    async def connect(self):
        self.groups_joined = []
        tournament_id = self.scope["url_route"]["kwargs"]["tournament_id"]
        await self.accept()
        exists = await in_db_thread(Tournament.objects.filter(pk=tournament_id).exists)()
        if not exists:
            await self.close(code=CLOSE_NO_SUCH_TOURNAMENT)
            return
        session = self.scope.get("session")
        player = session.get("player_id") if session is not None else None
        names = [live.group(tournament_id)] + ([live.player_group(tournament_id, player)] if player else [])
        for name in names:
            await self.channel_layer.group_add(name, self.channel_name)
            self.groups_joined.append(name)
        data = await in_db_thread(standings.public)(tournament_id)
        await self.send_json({"type": "standings", **data})

    async def disconnect(self, code):
        for name in self.groups_joined:
            try:
                await self.channel_layer.group_discard(name, self.channel_name)
            except Exception:  # noqa: BLE001 - the group's entry expires on its own
                log.warning("tournaments: could not leave %s", name)

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        await self.send_json({"type": "error", "code": "no_messages",
                              "message": "This socket only listens."})

    async def tournament_standings(self, event):
        """``tournament.standings`` from :func:`game.tournaments.live.push_standings`."""
        await self.send_json({"type": "standings", **event["data"]})

    async def tournament_paired(self, event):
        """``tournament.paired`` from :func:`game.tournaments.live.paired`: this player's new game."""
        await self.send_json({"type": "paired", "game": event["game"], "url": event["url"]})
