"""What every socket of the site shares: database threads, background tasks, one guard on messages.

The game socket (:mod:`game.round.socket`) and the lobby socket
(:mod:`game.lobby.socket`) both run their database work in one pool of
threads (:func:`in_db_thread`), start their fire-and-forget work with
:func:`in_background`, and pass each of their client's messages through a
:class:`Guard` kept on the socket: its own rate limit and the limits it shares
(:class:`SocketRateLimit`), the ``rate_limited`` notice, and the close of a
socket that floods.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, NamedTuple, ParamSpec, TypeVar

import limits
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, close_old_connections, connections
from django.utils.translation import gettext_lazy

from checkers_site import dbpool
from game.i18n import lazy_text

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

log = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

_db_executor: ThreadPoolExecutor | None = None
_db_threads = 0


def in_db_thread(func: Callable[P, R]) -> Callable[P, Coroutine[Any, Any, R]]:
    """``func`` as a coroutine function run in the pool of ``GAME_DB_THREADS`` database threads.

    Each action is one transaction of its own, so calls for different games
    (or sockets) run side by side, each thread with its own database
    connection, instead of queueing for the one thread that channels'
    ``database_sync_to_async`` uses by default; stale connections are closed
    before and after each call, as Django does around a request.  A
    ``DatabaseError`` is raised as it is, after asking
    :func:`checkers_site.dbpool.sweep` to test the pool's other idle connections.
    """
    global _db_executor, _db_threads
    if _db_executor is None:
        _db_threads = settings.GAME_DB_THREADS
        _db_executor = ThreadPoolExecutor(_db_threads, thread_name_prefix="game-db")

    @functools.wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        # Done here in the call itself: channels' DatabaseSyncToAsync did not close this
        # thread's connection when the database settings changed (tests/web/test_faults.py).
        close_old_connections()
        try:
            return func(*args, **kwargs)
        except DatabaseError as exc:
            dbpool.sweep(exc)  # a dropped connection: get the pool's other idle ones tested
            raise
        finally:
            close_old_connections()

    return sync_to_async(run, thread_sensitive=False, executor=_db_executor)


def close_db_connections() -> None:
    """Close the database connections of every thread of :func:`in_db_thread`'s pool and end the
    pool (the next call starts a new one): for tests, which change or drop the database."""
    global _db_executor
    executor, _db_executor = _db_executor, None
    if executor is None:
        return
    barrier = threading.Barrier(_db_threads, timeout=10)

    def close() -> None:
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()          # one task in each thread: none returns before all started
        connections.close_all()

    for future in [executor.submit(close) for _ in range(_db_threads)]:
        future.result()
    executor.shutdown(wait=True)


#: Tasks running on their own (the event loop keeps only weak references to tasks).
_background: set[asyncio.Task[Any]] = set()


def in_background(coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Run ``coroutine`` on its own in the running loop, kept referenced until it finishes;
    returns its task."""
    task = asyncio.get_running_loop().create_task(coroutine)
    _background.add(task)
    task.add_done_callback(_background.discard)
    return task


class SocketRateLimit:
    """Moving-window limits counted on one socket (a socket lives in one process).

    A message is allowed when, for every limit of N per T seconds, fewer than N
    allowed messages came in the last T seconds; only allowed messages count, so a
    burst refused by the per-second limit does not use up the per-minute one (a
    moving window, as limits' ``MovingWindowRateLimiter``).  Kept on the socket, so nothing is
    shared between sockets or threads, and nothing runs between messages
    (docs/performance/02-live-load.md).

    >>> limit = SocketRateLimit.parse("2/second")
    >>> limit.hit(now=0.0), limit.hit(now=0.1), limit.hit(now=0.2), limit.hit(now=1.05)
    (True, True, False, True)
    """

    def __init__(self, items: list[limits.RateLimitItem]):
        self.windows: list[tuple[int, int, deque[float]]] = [
            (item.amount, item.get_expiry(), deque()) for item in items]

    @classmethod
    def parse(cls, spec: str) -> SocketRateLimit:
        """A limiter for ``spec`` in the ``limits`` notation (``"30/second;600/minute"``).
        Raises ValueError for text that is no such notation."""
        return cls(_parsed(spec))

    def hit(self, now: float | None = None) -> bool:
        """One message now (``now``: monotonic seconds): True and counted when every limit
        allows it, False and not counted otherwise."""
        now = time.monotonic() if now is None else now
        for amount, expiry, times in self.windows:
            while times and times[0] <= now - expiry:
                times.popleft()
            if len(times) >= amount:
                return False
        for _, _, times in self.windows:
            times.append(now)
        return True


@functools.cache
def _parsed(spec: str) -> list[limits.RateLimitItem]:
    return limits.parse_many(spec)


class RateLimited:
    """A socket's limit on its client's messages plus the notice that says so, at most once a second.

    ``allow()`` counts one message and returns whether to handle it, and
    ``notify`` (when it returns True) tells the caller to send the client its
    ``rate_limited`` error now.
    """

    NOTICE_SPEC = "1/second"

    def __init__(self, spec: str):
        self.limit = SocketRateLimit.parse(spec)
        self.notices = SocketRateLimit.parse(self.NOTICE_SPEC)

    def allow(self, now: float | None = None) -> tuple[bool, bool]:
        """``(allowed, notify)`` for one message now (``now``: monotonic seconds)."""
        if self.limit.hit(now):
            return True, False
        return False, self.notices.hit(now)


#: The ``error`` a socket sends when its client is over its rate limit.
RATE_LIMITED = {"type": "error", "code": "rate_limited",
                "message": gettext_lazy("Too many messages; slow down.")}

