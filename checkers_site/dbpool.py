"""Recovering the PostgreSQL connection pool quickly after the server dropped its connections.

The pool (``settings.DATABASES``, psycopg_pool through Django) hands out idle
connections without a round trip to test them (``CONN_HEALTH_CHECKS`` off): a
test per checkout costs every move a round trip, and when it fails psycopg_pool
waits with a back-off before trying the next idle connection, so after a
database restart or terminated backends each of up to ``DATABASE_POOL_SIZE``
dead connections cost a request seconds (12-15 s of failures a process).
Instead a dead connection fails its request at once, and :func:`sweep` (called
on such errors) tests every idle connection of the pool in the background,
replacing the dead ones, so the requests after it get live connections.
"""

from __future__ import annotations

import logging
import sys
import threading
import time

from django.db import InterfaceError, OperationalError, connections

log = logging.getLogger(__name__)

#: Seconds between two sweeps of a pool, whatever the number of errors.
SWEEP_EVERY_S = 1.0

_lock = threading.Lock()
_last_sweep = 0.0


def sweep(exc: BaseException | None = None, alias: str = "default") -> bool:
    """After ``exc`` (a connection-level database error: ``OperationalError`` or
    ``InterfaceError``; others are ignored), test the idle connections of ``alias``'s pool
    in a background thread, at most once every :data:`SWEEP_EVERY_S` seconds.

    Returns True when a sweep was started; False without a pool (SQLite) or for other errors.
    """
    global _last_sweep
    if exc is not None and not isinstance(exc, (OperationalError, InterfaceError)):
        return False
    pool = getattr(connections[alias], "pool", None)
    if pool is None:
        return False
    with _lock:
        now = time.monotonic()
        if now - _last_sweep < SWEEP_EVERY_S:
            return False
        _last_sweep = now
    threading.Thread(target=_check, args=(pool,), name="db-pool-sweep", daemon=True).start()
    return True


def _check(pool) -> None:
    try:
        pool.check()
    except Exception as exc:  # noqa: BLE001 - the database may still be down; the next error sweeps again
        log.warning("database pool check failed: %s", exc)


def on_request_exception(sender, request=None, **kwargs) -> None:
    """``got_request_exception`` receiver: a page request failed; sweep if the database was why."""
    sweep(sys.exc_info()[1])
