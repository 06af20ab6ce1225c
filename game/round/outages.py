"""Times during which a game's events could not be delivered, stored so that no clock charges them.

Game events travel through Redis (:mod:`game.round.fanout`).  While a server process has lost
its subscription to some games' events, or holds a game's events it could not publish, some
pages do not hear of those games' moves: a player's turn may have begun without the player
knowing.  Such a time is an *outage window*, and it belongs to the games it touched: a lost
subscription's window to the games that line of the process reads (one shard's games on a Redis
Cluster, every game of the process on a single Redis), widened to any game that joins the line
while it is down; a failed publish's window to that one game.  The database keeps every
process's windows (:class:`game.models.DeliveryOutage`, the games in ``games``), and a clock's
verdict leaves out only the windows that touch its game and end after its turn began
(:attr:`game.clock.Clock.pauses`): a failover of one shard pauses that shard's games, not the
site's.  The same goes for a live game's first move (30 s) and for the absence before a claim
(:mod:`game.round.claims`).

One :data:`tracker` per process.  :meth:`Tracker.begin` opens a window (a cause, the games) and
:meth:`Tracker.end` closes it.  They only note the time in memory (the process's own verdicts
credit it at once) and hand the write to a thread of the tracker, which also renews each open
window's ``seen_at`` every :data:`HEARTBEAT_S` seconds: a process killed during an outage leaves a
window that ends at its last sign of life.  Other processes' windows are read from the database at
most every :data:`READ_EVERY_S` seconds, and only what changed since the last read (new windows,
open ones, those ended since), into an index by game.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import close_old_connections, connection
from django.db.models import Q
from django.utils import timezone

from game.clock import Clock, Pause
from game.models import DeliveryOutage, Game

log = logging.getLogger(__name__)

#: Seconds between two renewals of an open window's ``seen_at``.
HEARTBEAT_S = 5.0
#: Seconds between two reads of the other processes' windows.
READ_EVERY_S = 1.0
#: Seconds a window is kept after it ended: the longest turn (a correspondence move, 7 days) and a day.
KEEP_S = 8 * 86400
#: An open window whose process has not renewed it for this many heartbeats is a dead process's.
STALE_HEARTBEATS = 3
#: Seconds by which another process's clock may run behind ours: a window it ended that long
#: before our last read is read again.
SKEW_S = 60.0


@dataclass
class Window:
    """One outage window: ``start``, ``end`` (None while open), ``games`` (the ids it touches;
    None: every game, as the windows stored without games say)."""

    start: datetime
    end: datetime | None
    games: set[str] | None

    def touches(self, game_id: str, since: datetime | None) -> bool:
        """Whether this window can change the verdict of ``game_id``'s clock counted from ``since``."""
        return ((self.games is None or game_id in self.games)
                and (since is None or self.end is None or self.end >= since))

    @property
    def pause(self) -> Pause:
        return (self.start, self.end)


def games_text(games: set[str] | None) -> str:
    """``games`` as stored: ids separated by spaces (``""``: every game)."""
    return " ".join(sorted(games)) if games is not None else ""


class _Others:
    """The other processes' windows as last read, indexed by game: ``{row id: Window}``."""

    def __init__(self) -> None:
        self.rows: dict[int, Window] = {}
        self.by_game: dict[str, dict[int, Window]] = {}
        self.everywhere: dict[int, Window] = {}

    def put(self, pk: int, window: Window) -> None:
        self.drop(pk)
        self.rows[pk] = window
        if window.games is None:
            self.everywhere[pk] = window
        for game_id in window.games or ():
            self.by_game.setdefault(game_id, {})[pk] = window

    def drop(self, pk: int) -> None:
        old = self.rows.pop(pk, None)
        if old is None:
            return
        self.everywhere.pop(pk, None)
        for game_id in old.games or ():
            windows = self.by_game.get(game_id, {})
            windows.pop(pk, None)
            if not windows:
                self.by_game.pop(game_id, None)

    def of(self, game_id: str) -> Iterable[Window]:
        return itertools.chain(self.everywhere.values(), self.by_game.get(game_id, {}).values())