#: A socket with more than this many messages refused for a rate limit within :data:`KICK_WINDOW_S`
#: seconds floods (pages send a few a second): its :class:`Guard` says to close it.
KICK_AFTER_REFUSED = 50
KICK_WINDOW_S = 10.0
#: The close code of a socket that floods: the code of "too many", on which the pages give up.
CLOSE_FLOODING = 4429


class Verdict(NamedTuple):
    """What a :class:`Guard` says of one message.

    ``allowed``: handle it (else drop it); ``notify``: send the client :data:`RATE_LIMITED` now
    (at most once a second); ``kick``: close the socket now with :data:`CLOSE_FLOODING` (said once;
    every later message is refused, without a notice).
    """

    allowed: bool
    notify: bool = False
    kick: bool = False


class Guard:
    """Every limit on one socket's client messages, and what to do when its client goes over them.

    ``spec``: the socket's own limit in the ``limits`` notation (``"20/second;240/minute"``;
    ValueError for text that is no such notation); ``session`` and ``address``: limits this socket
    shares with the other sockets of its session, and of its client address, in this process
    (None: none).  A message counts against the own limit first, then the session's, then the
    address's; one refused by a limit is not counted by the next ones, so a flood of one socket
    does not use up its session's rate.  More than ``kick_after`` messages refused within
    ``kick_window_s`` seconds is a flood: the socket is to be closed.  Kept on the socket, used
    from its event loop only.

    >>> guard = Guard("2/second", kick_after=2)
    >>> [tuple(guard.check(now=t)) for t in (0.0, 0.1, 0.2, 0.3)]  # (allowed, notify, kick)
    [(True, False, False), (True, False, False), (False, True, False), (False, False, False)]
    >>> tuple(guard.check(now=0.4)), tuple(guard.check(now=5.0))  # a third refused: a flood
    ((False, False, True), (False, False, False))
    """

    NOTICE_SPEC = "1/second"

    def __init__(self, spec: str, session: SocketRateLimit | None = None,
                 address: SocketRateLimit | None = None, *,
                 kick_after: int = KICK_AFTER_REFUSED, kick_window_s: float = KICK_WINDOW_S):
        shared = [limit for limit in (session, address) if limit is not None]
        self.limits = [SocketRateLimit.parse(spec), *shared]
        self.notices = SocketRateLimit.parse(self.NOTICE_SPEC)
        self.kick_after = kick_after
        self.kick_window_s = kick_window_s
        self.refused: deque[float] = deque()
        self.kicked = False

    @property
    def kick_reason(self) -> str:
        """The close reason of a socket kicked for flooding (the handshake log shows it)."""
        return f"over the message rate {self.kick_after} times in {self.kick_window_s:.0f} s"

    def check(self, now: float | None = None) -> Verdict:
        """Count one message of the client at ``now`` (monotonic seconds; None: now) and say what
        to do with it (:class:`Verdict`).  Once the guard has said ``kick``, every message is
        refused and counted nowhere."""
        now = time.monotonic() if now is None else now
        if self.kicked:
            return Verdict(False)
        if all(limit.hit(now) for limit in self.limits):
            return Verdict(True)
        self.refused.append(now)
        while self.refused[0] <= now - self.kick_window_s:
            self.refused.popleft()
        if len(self.refused) > self.kick_after:
            self.kicked = True
            return Verdict(False, kick=True)
        return Verdict(False, notify=self.notices.hit(now))

    async def admit(self, close: Callable[[int, str], Awaitable[None]], notify: Callable[[], Awaitable[None]],
                    now: float | None = None) -> bool:
        """:meth:`check` one message at ``now`` and do what the verdict says: ``close(code, reason)``
        the socket on a kick (no page sends like this), ``notify()`` its client that it is over
        the limit (a failure to, on a socket closing meanwhile, is logged).  Returns whether to
        handle the message."""
        allowed, notice, kick = self.check(now)
        if kick:
            await close(CLOSE_FLOODING, self.kick_reason)
        elif notice:
            try:
                await notify()
            except Exception as exc:  # noqa: BLE001 - the flooding client went away meanwhile
                log.debug("could not send rate_limited to a closing socket: %s", exc)
        return allowed


#: Largest text frame a socket accepts from a client, in bytes (UTF-8).
MAX_FRAME_BYTES = 2048


class ProtocolError(ValueError):
    """A frame that is not a valid client message.

    ``code`` is the machine-readable error code sent back to the client
    (``bad_message``, ``unknown_type``, ``too_large``), ``message`` the human text.
    """

    def __init__(self, code: str, message: str | StrPromise):
        super().__init__(message)
        self.code = code
        self.message = message


def storable(text: str) -> bool:
    """Whether ``text`` (a frame's field) may be compared with stored text: PostgreSQL refuses a NUL
    character, and a lone surrogate (which JSON lets through) has no UTF-8."""
    if "\x00" in text:
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def decode_frame(text: str | None, binary: bytes | None) -> dict[str, Any]:
    """Decode one websocket frame into a JSON object.

    Raises :class:`ProtocolError`: ``bad_message`` for binary frames, invalid
    JSON or a value that is not an object; ``too_large`` for a frame over
    :data:`MAX_FRAME_BYTES`.
    """
    if text is None:
        raise ProtocolError("bad_message", gettext_lazy("Binary frames are not accepted; send JSON text."))
    if len(text) > MAX_FRAME_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_FRAME_BYTES:
        raise ProtocolError("too_large", lazy_text(gettext_lazy("Frames are limited to %(bytes)s bytes."),
                                                   bytes=MAX_FRAME_BYTES))
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise ProtocolError("bad_message", gettext_lazy("The frame is not valid JSON.")) from None
    if not isinstance(data, dict):
        raise ProtocolError("bad_message", gettext_lazy("A message must be a JSON object with a 'type'."))
    return data
