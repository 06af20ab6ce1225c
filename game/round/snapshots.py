"""The snapshots of a game in this process, kept per (version, seat): a ``sync`` that finds
nothing changed, or a socket opening on a game nothing happened in, costs no database read.

Each server process's hub (:mod:`game.round.fanout`) sees every event of every game that has
a socket in this process, and tells the game's :class:`Snapshots` (:meth:`Snapshots.saw`): a
versioned event (``v``) or an ``audience`` notice (``game_v``, read from the database) raises the
game's known version, which drops the snapshots kept at an older one; an unversioned event that
is not a notice (a chat line) drops them too, since a snapshot carries the chat's last lines.  The
version rides in the events, so the cache is right across processes: an event committed by
another process reaches this one's hub before, or while, any snapshot read after it is served.

A snapshot is served from the cache only when it is at least as new as every event the hub has
seen of its game (so a page never gets a snapshot older than an event it was sent), and only for
:data:`FRESH_S` seconds after the database or an event last confirmed the version: an event whose
publish was lost (its server died) is then noticed within that time, as without a cache.  A
snapshot's clocks are moved on by the time since it was read (only the running side's time, and a
live game's first-move window, run between two events).  What is kept of a game is reset when
its last socket in the process leaves and when its subscription is lost or made again (events
may have been missed).  Everything here runs on the event loop; the database reads run in
:func:`game.sockets.in_db_thread`, one at a time per game (sockets asking meanwhile wait for it).
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from dataclasses import dataclass, field
from typing import Any

from game.round import events, reads
from game.sockets import in_db_thread

#: Seconds a version the database or an event confirmed is trusted without reading it again.
FRESH_S = 2.0


@dataclass(frozen=True)
class Copy:
    """One viewer's snapshot: ``you`` its seat (None: a spectator), ``text`` the encoded message for
    the socket's role, ``state`` its state (clocks as of now)."""

    you: str | None
    text: str
    state: dict[str, Any]


@dataclass
class _Shot:
    """A snapshot as read (``read_at``: monotonic s) and its encoded copies by socket role."""

    snapshot: events.Snapshot
    read_at: float
    texts: dict[str, str] = field(default_factory=dict)


def advanced_clock(clock: dict[str, Any] | None, elapsed_ms: int) -> dict[str, Any] | None:
    """A snapshot's public clocks (:class:`game.clock.ClockState`) ``elapsed_ms`` ms later,
    with no event between: the running side's time and a live game's first-move window run down,
    to 0 at least; the other side's time stands.

    >>> advanced_clock({"control": "5+3", "label": "", "B": 1000, "W": 900, "running": "B",
    ...                 "first_move_ms": None}, 300)["B"]
    700
    >>> advanced_clock(None, 300) is None
    True
    """
    if clock is None or elapsed_ms <= 0:
        return clock
    moved = dict(clock)
    running = clock.get("running")
    if running:
        moved[running] = max(0, clock[running] - elapsed_ms)
    if clock.get("first_move_ms") is not None:
        moved["first_move_ms"] = max(0, clock["first_move_ms"] - elapsed_ms)
    return moved


def version_of(copies: list[tuple[str, str]]) -> tuple[int | None, bool]:
    """``(version, is_notice)`` of one published event (:func:`game.round.events.read_publication`'s
    copies): its ``v`` (or an ``audience`` notice's ``game_v``), None when it has none."""
    if not copies:
        return None, False
    message = json.loads(copies[0][1])
    if message.get("type") == "audience":
        return message.get("game_v"), True
    v = message.get("v")
    return (v if isinstance(v, int) else None), False


