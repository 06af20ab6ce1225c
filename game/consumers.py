"""The game socket: a thin adapter between websocket frames and :mod:`game.services`.

One socket per open game page at ``/ws/game/<id>/``.  On connect it sends a
``snapshot``; then every committed game event of the group ``game.<id>``.
Each client frame is parsed at the edge (:mod:`game.protocol`), handed to one
service call off the event loop, and any refusal is answered with an
``error`` to this socket only.
"""

from __future__ import annotations

import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from game import services
from game.broadcast import group_name, publish
from game.protocol import PlayMove, Ping, ProtocolError, Sync, decode_frame, parse_client_message

log = logging.getLogger(__name__)

#: Close code sent when the game in the URL does not exist.
CLOSE_NO_SUCH_GAME = 4404


class GameConsumer(AsyncJsonWebsocketConsumer):
    """Websocket consumer for one viewer (player or spectator) of one game."""

    async def connect(self):
        self.game_id = self.scope["url_route"]["kwargs"]["game_id"]
        session = self.scope.get("session")
        self.player_id = session.get("player_id") if session is not None else None
        self.group = group_name(self.game_id)
        try:
            snapshot = await database_sync_to_async(services.snapshot)(self.game_id, self.player_id)
        except services.ActionError:
            await self.close(code=CLOSE_NO_SUCH_GAME)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json(snapshot)

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        try:
            message = parse_client_message(decode_frame(text_data, bytes_data))
        except ProtocolError as exc:
            await self.send_json({"type": "error", "code": exc.code, "message": exc.message})
            return
        try:
            await self.handle(message)
        except services.ActionError as exc:
            await self.send_json(exc.as_event())
            if exc.code in ("stale", "bad_version"):
                await self.send_snapshot()

    async def handle(self, message):
        """Carry out one parsed client message."""
        if isinstance(message, Ping):
            await self.send_json({"type": "pong"})
        elif isinstance(message, Sync):
            await self.send_snapshot()
        elif isinstance(message, PlayMove):
            outcome = await database_sync_to_async(services.play_move)(
                self.game_id, self.player_id, message.move, message.v
            )
            await publish(self.game_id, outcome.events)

    async def send_snapshot(self):
        """Send this viewer a fresh snapshot of the game."""
        await self.send_json(
            await database_sync_to_async(services.snapshot)(self.game_id, self.player_id)
        )

    async def game_event(self, message):
        """Group message ``game.event``: forward one committed game event to the browser."""
        await self.send_json(message["event"])
