"""How many websocket handshakes one server process works on at once, and what it answers when a
burst is more than it can open in time.

Every socket's handshake runs the site's checks before the socket is accepted (its origin, its
session, its count against the socket limits, joining its game's events, its snapshot read):
several Redis commands and a database read each.  A burst of thousands at once (a server process
restarted, a shard's failover reconnecting every page) started them all together: every pool of
Redis connections ran dry (each caller then waits up to 2 s for one, and fails), the event loop
took each reply late, and handshakes that took longer than Daphne's handshake timeout
(``--websocket_connect_timeout``) were dropped by the server with no HTTP answer at all: the page
saw a failed connection, and the socket limits and presence lost updates on the way.

:class:`ConnectGate` is an ASGI middleware that lets :data:`HANDSHAKES_AT_ONCE` handshakes run at
a time in the process (``WEBSOCKET_HANDSHAKES_AT_ONCE``); the others wait their turn, first come
first served, before any of their work starts.  A handshake's turn ends when the application
accepts or closes the socket (or ends).  One that has waited :data:`SHED_AFTER_S` seconds
(``WEBSOCKET_SHED_AFTER_S``, well under the handshake timeout) is shed: accepted and closed at
once with ``4503`` ("unavailable: busy"), which the page answers by reconnecting with back-off
(``static/js/socket.js``), instead of a connection dropped unanswered.  Sockets already open and
their games are not slowed by the queue: they never pass through it again.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from django.conf import settings

from checkers_site.ops import metrics

#: The close code and reason of a shed handshake (the page's "unavailable": it retries with back-off).
CLOSE_BUSY = 4503
BUSY_REASON = "busy: too many sockets opening at once, try again"


class Turns:
    """At most ``limit`` turns at a time, given first come first served; a waiter not given one
    within its wait is told so.  No ``wait_for`` around a semaphore: a turn given as the wait ran
    out would be lost for good (the semaphore's count down one each time)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.running = 0
        self.waiting: collections.deque[asyncio.Future[bool]] = collections.deque()

    async def take(self, wait_s: float) -> bool:
        """Wait up to ``wait_s`` seconds for a turn: True with one (to :meth:`give_back`), False without."""
        if self.running < self.limit and not self.waiting:
            self.running += 1
            return True
        loop = asyncio.get_running_loop()
        turn: asyncio.Future[bool] = loop.create_future()
        self.waiting.append(turn)

        def too_late() -> None:
            if not turn.done():
                turn.set_result(False)

        timer = loop.call_later(wait_s, too_late)
        try:
            return await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled() and turn.result():
                self.give_back()     # given as its task was cancelled: the next one's
            raise
        finally:
            timer.cancel()

    def give_back(self) -> None:
        """End a turn: the first waiter still waiting gets it."""
        self.running -= 1
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                self.running += 1
                turn.set_result(True)
                return


class ConnectGate:
    """ASGI middleware around the websocket application (see the module docstring).  HTTP and
    every other scope pass straight through."""

    def __init__(self, application: Any):
        self.application = application
        self._turns: Turns | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def turns(self) -> Turns:
        """The turns of this event loop (a server has one loop; each test has its own)."""
        loop = asyncio.get_running_loop()
        if self._turns is None or self._loop is not loop:
            self._turns, self._loop = Turns(settings.WEBSOCKET_HANDSHAKES_AT_ONCE), loop
        return self._turns

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            return await self.application(scope, receive, send)
        turns = self.turns()
        if not await turns.take(settings.WEBSOCKET_SHED_AFTER_S):
            return await self._shed(scope, receive, send)
        held = True

        def give_back() -> None:
            nonlocal held
            if held:
                held = False
                turns.give_back()

        async def watching(message: dict[str, Any]) -> None:
            if message["type"] in ("websocket.accept", "websocket.close"):
                give_back()        # the handshake is over: the next one's turn
            await send(message)

        try:
            return await self.application(scope, receive, watching)
        finally:
            give_back()

    @staticmethod
    async def _shed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Answer a handshake that waited too long: accepted, then closed with :data:`CLOSE_BUSY`."""
        metrics.handshakes_shed.inc()
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.close", "code": CLOSE_BUSY, "reason": BUSY_REASON})