class Snapshots:
    """The snapshots of one game in this process (see the module docstring), kept by its
    :class:`~game.round.round.Round`."""

    def __init__(self, game_id: str):
        self.game_id = game_id
        self.version = -1                   # the newest version seen (-1: none yet)
        self.confirmed = float("-inf")      # monotonic s when the database or an event last showed it
        self.seats: tuple[str | None, str | None] | None = None  # the seats' player ids at ``version``
        self.shots: dict[str | None, _Shot] = {}  # by the viewer's seat
        self.chat_lines = 0                 # chat lines seen: a read that began before one is not kept
        self.loading: asyncio.Future[None] | None = None    # a read under way
        #: Database reads made (snapshots, versions): for the tests and the curious.
        self.reads = 0

    # -- what the hub tells it

    def saw(self, copies: list[tuple[str, str]]) -> None:
        """An event of the game came through the hub (its copies as published)."""
        try:
            v, notice = version_of(copies)
        except ValueError:
            self.reset()
            return
        if v is None:
            if not notice:
                self.chat_lines += 1
                self.shots.clear()      # a chat line: the snapshots' chat history is behind
            return
        self._learn(v)

    def reset(self) -> None:
        """Events may have been missed (the game's subscription was lost or ended): trust nothing
        kept."""
        self.version, self.confirmed, self.seats = -1, float("-inf"), None
        self.shots.clear()

    # -- what the sockets ask

    async def current_version(self) -> int | None:
        """The game's version: the one kept while fresh, else read (one indexed read, one at a time
        per game).  None when there is no such game.  Raises ``DatabaseError``."""
        for _attempt in range(3):
            if self._fresh():
                return self.version
            if self.loading is None:
                break
            await asyncio.shield(self.loading)     # a read under way: then look again
        done = self.loading = asyncio.get_running_loop().create_future()
        try:
            self.reads += 1
            v = await in_db_thread(reads.version)(self.game_id)
            if v is not None:
                self._learn(v)
            return v
        finally:
            self._done(done)

    async def copy(self, player_id: str | None, role: str | None = None) -> Copy:
        """``player_id``'s snapshot of the game encoded for a socket of ``role`` (None: the
        viewer's own seat, or ``"S"``): from what is kept when it is fresh and at least as new as
        any event of the game seen so far, else read (one read at a time per game; sockets asking
        meanwhile wait for it and look again).

        Raises what :func:`game.round.reads.snapshot` raises (``ActionError`` ``no_such_game``,
        ``DatabaseError``).
        """
        floor = self.version   # no event before this call is newer
        for _attempt in range(3):
            if self._fresh() and self.seats is not None:
                shot = self.shots.get(_seat_of(self.seats, player_id))
                if shot is not None and shot.snapshot.v >= self.version:
                    return self._copy(shot, role)
            if self.loading is None:
                break
            await asyncio.shield(self.loading)
        shot = await self._read(player_id)
        if shot.snapshot.v < floor:     # read before an event this socket was sent: read again
            shot = await self._read(player_id)
        return self._copy(shot, role)

    # -- inside

    def _learn(self, v: int) -> None:
        if v > self.version:
            self.version, self.seats = v, None
            self.shots.clear()
        if v >= self.version:
            self.confirmed = time.monotonic()

    def _fresh(self) -> bool:
        return self.version >= 0 and time.monotonic() - self.confirmed < FRESH_S

    def _done(self, done: asyncio.Future[None]) -> None:
        if self.loading is done:
            self.loading = None
        done.set_result(None)

    async def _read(self, player_id: str | None) -> _Shot:
        """Read every seat's snapshot of the game in one go (:func:`game.round.reads.seat_snapshots`),
        keep them when they are the newest version, and return ``player_id``'s."""
        done = self.loading = asyncio.get_running_loop().create_future()
        try:
            self.reads += 1
            lines_before = self.chat_lines
            found, seats = await in_db_thread(reads.seat_snapshots)(self.game_id)
            read_at = time.monotonic()
            shots = {seat: _Shot(snapshot, read_at) for seat, snapshot in found.items()}
            # A chat line seen meanwhile leaves the version alone but may be missing from this read.
            v = seats[2]
            if self.chat_lines == lines_before:
                self._learn(v)
                if self.version == v:
                    self.seats = (seats[0], seats[1])
                    self.shots.update(shots)
            return shots[_seat_of((seats[0], seats[1]), player_id)]
        finally:
            self._done(done)

    @staticmethod
    def _copy(shot: _Shot, role: str | None) -> Copy:
        snapshot = shot.snapshot
        role = role or snapshot.you or "S"
        clock = snapshot.state.get("clock")
        elapsed_ms = int((time.monotonic() - shot.read_at) * 1000)
        moving = clock is not None and (clock.get("running") or clock.get("first_move_ms") is not None)
        if moving and elapsed_ms > 0:
            payload = snapshot.for_role(role)
            if payload is None:                 # a snapshot is for every role
                payload = snapshot.payload()
            payload = copy.copy(payload)
            payload["state"] = {**payload["state"], "clock": advanced_clock(clock, elapsed_ms)}
            return Copy(snapshot.you, events.encode(payload), payload["state"])
        text = shot.texts.get(role)
        payload = snapshot.for_role(role) or snapshot.payload()
        if text is None:
            text = shot.texts[role] = events.encode(payload)
        return Copy(snapshot.you, text, payload["state"])


def _seat_of(seats: tuple[str | None, str | None], player_id: str | None) -> str | None:
    """The seat letter ``player_id`` holds among ``seats`` (black's id, white's id), None for
    a spectator; black first, as :meth:`game.models.Game.seat_of` seats a player holding both."""
    if player_id and player_id == seats[0]:
        return "B"
    if player_id and player_id == seats[1]:
        return "W"
    return None
