"""The tournament page's socket: the standings, the paired player's game, and the chat.

``/ws/tournament/<id>/`` joins the tournament's group and its player's (:mod:`game.tournaments.live`);
an entrant's socket counts them present on the tournament (:mod:`game.tournaments.presence`) and
brings back an arena player paused as away (:func:`game.tournaments.arena.back`).  It forwards
``standings`` (what :func:`game.tournaments.standings.public` returns, at most once a second) and,
to a paired player's sockets only, ``paired`` (``game``, ``url``), also when it opens while the
player's first move of a game is due (:func:`game.tournaments.live.first_move_due`).  It sends the chat
(``chat``, ``lines``: :func:`game.tournaments.chat.history` when it opens, if there is any, then
each new line), but the lines of the players its account blocks (read when it opens, and again
with a line that comes :data:`game.round.hiding.REREAD_S` seconds or more after).

The page sends one message, ``{"type": "chat", "text": "..."}``: a line of the tournament's chat
(:func:`game.tournaments.chat.say`, its entrants only).  Anything else, a bad frame or a refused
line is answered with an ``error`` (``code``, ``message``) to this socket only, and nothing is
stored (``session_ended`` when the session's log-in ended since the socket opened: logged out,
password changed); over :data:`FRAMES` frames in :data:`FRAMES_WINDOW_S` seconds the socket is closed
(:data:`CLOSE_FLOOD`).  A session's and an address's sockets are counted as the game's are
(:mod:`game.round.admission`, kind ``tournament``; over the limit: :data:`CLOSE_TOO_MANY_SOCKETS`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db import DatabaseError
from django.utils.translation import gettext_lazy as _

from game import sessions
from game.errors import ActionError
from game.round import admission
from game.round import chat as game_chat
from game.round.hiding import REREAD_S
from game.sockets import ProtocolError, decode_frame, in_db_thread

from . import arena, chat, live, presence, standings
from .models import Entry, Tournament

log = logging.getLogger(__name__)

#: Close code of a socket for a tournament that does not exist.
CLOSE_NO_SUCH_TOURNAMENT = 4404
#: Close code of a socket that sent more than :data:`FRAMES` frames in :data:`FRAMES_WINDOW_S` seconds.
CLOSE_FLOOD = 4400
#: Frames a socket may send ...
FRAMES = 10
#: ... in any window of this many seconds.
FRAMES_WINDOW_S = 5
#: Close code of a socket over its session's or address's limit.
CLOSE_TOO_MANY_SOCKETS = 4429


class TournamentConsumer(AsyncJsonWebsocketConsumer):
    """One viewer of a tournament page."""

    groups_joined: list[str]
    ticket: admission.Ticket | None = None
    tournament_id: str
    speaker: game_chat.Speaker
    frames: deque[float]
    player: str | None
    hidden: frozenset[str] = frozenset()
    hidden_at: float = 0.0
    #: An entrant's socket, counted in the tournament's presence (:mod:`game.tournaments.presence`).
    present: bool = False
    #: The game of the last ``paired`` this socket sent.
    told_game: str | None = None

    async def connect(self):
        self.groups_joined = []
        self.frames = deque()
        tournament_id = self.tournament_id = self.scope["url_route"]["kwargs"]["tournament_id"]
        session = self.scope.get("session")
        player = session.get("player_id") if session is not None else None
        self.speaker = game_chat.Speaker(player)
        self.player = player
        client = self.scope.get("client")
        await self.accept()
        self.ticket, over = await admission.admit(self.channel_name, player, client[0] if client else None,
                                                  kind="tournament")
        if over is not None:
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        exists, entrant = await in_db_thread(_found)(tournament_id, player)
        if not exists:
            await self.close(code=CLOSE_NO_SUCH_TOURNAMENT)
            return
        try:
            if entrant and player:     # counted present first: a game's end from now on sees this page
                self.present = True
                await presence.enter(tournament_id, player, self.channel_name)
                if await in_db_thread(arena.back)(tournament_id, player):
                    await in_db_thread(live.changed)(tournament_id)
            for name in [live.group(tournament_id)] + ([live.player_group(tournament_id, player)] if player else []):
                await self.channel_layer.group_add(name, self.channel_name)
                self.groups_joined.append(name)
            data = await in_db_thread(standings.public)(tournament_id)
            await self.send_json({"type": "standings", **data})
            await self.read_blocks()
            lines = await in_db_thread(chat.history)(tournament_id, self.hidden)
            if lines:
                await self.send_json({"type": "chat", "lines": lines})
            due = await in_db_thread(live.first_move_due)(tournament_id, player) if entrant and player else None
            if due is not None:     # paired while no page of the player's listened (live.first_move_due)
                await self.tell_paired(live.paired_message(due))
        except BaseException:
            # The page went away while this socket connected: channels will not call disconnect.
            await self.leave()
            raise

    async def leave(self) -> None:
        """Leave the groups joined, the tournament's presence, and give back the socket's place in
        its limits."""
        if self.present and self.player:
            self.present = False
            await presence.leave(self.tournament_id, self.player, self.channel_name)
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
        """A chat line (``{"type": "chat", "text": str}``); anything else is refused with an
        ``error`` to this socket only."""
        now = time.monotonic()
        while self.frames and self.frames[0] <= now - FRAMES_WINDOW_S:
            self.frames.popleft()
        self.frames.append(now)
        if len(self.frames) > FRAMES:
            await self.error("too_many_messages", _("Too many messages: this page's connection is closed."))
            await self.close(code=CLOSE_FLOOD)
            return
        try:
            text = chat_text(decode_frame(text_data, bytes_data))
            if not await in_db_thread(sessions.log_in_holds)(self.scope.get("session")):
                raise ActionError("session_ended", sessions.SESSION_ENDED_MESSAGE)
            line = await in_db_thread(chat.say)(self.tournament_id, self.speaker, text, now)
        except (ProtocolError, ActionError) as exc:
            await self.error(exc.code, exc.message)
            return
        except DatabaseError as exc:
            log.error("tournaments: database unavailable for the chat of %s: %s", self.tournament_id, exc)
            await self.error("unavailable", _("The server cannot reach its database right now; nothing was "
                                              "changed. Try again in a moment."))
            return
        await self.channel_layer.group_send(live.group(self.tournament_id), {
            "type": "tournament.chat", "line": line, "writer": self.player})

    async def error(self, code: str, message: Any) -> None:
        """An ``error`` to this socket only."""
        await self.send_json({"type": "error", "code": code, "message": str(message)})

    async def read_blocks(self) -> None:
        """Read whom this socket's player blocks (:func:`game.tournaments.chat.blocked`); a
        database failure keeps the last reading."""
        self.hidden_at = time.monotonic()
        try:
            self.hidden = await in_db_thread(chat.blocked)(self.player)
        except DatabaseError as exc:
            log.warning("tournaments: could not read the blocks of a chat reader: %s", exc)

    async def tournament_chat(self, event):
        """``tournament.chat``: a new line of the tournament's chat, for every viewer but one who
        blocks its writer."""
        if self.player and time.monotonic() - self.hidden_at >= REREAD_S:
            await self.read_blocks()
        if event.get("writer") in self.hidden:
            return
        await self.send_json({"type": "chat", "lines": [event["line"]]})

    async def tournament_standings(self, event):
        """``tournament.standings`` from :func:`game.tournaments.live.push_standings`."""
        await self.send_json({"type": "standings", **event["data"]})

    async def tournament_paired(self, event):
        """``tournament.paired`` from :func:`game.tournaments.live.paired`: this player's new game."""
        await self.tell_paired({"game": event["game"], "url": event["url"]})

    async def tell_paired(self, pairing: dict[str, str]) -> None:
        """``paired`` (``game``, ``url``), once a game: a pairing made while the socket opened is
        both read (:func:`game.tournaments.live.first_move_due`) and heard from the group."""
        if pairing["game"] == self.told_game:
            return
        self.told_game = pairing["game"]
        await self.send_json({"type": "paired", **pairing})


def _found(tournament_id: str, player_id: str | None) -> tuple[bool, bool]:
    """Whether the tournament exists, and whether ``player_id`` is one of its entrants."""
    exists = Tournament.objects.filter(pk=tournament_id).exists()
    return exists, bool(exists and player_id and Entry.objects.filter(tournament_id=tournament_id,
                                                                      player_id=player_id).exists())


def chat_text(data: dict[str, Any]) -> str:
    """The text of a decoded chat message.  Raises :class:`ProtocolError` ``unknown_type`` (not
    ``{"type": "chat"}``) or ``bad_message`` (no string ``text``)."""
    if data.get("type") != "chat":
        raise ProtocolError("unknown_type", _("This socket takes chat lines only."))
    text = data.get("text")
    if not isinstance(text, str):
        raise ProtocolError("bad_message", _("'text' must be a string."))
    return text
