"""Times during which game events could not be delivered, stored so that no clock charges them.

Game events travel through Redis (:mod:`game.round.fanout`).  While a server
process has lost its subscription to them, or holds events it could not
publish, some pages do not hear of moves: a player's turn may have begun
without the player knowing.  Such a time is an *outage window* of that process.
The database, which the moves need anyway, keeps every process's windows
(:class:`game.models.DeliveryOutage`), and every clock's verdict leaves their
union out of the time it charges (:attr:`game.clock.Clock.pauses`): a turn
is charged only for the time during which every process could deliver.  The
same goes for a live game's first move (30 s) and for the absence before a
claim (:mod:`game.round.claims`).

One :data:`tracker` per process.  :meth:`Tracker.begin` and :meth:`Tracker.end`
are called with a cause (``"subscription"``, ``"republish"``); the window is open
while any cause is.  They only note the time in memory (the process's own
verdicts credit it at once) and hand the write to a thread of the tracker, which
also renews the open window's ``seen_at`` every :data:`HEARTBEAT_S` seconds: a
process killed during an outage leaves a window that ends at its last sign of
life.  Other processes' windows are read from the database at most every
:data:`READ_EVERY_S` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
import uuid
from collections import Counter, deque
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


class Tracker:
    """The outage windows of this process and the other processes' (see the module docstring).

    ``instance`` names this process's run in the stored windows.
    """

    def __init__(self) -> None:
        self.instance = uuid.uuid4().hex
        self._lock = threading.Lock()
        self._causes: Counter[str] = Counter()
        self._local: list[list[datetime | None]] = []   # [start, end or None], this process's
        self._others: tuple[Pause, ...] = ()
        self._read_at = float("-inf")
        self._writes: queue.SimpleQueue[tuple[str, datetime]] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None

    @property
    def open(self) -> bool:
        """Whether this process has an outage window open now."""
        return bool(self._causes)

    def begin(self, cause: str) -> None:
        """One more reason (``cause``) for which this process cannot deliver events; the first one
        opens a window as of now.  Never blocks (the database write is the tracker's thread's)."""
        with self._lock:
            self._causes[cause] += 1
            if sum(self._causes.values()) == 1:
                start = timezone.now()
                self._local.append([start, None])
                self._write("open", start)

    def end(self, cause: str) -> None:
        """One reason ``cause`` is over (no error if there was none); when none is left the window
        ends now."""
        with self._lock:
            if self._causes[cause] <= 0:
                self._causes.pop(cause, None)
                return
            self._causes[cause] -= 1
            if not self._causes[cause]:
                del self._causes[cause]
            if not self._causes and self._local and self._local[-1][1] is None:
                end = timezone.now()
                self._local[-1][1] = end
                self._write("close", end)

    def pauses(self, read: bool = True) -> tuple[Pause, ...]:
        """Every window of the last :data:`KEEP_S` seconds, this process's and the others' (an open
        one with ``end`` None), for :class:`game.clock.Clock`.  With ``read``, reads the others'
        from the database first when due (at most every :data:`READ_EVERY_S` seconds); without it,
        or when it cannot (no database, or called on the event loop), the last ones read are used."""
        if read and self.due() and not _on_event_loop():
            self.read_others()
        if not self._local:
            return self._others      # the usual case, on every clock: no window of this process
        with self._lock:
            horizon = timezone.now() - timedelta(seconds=KEEP_S)
            self._local = [w for w in self._local if w[1] is None or w[1] >= horizon]
            local = tuple((start, end) for start, end in self._local if start is not None)
        return local + self._others

    def due(self) -> bool:
        """Whether the other processes' windows are due to be read again (the last read was
        :data:`READ_EVERY_S` seconds ago or more).  A caller on the event loop, where
        :meth:`pauses` does not read, reads them first in a thread (:meth:`read_others`)."""
        return time.monotonic() >= self._read_at + READ_EVERY_S

    def read_others(self) -> None:
        """Read the other processes' windows from the database now (the last ones read are kept
        when it cannot be read).  Not on the event loop."""
        self._read_at = time.monotonic()
        now = timezone.now()
        try:
            rows = list(DeliveryOutage.objects
                        .filter(Q(ended_at__isnull=True) | Q(ended_at__gte=now - timedelta(seconds=KEEP_S)))
                        .exclude(instance=self.instance)
                        .values_list("started_at", "seen_at", "ended_at"))
        except Exception as exc:  # noqa: BLE001 - no database here and now: the last windows read
            log.debug("outage windows not read: %s", exc)
            return
        stale = now - timedelta(seconds=HEARTBEAT_S * STALE_HEARTBEATS)
        others: list[Pause] = []
        for start, seen, end in rows:
            if end is None and seen < stale:
                end = seen + timedelta(seconds=HEARTBEAT_S)   # its process died during the outage
            others.append((start, end))
        self._others = tuple(others)

    def _write(self, op: str, at: datetime) -> None:
        self._writes.put((op, at))
        if self._writer is None or not self._writer.is_alive():
            self._writer = threading.Thread(target=self._write_loop, name="outage-windows", daemon=True)
            self._writer.start()

    def _write_loop(self) -> None:
        """The tracker's thread: stores the windows' openings, ends and heartbeats in order; what
        could not be stored (the database down too) is tried again at the next heartbeat."""
        row: int | None = None            # the stored window still open
        pending: deque[tuple[str, datetime]] = deque()
        while True:
            try:
                pending.append(self._writes.get(timeout=HEARTBEAT_S if (row or pending) else None))
            except queue.Empty:
                if not pending:
                    pending.append(("seen", timezone.now()))
            try:
                close_old_connections()
                while pending:
                    op, at = pending[0]
                    if op == "open":
                        row = DeliveryOutage.objects.create(instance=self.instance, started_at=at,
                                                            seen_at=at).pk
                        DeliveryOutage.objects.filter(ended_at__lt=at - timedelta(seconds=KEEP_S)).delete()
                    elif row is not None and op == "close":
                        DeliveryOutage.objects.filter(pk=row).update(ended_at=at, seen_at=at)
                        row = None
                    elif row is not None:
                        DeliveryOutage.objects.filter(pk=row).update(seen_at=timezone.now())
                    pending.popleft()
            except Exception as exc:  # noqa: BLE001 - the database is down too: try again at the next heartbeat
                log.warning("could not store an outage window: %s", exc)
            finally:
                connection.close()

    def reset(self) -> None:
        """Forget every window and cause (tests: each starts with none)."""
        with self._lock:
            self._causes.clear()
            self._local.clear()
            self._others = ()
            self._read_at = float("-inf")


def _on_event_loop() -> bool:
    """Whether the caller runs on an event loop (where the database is not read)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


#: This process's tracker.
tracker = Tracker()


def pauses() -> tuple[Pause, ...]:
    """:meth:`Tracker.pauses` of this process's :data:`tracker`."""
    return tracker.pauses()


def clock(game: Game, read: bool = True) -> Clock:
    """``game``'s :class:`~game.clock.Clock` as stored, charging nobody for the outage windows
    (:meth:`Tracker.pauses`; ``read``: the other processes' windows read first when due, as the
    actions do; without it, those last read, as an event's state does, which reads nothing)."""
    return Clock.of(game, tracker.pauses(read))
