"""The tournament page's socket: it only listens.

``/ws/tournament/<id>/`` joins the tournament's group and its player's (:mod:`game.tournaments.live`)
and forwards ``standings`` (what :func:`game.tournaments.standings.public` returns, at most once a
second) and, to a paired player's sockets only, ``paired`` (``game``, ``url``).  The page sends
nothing: a message sent to it is answered with an ``error`` ``no_messages`` and the socket closed
(:data:`CLOSE_NO_MESSAGES`).  A session's and an address's sockets are counted as the game's are
(:mod:`game.round.admission`, kind ``tournament``; over the limit: :data:`CLOSE_TOO_MANY_SOCKETS`).
"""

from __future__ import annotations

import logging

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from game.round import admission
from game.sockets import in_db_thread

from . import live, standings
from .models import Tournament

log = logging.getLogger(__name__)

#: Close code of a socket for a tournament that does not exist.
CLOSE_NO_SUCH_TOURNAMENT = 4404
#: Close code of a socket that sent a message.
CLOSE_NO_MESSAGES = 4400
#: Close code of a socket over its session's or address's limit.
CLOSE_TOO_MANY_SOCKETS = 4429


class TournamentConsumer(AsyncJsonWebsocketConsumer):
    """One viewer of a tournament page."""

    groups_joined: list[str]
    ticket: admission.Ticket | None = None

    async def connect(self):
        self.groups_joined = []
        tournament_id = self.scope["url_route"]["kwargs"]["tournament_id"]
        session = self.scope.get("session")
        player = session.get("player_id") if session is not None else None
        client = self.scope.get("client")
        await self.accept()
        self.ticket, over = await admission.admit(self.channel_name, player, client[0] if client else None,
                                                  kind="tournament")
        if over is not None:
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        exists = await in_db_thread(Tournament.objects.filter(pk=tournament_id).exists)()
        if not exists:
            await self.close(code=CLOSE_NO_SUCH_TOURNAMENT)
            return
        try:
            for name in [live.group(tournament_id)] + ([live.player_group(tournament_id, player)] if player else []):
                await self.channel_layer.group_add(name, self.channel_name)
                self.groups_joined.append(name)
            data = await in_db_thread(standings.public)(tournament_id)
            await self.send_json({"type": "standings", **data})
        except BaseException:
            # The page went away while this socket connected: channels will not call disconnect.
            await self.leave()
            raise

    async def leave(self) -> None:
        """Leave the groups joined and give back the socket's place in its limits."""
        groups, self.groups_joined = self.groups_joined, []
        for name in groups:
            try:
                await self.channel_layer.group_discard(name, self.channel_name)
            except Exception:  # noqa: BLE001 - the group's entry expires on its own
                log.warning("tournaments: could not leave %s", name)
        if self.ticket is not None:
            ticket, self.ticket = self.ticket, None
            await admission.release(ticket)

    async def disconnect(self, code):
        await self.leave()

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        await self.send_json({"type": "error", "code": "no_messages", "message": "This socket only listens."})
        await self.close(code=CLOSE_NO_MESSAGES)

    async def tournament_standings(self, event):
        """``tournament.standings`` from :func:`game.tournaments.live.push_standings`."""
        await self.send_json({"type": "standings", **event["data"]})

    async def tournament_paired(self, event):
        """``tournament.paired`` from :func:`game.tournaments.live.paired`: this player's new game."""
        await self.send_json({"type": "paired", "game": event["game"], "url": event["url"]})