class Tracker:
    """The outage windows of this process and the other processes' (see the module docstring).

    ``instance`` names this process's run in the stored windows.
    """

    def __init__(self) -> None:
        self.instance = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._keys = itertools.count(1)
        self._local: dict[int, Window] = {}      # this process's, by key
        self._others = _Others()
        self._read_at = float("-inf")
        self._read_wall: datetime | None = None   # when the others were last read (None: never)
        self._last_pk = 0
        self._writes: queue.SimpleQueue[tuple[str, int, datetime, str]] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None

    @property
    def open(self) -> bool:
        """Whether this process has an outage window open now."""
        with self._lock:
            return any(w.end is None for w in self._local.values())

    def begin(self, cause: str, games: Iterable[str]) -> int:
        """Open a window as of now for ``games`` (ids) because of ``cause`` (``"subscription"``,
        ``"republish"``); returns its key for :meth:`widen` and :meth:`end`.  Never blocks (the
        database write is the tracker's thread's)."""
        start = timezone.now()
        window = Window(start, None, set(games))
        with self._lock:
            horizon = start - timedelta(seconds=KEEP_S)
            for key in [k for k, w in self._local.items() if w.end is not None and w.end < horizon]:
                del self._local[key]
            key = next(self._keys)
            self._local[key] = window
            self._write("open", key, start, games_text(window.games))
        log.debug("outage window %d opened (%s, %d games)", key, cause, len(window.games or ()))
        return key

    def widen(self, key: int, game_id: str) -> None:
        """The open window ``key`` touches ``game_id`` too (a game that joined the line while it is
        down); nothing if the window has ended or already has it."""
        with self._lock:
            window = self._local.get(key)
            if window is None or window.end is not None or window.games is None or game_id in window.games:
                return
            window.games.add(game_id)
            self._write("games", key, window.start, games_text(window.games))

    def end(self, key: int) -> None:
        """The window ``key`` ends now (nothing if it has ended already)."""
        with self._lock:
            window = self._local.get(key)
            if window is None or window.end is not None:
                return
            window.end = timezone.now()
            self._write("close", key, window.end, "")

    def pauses(self, game_id: str, since: datetime | None = None, read: bool = True) -> tuple[Pause, ...]:
        """The windows that touch ``game_id`` and end at ``since`` or later (None: whenever), this
        process's and the others' (an open one with ``end`` None), for :class:`game.clock.Clock`.
        With ``read``, reads the others' changes from the database first when due (at most every
        :data:`READ_EVERY_S` seconds); without it, or when it cannot (no database, or called on
        the event loop), the last ones read are used."""
        if read and self.due() and not _on_event_loop():
            self.read_others()
        with self._lock:    # the others are updated by whichever thread reads them
            found = [w.pause for w in self._others.of(game_id) if w.touches(game_id, since)]
            found += [w.pause for w in self._local.values() if w.touches(game_id, since)]
        return tuple(found)

    def due(self) -> bool:
        """Whether the other processes' windows are due to be read again (the last read was
        :data:`READ_EVERY_S` seconds ago or more).  A caller on the event loop, where
        :meth:`pauses` does not read, reads them first in a thread (:meth:`read_others`)."""
        return time.monotonic() >= self._read_at + READ_EVERY_S

    def read_others(self) -> None:
        """Read the other processes' windows that changed since the last read (all of the last
        :data:`KEEP_S` seconds the first time): new ones, open ones, those ended since.  The last
        ones read are kept when the database cannot be read.  Not on the event loop."""
        self._read_at = time.monotonic()
        now = timezone.now()
        horizon = now - timedelta(seconds=KEEP_S)
        if self._read_wall is None:
            changed = Q(ended_at__isnull=True) | Q(ended_at__gte=horizon)
        else:
            changed = (Q(pk__gt=self._last_pk) | Q(ended_at__isnull=True)
                       | Q(ended_at__gte=self._read_wall - timedelta(seconds=SKEW_S)))
        try:
            rows = list(DeliveryOutage.objects.filter(changed).exclude(instance=self.instance)
                        .values_list("pk", "started_at", "seen_at", "ended_at", "games"))
        except Exception as exc:  # noqa: BLE001 - no database here and now: the last windows read
            log.debug("outage windows not read: %s", exc)
            return
        stale = now - timedelta(seconds=HEARTBEAT_S * STALE_HEARTBEATS)
        with self._lock:
            self._read_wall = now
            for pk, start, seen, end, games in rows:
                if end is None and seen < stale:
                    end = seen + timedelta(seconds=HEARTBEAT_S)   # its process died during the outage
                self._others.put(pk, Window(start, end, set(games.split()) if games else None))
                self._last_pk = max(self._last_pk, pk)
            for pk in [pk for pk, w in self._others.rows.items() if w.end is not None and w.end < horizon]:
                self._others.drop(pk)

    def _write(self, op: str, key: int, at: datetime, games: str) -> None:
        self._writes.put((op, key, at, games))
        if self._writer is None or not self._writer.is_alive():
            self._writer = threading.Thread(target=self._write_loop, name="outage-windows", daemon=True)
            self._writer.start()

    def _write_loop(self) -> None:
        """The tracker's thread: stores the windows' openings, games, ends and heartbeats in order;
        what could not be stored (the database down too) is tried again at the next heartbeat."""
        rows: dict[int, int] = {}           # window key: its stored row, while open
        pending: deque[tuple[str, int, datetime, str]] = deque()
        while True:
            try:
                pending.append(self._writes.get(timeout=HEARTBEAT_S if (rows or pending) else None))
            except queue.Empty:
                if not pending:
                    pending.append(("seen", 0, timezone.now(), ""))
            try:
                close_old_connections()
                while pending:
                    self._store(rows, *pending[0])
                    pending.popleft()
            except Exception as exc:  # noqa: BLE001 - the database is down too: try again at the next heartbeat
                log.warning("could not store an outage window: %s", exc)
            finally:
                connection.close()

    def _store(self, rows: dict[int, int], op: str, key: int, at: datetime, games: str) -> None:
        """One write of :meth:`_write_loop` (``op``: open, games, close or seen)."""
        if op == "open":
            rows[key] = DeliveryOutage.objects.create(instance=self.instance, started_at=at, seen_at=at,
                                                      games=games).pk
            DeliveryOutage.objects.filter(ended_at__lt=at - timedelta(seconds=KEEP_S)).delete()
        elif op == "games" and key in rows:
            DeliveryOutage.objects.filter(pk=rows[key]).update(games=games)
        elif op == "close" and key in rows:
            DeliveryOutage.objects.filter(pk=rows.pop(key)).update(ended_at=at, seen_at=at)
        elif op == "seen" and rows:
            DeliveryOutage.objects.filter(pk__in=list(rows.values())).update(seen_at=timezone.now())

    def reset(self) -> None:
        """Forget every window (tests: each starts with none, and the others are read anew)."""
        with self._lock:
            self._local.clear()
            self._others = _Others()
            self._read_at = float("-inf")
            self._read_wall = None
            self._last_pk = 0


def _on_event_loop() -> bool:
    """Whether the caller runs on an event loop (where the database is not read)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


#: This process's tracker.
tracker = Tracker()


def pauses(game_id: str, since: datetime | None = None) -> tuple[Pause, ...]:
    """:meth:`Tracker.pauses` of this process's :data:`tracker`."""
    return tracker.pauses(game_id, since)


def clock(game: Game, read: bool = True) -> Clock:
    """``game``'s :class:`~game.clock.Clock` as stored, charging nobody for the outage windows that
    touch the game during its current turn (:meth:`Tracker.pauses`; ``read``: the other processes'
    windows read first when due, as the actions do; without it, those last read, as an event's
    state does, which reads nothing)."""
    return Clock.of(game, tracker.pauses(game.id, game.turn_started_at, read))
