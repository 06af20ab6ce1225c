"""The snapshots of this process's games, kept per (game, version, seat): a ``sync`` that finds
nothing changed, or a socket opening on a game nothing happened in, costs no database read.

Each server process's hub (:mod:`game.round.fanout`) sees every event of every game that has
a socket in this process, and tells its :class:`SnapshotCache` (:meth:`SnapshotCache.saw`): a
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
live game's first-move window, run between two events).  The cache of a game goes when its last
socket in the process leaves, and all of it when the hub subscribes again (events may have been
missed).  Everything here runs on the event loop; the database reads run in
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


@dataclass
class _Game:
    version: int = -1                   # the newest version seen (-1: none yet)
    confirmed: float = float("-inf")    # monotonic s when the database or an event last showed it
    seats: tuple[str | None, str | None] | None = None  # the seats' player ids at ``version``
    shots: dict[str | None, _Shot] = field(default_factory=dict)   # by the viewer's seat
    chat_lines: int = 0     # chat lines seen: a read that began before one is not kept
    loading: asyncio.Future[None] | None = None     # a read under way

    def drop_shots(self) -> None:
        self.shots.clear()


def advanced_clock(clock: dict[str, Any] | None, elapsed_ms: int) -> dict[str, Any] | None:
    """A snapshot's public clocks (:class:`game.round.clock.ClockState`) ``elapsed_ms`` ms later,
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


class SnapshotCache:
    """The snapshots of one process's games (see the module docstring)."""

    def __init__(self) -> None:
        self.games: dict[str, _Game] = {}
        #: Database reads made (snapshots, versions): for the tests and the curious.
        self.reads = 0

    # -- what the hub tells it

    def saw(self, game_id: str, copies: list[tuple[str, str]]) -> None:
        """An event of ``game_id`` came through the hub (its copies as published)."""
        entry = self.games.get(game_id)
        if entry is None:
            return
        try:
            v, notice = version_of(copies)
        except ValueError:
            entry.version, entry.confirmed = -1, float("-inf")
            entry.drop_shots()
            return
        if v is None:
            if not notice:
                entry.chat_lines += 1
                entry.drop_shots()      # a chat line: the snapshots' chat history is behind
            return
        self._learn(entry, v)

    def forget(self, game_id: str) -> None:
        """The game's last socket in this process left."""
        self.games.pop(game_id, None)

    def clear(self) -> None:
        """Events may have been missed (the hub subscribed again): trust nothing kept."""
        self.games.clear()

    # -- what the sockets ask

    async def version(self, game_id: str) -> int | None:
        """The game's version: the one kept while fresh, else read (one indexed read, one at a time
        per game).  None when there is no such game.  Raises ``DatabaseError``."""
        for _attempt in range(3):
            entry = self.games.setdefault(game_id, _Game())
            if self._fresh(entry):
                return entry.version
            if entry.loading is None:
                break
            await asyncio.shield(entry.loading)     # a read under way: then look again
        entry = self.games.setdefault(game_id, _Game())
        done = entry.loading = asyncio.get_running_loop().create_future()
        try:
            self.reads += 1
            v = await in_db_thread(reads.version)(game_id)
            if v is None:
                if self.games.get(game_id) is entry:
                    del self.games[game_id]
                return None
            if self.games.get(game_id) is entry:
                self._learn(entry, v)
            return v
        finally:
            self._done(entry, done)

    async def copy(self, game_id: str, player_id: str | None, role: str | None = None) -> Copy:
        """``player_id``'s snapshot of ``game_id`` encoded for a socket of ``role`` (None: the
        viewer's own seat, or ``"S"``): from the cache when it is fresh and at least as new as any
        event of the game seen so far, else read (one read at a time per game; sockets asking
        meanwhile wait for it and look again).

        Raises what :func:`game.round.reads.snapshot` raises (``ActionError`` ``no_such_game``,
        ``DatabaseError``).
        """
        floor = self.games.setdefault(game_id, _Game()).version   # no event before this call is newer
        for _attempt in range(3):
            entry = self.games.setdefault(game_id, _Game())
            if self._fresh(entry) and entry.seats is not None:
                shot = entry.shots.get(self._seat(entry, player_id))
                if shot is not None and shot.snapshot.v >= entry.version:
                    return self._copy(shot, role)
            if entry.loading is None:
                break
            await asyncio.shield(entry.loading)
        shot = await self._read(game_id, self.games.setdefault(game_id, _Game()), player_id)
        if shot.snapshot.v < floor:     # read before an event this socket was sent: read again
            shot = await self._read(game_id, self.games.setdefault(game_id, _Game()), player_id)
        return self._copy(shot, role)

    # -- inside

    def _learn(self, entry: _Game, v: int) -> None:
        if v > entry.version:
            entry.version, entry.seats = v, None
            entry.drop_shots()
        if v >= entry.version:
            entry.confirmed = time.monotonic()

    @staticmethod
    def _fresh(entry: _Game) -> bool:
        return entry.version >= 0 and time.monotonic() - entry.confirmed < FRESH_S

    @staticmethod
    def _seat(entry: _Game, player_id: str | None) -> str | None:
        return _seat_of(entry.seats or ("", ""), player_id)

    def _done(self, entry: _Game, done: asyncio.Future[None]) -> None:
        if entry.loading is done:
            entry.loading = None
        done.set_result(None)

    async def _read(self, game_id: str, entry: _Game, player_id: str | None) -> _Shot:
        """Read every seat's snapshot of the game in one go (:func:`game.round.reads.seat_snapshots`),
        keep them when they are the newest version, and return ``player_id``'s."""
        done = entry.loading = asyncio.get_running_loop().create_future()
        try:
            self.reads += 1
            lines_before = entry.chat_lines
            found, seats = await in_db_thread(reads.seat_snapshots)(game_id)
            read_at = time.monotonic()
            shots = {seat: _Shot(snapshot, read_at) for seat, snapshot in found.items()}
            # A chat line seen meanwhile leaves the version alone but may be missing from this read.
            v = seats[2]
            if self.games.get(game_id) is entry and entry.chat_lines == lines_before:
                self._learn(entry, v)
                if entry.version == v:
                    entry.seats = (seats[0], seats[1])
                    entry.shots.update(shots)
            return shots[_seat_of((seats[0], seats[1]), player_id)]
        except BaseException:
            if self.games.get(game_id) is entry and entry.version < 0:
                del self.games[game_id]
            raise
        finally:
            self._done(entry, done)

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
