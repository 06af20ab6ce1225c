"""Python's garbage collector in a server process: what is frozen, how often it runs, how long it stops.

CPython's cyclic collector stops the whole process while it runs, and a full
(generation 2) collection walks every tracked object: in a Daphne process with
thousands of open sockets, hundreds of milliseconds during which no move of any game
goes out (``docs/performance/03-third-round-pings.md``, "Garbage collection").  Two things shorten
it, both set when a server process starts (:func:`tune`, called by
``checkers_site.serve`` once the site is loaded and before the first
connection):

- ``gc.freeze()`` after a collection: the objects made while starting (Django,
  the URL routes, compiled code, the rules' tables) move to a permanent
  generation that collections no longer walk.  They live as long as the
  process anyway.
- Thresholds (``GC_THRESHOLDS``, default ``10000,10,10``; Python's own are
  ``700,10,10``): a young collection once 10,000 more tracked objects have been
  made than freed, not 700: far fewer full collections, each young one still
  short (the figures of both, and of larger thresholds: the page above).

Every collection's pause is measured (``gc.callbacks``) and shown on
``/metrics`` as ``checkers_gc_pause_seconds{generation}``.  The callback only
appends to a bounded queue, which a thread moves to the histogram every
second (:func:`flush`): a collection can start while prometheus_client holds
its (non-reentrant) lock, and the callback must then not take it.
"""

from __future__ import annotations

import collections
import gc
import logging
import threading
import time
from typing import Any

from checkers_site.ops import metrics

log = logging.getLogger(__name__)

#: Python's thresholds in a server process unless ``GC_THRESHOLDS`` says otherwise.
SERVER_THRESHOLDS = (10_000, 10, 10)
#: Seconds between two moves of the measured pauses to the histogram.
FLUSH_EVERY_S = 1.0

_started: list[float] = []
#: Pauses measured and not yet in the histogram: ``(generation, seconds)``, the oldest dropped
#: beyond 10,000.
_pauses: collections.deque[tuple[int, float]] = collections.deque(maxlen=10_000)
_tuned = False


def parse_thresholds(text: str) -> tuple[int, int, int]:
    """``"10000,10,10"`` -> ``(10000, 10, 10)``: generation 0's allocations, then how many
    collections of the generation below make one of generations 1 and 2.  ``""`` is
    :data:`SERVER_THRESHOLDS`.  Raises ValueError for anything but three integers, the first
    positive and the others at least 1.

    >>> parse_thresholds("700, 10, 10"), parse_thresholds("")
    ((700, 10, 10), (10000, 10, 10))
    """
    if not text.strip():
        return SERVER_THRESHOLDS
    parts = [int(part) for part in text.split(",")]
    if len(parts) != 3 or parts[0] < 1 or min(parts[1:]) < 1:
        raise ValueError(f"GC_THRESHOLDS needs three integers, the first > 0, the others >= 1: {text!r}")
    return parts[0], parts[1], parts[2]


def _timed(phase: str, info: dict[str, Any]) -> None:
    """``gc.callbacks`` hook: the pause of each collection, by generation, queued for
    :func:`flush` (no lock taken, nothing but a tuple made)."""
    if phase == "start":
        _started.append(time.perf_counter())
    elif _started:
        began = _started.pop()
        _pauses.append((info.get("generation", -1), time.perf_counter() - began))


def flush() -> int:
    """Move the pauses measured so far to ``checkers_gc_pause_seconds``; returns how many."""
    moved = 0
    while _pauses:
        generation, seconds = _pauses.popleft()
        metrics.gc_pause.labels(str(generation)).observe(seconds)
        moved += 1
    return moved


def _flushing() -> None:
    while True:
        time.sleep(FLUSH_EVERY_S)
        try:
            flush()
        except Exception:  # the measurements are a convenience: never the end of them
            log.exception("could not record the garbage collector's pauses")


def tune(thresholds: str = "", freeze: bool = True) -> bool:
    """Once per server process, after the site is loaded: measure every collection's pause, set
    the collector's ``thresholds`` (:func:`parse_thresholds`) and, with ``freeze``, collect once
    and freeze what is left (``gc.freeze()``).  Returns False when it had run already.  Raises
    ValueError for bad thresholds."""
    global _tuned
    if _tuned:
        return False
    values = parse_thresholds(thresholds)
    _tuned = True
    gc.callbacks.append(_timed)
    threading.Thread(target=_flushing, name="gc-pauses", daemon=True).start()
    if freeze:
        gc.collect()
        gc.freeze()
    gc.set_threshold(*values)
    return True
