"""PostgreSQL connections of a server process's event loop, for statements sent without a thread.

Django's database calls run in threads (:func:`game.sockets.in_db_thread`): the hand-off to a
thread and back, the pool check-out and Django's cursor wrapping cost a Daphne process more CPU
than a short statement does.  The one statement of a kept-row move
(:func:`game.round.store.move_if_unchanged_on_loop`) is sent from the event loop instead, on
psycopg's asyncio connection: autocommit, parameters bound by the server, and the statement
prepared once it has been sent a few times (:data:`PREPARE_AFTER`).

Each event loop has its own few connections, opened on first use with the database settings
Django's connections use (same database, user, options).  :func:`borrowed` lends an idle one, or
opens one while fewer than :data:`MOST` are open, or waits up to :data:`WAIT_S` for one to be
given back; failing that, or while the database could not be reached in the last
:data:`RETRY_CONNECT_S` seconds, it lends nothing and the caller takes the database-thread way.
A connection that fails is closed, never lent again.  Only PostgreSQL (:func:`available`).

Not psycopg_pool's ``AsyncConnectionPool`` (which Django's own pool is the threaded sibling of):
its workers and its ``close()`` belong to the loop that opened it, while tests end their loops
and must close every connection from outside one (:func:`close_all`), and a move must fall back
at once rather than wait out a pool's reconnection back-off.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator
from typing import Any

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections

log = logging.getLogger(__name__)

#: Connections one event loop keeps open at most.
MOST = 4
#: Seconds a statement waits for a connection while all :data:`MOST` are lent, before it takes
#: the database-thread way.
WAIT_S = 0.5
#: Seconds after a failed connect before another is tried.
RETRY_CONNECT_S = 1.0
#: Sends of a statement on a connection before it is prepared there (psycopg's ``prepare_threshold``).
PREPARE_AFTER = 2


class _Loop:
    """The connections of one event loop: the idle ones and how many are open."""

    def __init__(self, params: dict[str, Any]):
        self.params = params
        self.idle: list[psycopg.AsyncConnection[Any]] = []
        self.open = 0
        self.failed_at = -RETRY_CONNECT_S
        self.closed = False
        self.waiters: collections.deque[asyncio.Future[psycopg.AsyncConnection[Any] | None]] = collections.deque()

    async def take(self) -> psycopg.AsyncConnection[Any] | None:
        deadline = time.monotonic() + WAIT_S
        while True:
            while self.idle:
                conn = self.idle.pop()
                if not conn.closed:
                    return conn
                self.open -= 1
            if time.monotonic() - self.failed_at < RETRY_CONNECT_S:
                return None
            if self.open < MOST:
                return await self._connect()
            # All lent: the first given back is this one's (a statement takes a millisecond or so).
            handed = await self._wait(deadline - time.monotonic())
            if handed is not None or time.monotonic() >= deadline:
                return handed

    async def _connect(self) -> psycopg.AsyncConnection[Any] | None:
        self.open += 1
        try:
            return await psycopg.AsyncConnection.connect(**self.params)
        except BaseException as exc:
            self.open -= 1
            if not isinstance(exc, (psycopg.Error, OSError)):
                raise
            self.failed_at = time.monotonic()
            log.warning("the event loop could not connect to the database: %s", exc)
            return None

    async def _wait(self, timeout_s: float) -> psycopg.AsyncConnection[Any] | None:
        """The next connection given back within ``timeout_s`` (None: none came, or one was
        closed and another may be opened)."""
        waiter: asyncio.Future[psycopg.AsyncConnection[Any] | None] = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        try:
            return await asyncio.wait_for(waiter, max(timeout_s, 0.0))
        except TimeoutError:
            return None
        except asyncio.CancelledError:
            handed = waiter.result() if waiter.done() and not waiter.cancelled() else None
            if handed is not None:
                self.give_back(handed, False)   # handed over just as this one was cancelled
            raise

    def give_back(self, conn: psycopg.AsyncConnection[Any], failed: bool) -> None:
        if failed or self.closed or conn.closed or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            self.open -= 1
            _close(conn)
            self._wake(None)      # a waiter may open a connection of its own now
            return
        if not self._wake(conn):
            self.idle.append(conn)

    def _wake(self, conn: psycopg.AsyncConnection[Any] | None) -> bool:
        """Hand ``conn`` to the first waiter still waiting (None: tell it to try again); whether
        one took it."""
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return True
        return False

    def close(self) -> None:
        self.closed = True
        for conn in self.idle:
            _close(conn)
        self.idle.clear()
        self.open = 0


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Loop] = weakref.WeakKeyDictionary()


def available() -> bool:
    """Whether the site's database takes statements from the event loop (PostgreSQL)."""
    return connections[DEFAULT_DB_ALIAS].vendor == "postgresql"


def _params() -> dict[str, Any]:
    """psycopg's connect arguments of the default database, as Django's connections use them
    (without Django's cursor class, which is for its threads), in autocommit."""
    params = connections[DEFAULT_DB_ALIAS].get_connection_params()
    params.pop("cursor_factory", None)
    params.update(autocommit=True, prepare_threshold=PREPARE_AFTER)
    return params


@contextlib.asynccontextmanager
async def borrowed() -> AsyncIterator[psycopg.AsyncConnection[Any] | None]:
    """A connection of the running event loop for the ``async with`` block (None: none to lend;
    take the database-thread way).  A ``psycopg.Error`` raised in the block closes the connection;
    it is raised on."""
    loop = asyncio.get_running_loop()
    pool = _loops.get(loop)
    if pool is None:
        pool = _loops[loop] = _Loop(_params())
    conn = await pool.take()
    if conn is None:
        yield None
        return
    failed = True
    try:
        yield conn
        failed = False
    except BaseException as exc:
        # A statement the server refused (a held row, a ply stored already) leaves the connection
        # fit; a lost connection or a cancelled wait does not.
        failed = _unfit_after(exc)
        raise
    finally:
        pool.give_back(conn, failed)


def _unfit_after(exc: BaseException) -> bool:
    """Whether a connection is unfit to lend again after ``exc`` was raised while it was lent
    (one left in the middle of a statement is caught by :meth:`_Loop.give_back`)."""
    if not isinstance(exc, Exception):      # cancelled, perhaps while a statement was on its way
        return True
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return False
    return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))


def _close(conn: psycopg.AsyncConnection[Any]) -> None:
    # libpq's own close: no round trip to await, so it may be called from any thread.
    with contextlib.suppress(Exception):
        conn.pgconn.finish()


def close_all() -> None:
    """Close every event loop's idle connections and forget them all (connections lent now are
    closed when given back): for tests, which change or drop the database."""
    for pool in list(_loops.values()):
        pool.close()
    _loops.clear()
