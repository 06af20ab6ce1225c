"""The chat lines a viewer does not receive: those of the players it blocks (docs/people.md, "Blocks").

A signed-in viewer's game socket keeps a :class:`ChatFilter`: the player ids its account blocks
(:class:`game.models.Block`), their user names and the game's seats, read when the socket opens
and again, in the background, when a chat line comes :data:`REREAD_S` seconds or more after the
last reading (a block made on another page reaches a game page already open within about that
time).  A line is hidden when it was written
from a seat a blocked player holds, or under a blocked player's name (a spectator writes under
the account's user name).  The filter works on the texts the hub hands the socket: only a
``chat`` event, or a snapshot with chat lines, of a viewer who blocks somebody is decoded; every
other socket passes its texts through untouched.  A guest blocks nobody and has no filter.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.db import DatabaseError

from game.models import Account, Block, Game
from game.sockets import in_db_thread

log = logging.getLogger(__name__)

#: Seconds between two readings of a viewer's blocks (only when a chat line comes).
REREAD_S = 30.0
#: How an encoded ``chat`` event starts (:func:`game.round.events.encode`).
CHAT_PREFIX = '{"type":"chat",'


@dataclass(frozen=True)
class Hidden:
    """The writers a viewer does not read: ``players`` (player ids), ``names`` (user names,
    case-folded) and ``seats`` (``{"B"|"W": player id}`` of the game)."""

    players: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    seats: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.players)

    def hides(self, line: Any) -> bool:
        """Whether the chat ``line`` (``{"seat", "name", ...}``) is a blocked player's."""
        if not isinstance(line, dict):
            return False
        seat = line.get("seat")
        if seat and self.seats.get(seat) in self.players:
            return True
        name = line.get("name")
        return isinstance(name, str) and name.casefold() in self.names


def hidden_for(player_id: str, game_id: str) -> Hidden:
    """The :class:`Hidden` of the viewer ``player_id`` in game ``game_id`` (one query, three when
    it blocks somebody).  Synchronous (the database)."""
    players = frozenset(Block.objects.filter(blocker=player_id).values_list("blocked", flat=True)[:1000])
    if not players:
        return Hidden()
    names = frozenset(name.casefold() for name in Account.objects.filter(player_id__in=players)
                      .values_list("user__username", flat=True))
    seats = Game.objects.filter(pk=game_id).values_list("black_player", "white_player").first()
    return Hidden(players, names, {"B": seats[0], "W": seats[1]} if seats else {})


class ChatFilter:
    """The chat filter of one signed-in viewer's socket in one game."""

    def __init__(self, player_id: str, game_id: str) -> None:
        self.player_id, self.game_id = player_id, game_id
        self.hidden = Hidden()
        self.read_at = time.monotonic()
        self.reading: asyncio.Task | None = None

    async def read(self) -> None:
        """Read the viewer's blocks (a database failure is logged: the last reading stays)."""
        self.read_at = time.monotonic()
        try:
            self.hidden = await in_db_thread(hidden_for)(self.player_id, self.game_id)
        except DatabaseError as exc:
            log.warning("chat filter: could not read the blocks of %s: %s", self.player_id, exc)

    def event(self, text: str) -> str | None:
        """``text`` (an encoded event), or None for a chat line of a blocked player.  Never waits:
        blocks older than :data:`REREAD_S` are read again in the background for the next lines, so
        that the socket's events keep their order."""
        if not text.startswith(CHAT_PREFIX):
            return text
        if time.monotonic() - self.read_at >= REREAD_S and (self.reading is None or self.reading.done()):
            self.reading = asyncio.get_running_loop().create_task(self.read())
        if self.hidden and self.hidden.hides(orjson.loads(text).get("line")):
            return None
        return text

    def snapshot(self, text: str) -> str:
        """``text`` (an encoded snapshot) without the blocked players' chat lines (as read last)."""
        if not self.hidden or '"chat"' not in text:
            return text
        message = orjson.loads(text)
        rooms = message.get("chat")
        if not isinstance(rooms, dict):
            return text
        message["chat"] = {room: [line for line in lines if not self.hidden.hides(line)]
                           for room, lines in rooms.items()}
        return orjson.dumps(message).decode()
