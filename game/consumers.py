"""The game socket: a thin adapter between websocket frames and :mod:`game.services`.

One socket per open game page at ``/ws/game/<id>/``.  On connect it sends a
``snapshot``; then every committed event of the game, through the process's
:class:`game.fanout.Hub` (not the channel layer: these sockets have no channel).
Each client frame is parsed at the edge (:mod:`game.protocol`), handed to one
service call off the event loop, and any refusal is answered with an
``error`` to this socket only.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
import time
import uuid
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import limits
from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.consumer import get_handler_name
from django.conf import settings
from django.db import DatabaseError, close_old_connections, connections

from checkers_site import dbpool
from game import computer, computer_play, fanout, presence, services
from game.broadcast import publish
from game.protocol import (
    Action,
    ClockCheck,
    Ping,
    PlayMove,
    ProtocolError,
    Sync,
    decode_frame,
    parse_client_message,
)

log = logging.getLogger(__name__)

#: The service carrying out each field-less action (see ``docs/protocol.md``).
ACTION_SERVICES = {
    "draw_offer": services.offer_draw,
    "draw_accept": lambda game_id, player_id: services.answer_draw(game_id, player_id, accept=True),
    "draw_decline": lambda game_id, player_id: services.answer_draw(game_id, player_id, accept=False),
    "resign": services.resign,
    "abort": services.abort,
    "rematch_offer": services.offer_rematch,
    "rematch_accept": services.offer_rematch,
    "rematch_decline": services.decline_rematch,
    "claim_win": lambda game_id, player_id: services.claim(game_id, player_id, draw=False),
    "claim_draw": lambda game_id, player_id: services.claim(game_id, player_id, draw=True),
}

#: Close code sent when the game in the URL does not exist.
CLOSE_NO_SUCH_GAME = 4404
#: Close code sent when the game's events cannot be followed (Redis unreachable): reconnect.
CLOSE_UNAVAILABLE = 4503
#: A ``clock_check`` this many seconds before the server's own deadline is honoured (the page's
#: countdown may run a little ahead).
CLOCK_CHECK_LEAD_S = 1.0
#: A player's socket checks the clock this long after the side to move should run out.
CLOCK_TIMER_SLACK_S = 0.05

NOTICE_LIMIT = limits.parse("1/second")


class SocketRateLimit:
    """Moving-window limits counted on one socket (a socket lives in one process).

    A message is allowed when, for every limit of N per T seconds, fewer than N
    allowed messages came in the last T seconds; only allowed messages count, so a
    burst refused by the per-second limit does not use up the per-minute one (a
    moving window, as limits' ``MovingWindowRateLimiter``).  Kept on the socket, so nothing is
    shared between sockets or threads: limits' ``MemoryStorage`` started a thread
    every 10 ms under traffic that walked every socket's keys (5 % of a process's
    CPU with 60 sockets, and growing with the number of sockets).
    """

    def __init__(self, items: list[limits.RateLimitItem]):
        self.windows = [(item.amount, item.get_expiry(), deque()) for item in items]

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


_db_executor: ThreadPoolExecutor | None = None
_db_threads = 0


def in_db_thread(func):
    """``func`` as a coroutine function run in the pool of ``GAME_DB_THREADS`` database threads.

    Each service call is one transaction of its own, so calls for different
    games (or sockets) run side by side, each thread with its own database
    connection, instead of queueing for the one thread that channels'
    ``database_sync_to_async`` uses by default; stale connections are closed
    as channels does.
    """
    global _db_executor, _db_threads
    if _db_executor is None:
        _db_threads = settings.GAME_DB_THREADS
        _db_executor = ThreadPoolExecutor(_db_threads, thread_name_prefix="game-db")

    @functools.wraps(func)
    def run(*args, **kwargs):
        # As Django does around a request: drop a connection that failed or outlived
        # CONN_MAX_AGE (done here in the call itself; channels' DatabaseSyncToAsync did not
        # close this thread's connection when the database settings changed, tests/web/test_faults.py).
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

    def close():
        try:
            barrier.wait()          # one task in each thread: none returns before all started
        except threading.BrokenBarrierError:
            pass
        connections.close_all()

    for future in [executor.submit(close) for _ in range(_db_threads)]:
        future.result()
    executor.shutdown(wait=True)


@functools.cache
def rate_limits(spec: str) -> list[limits.RateLimitItem]:
    """The parsed ``GAME_SOCKET_RATE_LIMIT`` (default 30 a second and 600 a minute per socket)."""
    return limits.parse_many(spec)


#: Tasks running on their own (kept referenced until they finish).
_background: set[asyncio.Task] = set()


def in_background(coroutine) -> asyncio.Task:
    """Run ``coroutine`` on its own, kept referenced until it finishes; returns its task."""
    task = asyncio.get_running_loop().create_task(coroutine)
    _background.add(task)
    task.add_done_callback(_background.discard)
    return task

#: Seconds after which events whose publish failed are published again (until one succeeds).
REPUBLISH_AFTER_S = (0.5, 2.0, 5.0)


async def republish(game_id: str, events: list[dict]) -> None:
    """Publish again, a few times, ``events`` whose publish failed (the mover has them already).

    Without this the game's other sockets would wait for a next event to notice the gap, and
    the next event is the opponent's move, which waits for this one.  Events carry ``v``: a
    socket that gets one twice ignores the second.
    """
    for delay in REPUBLISH_AFTER_S:
        await asyncio.sleep(delay)
        if await publish(game_id, events):
            return


#: Seconds between two ``audience`` notices of one game from one process.
AUDIENCE_EVERY_S = 1.0
_audience_pending: dict[str, asyncio.Task] = {}


async def _announce_later(game_id: str) -> None:
    try:
        await asyncio.sleep(AUDIENCE_EVERY_S)
        del _audience_pending[game_id]  # a change from now on schedules the next notice
        audience = await presence.audience(game_id)
        # The game's version rides along: a page behind it missed an event (one whose publish
        # died with its server process, say) and asks for a snapshot.
        game_v = await in_db_thread(services.version)(game_id)
        await fanout.hub().publish(game_id, [fanout.encode({"type": "audience", **audience, "game_v": game_v})])
    except Exception as exc:  # noqa: BLE001 - a notice is a convenience; never fatal
        _audience_pending.pop(game_id, None)
        log.warning("could not announce the audience of %s: %s", game_id, exc)


class GameConsumer(AsyncJsonWebsocketConsumer):
    """Websocket consumer for one viewer (player or spectator) of one game.

    A :class:`game.fanout.Member` of its game in the process's hub from
    before its snapshot is read until it closes; ``channel_name`` is a random
    id naming the socket in :mod:`game.presence`.
    """

    #: No channel-layer channel: game events come through :mod:`game.fanout`.
    channel_layer_alias = None
    limit: SocketRateLimit | None = None
    #: Events from the hub held while a snapshot is read and sent (None when none is).
    held: list | None = None
    deadline: float | None = None
    timer: asyncio.Task | None = None
    joined = False
    entering: asyncio.Task | None = None

    async def connect(self):
        self.game_id = self.scope["url_route"]["kwargs"]["game_id"]
        self.channel_name = uuid.uuid4().hex
        session = self.scope.get("session")
        self.player_id = session.get("player_id") if session is not None else None
        self.snapshot_lock = asyncio.Lock()
        async with self.holding_events():
            try:
                # Joined first: every event committed after the snapshot is read reaches this socket.
                await fanout.hub().join(self.game_id, self)
                self.joined = True
                snapshot = await in_db_thread(services.snapshot)(self.game_id, self.player_id)
            except (services.ActionError, fanout.Unavailable, DatabaseError) as exc:
                if isinstance(exc, DatabaseError):
                    log.error("database unavailable for game %s: %s", self.game_id, exc)
                # Accepted first: a handshake refused before accept reaches the page as a plain
                # failure (HTTP 403), and the page would keep reconnecting instead of giving up.
                await self.accept()
                await self.close(code=CLOSE_NO_SUCH_GAME if isinstance(exc, services.ActionError)
                                 else CLOSE_UNAVAILABLE)
                return
            self.role = snapshot["you"] or "S"
            self.computer = computer.has_computer(snapshot["state"])
            await self.accept()
            await self.send_state(snapshot)
        # In the background: a burst of sockets connecting must not hold up their first moves.
        self.entering = in_background(presence.refresh(self.game_id, self.channel_name, self.role))
        self.announce()
        if self.computer:
            computer_play.wake(self.game_id)  # resumes the computer's turn after a restart or reconnect

    async def dispatch(self, message):
        """Run the handler of ``message``, without the ``aclose_old_connections()`` that channels
        runs before each one: that is a hop to its single sync thread for every frame, and this
        consumer touches the database only through :func:`in_db_thread`, which closes stale
        connections itself."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def disconnect(self, code):
        if self.timer:
            self.timer.cancel()
        if self.joined:
            fanout.hub().leave(self.game_id, self)
        if hasattr(self, "role"):
            if self.entering is not None and not self.entering.done():
                await asyncio.wait([self.entering])  # the entry is written before it is removed
            await presence.leave(self.game_id, self.channel_name, self.role)
            self.announce()

    def announce(self) -> None:
        """Soon tell every socket of the game who is watching (``{"type": "audience", ...}``,
        unversioned): at most one notice per game and process every :data:`AUDIENCE_EVERY_S`
        seconds, however many sockets come and go, so a crowd joining costs O(sockets), not
        O(sockets²)."""
        if self.game_id not in _audience_pending:
            _audience_pending[self.game_id] = asyncio.get_running_loop().create_task(
                _announce_later(self.game_id))

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        if not await self.within_rate_limit():
            return
        try:
            message = parse_client_message(decode_frame(text_data, bytes_data))
        except ProtocolError as exc:
            await self.send_json({"type": "error", "code": exc.code, "message": exc.message})
            return
        try:
            if self.deadline is not None and time.monotonic() >= self.deadline \
                    and not isinstance(message, PlayMove):
                await self.check_clock()
            await self.handle(message)
        except services.ActionError as exc:
            await self.send_json(exc.as_event())
            if exc.code in ("stale", "bad_version"):
                await self.send_snapshot()
        except DatabaseError as exc:
            log.error("database unavailable for game %s: %s", self.game_id, exc)
            await self.send_json({"type": "error", "code": "unavailable",
                                  "message": "The server cannot reach its database right now; "
                                             "nothing was changed. Try again in a moment."})
        finally:
            if self.computer:
                computer_play.wake(self.game_id)  # the computer's reply, off the event loop

    async def within_rate_limit(self) -> bool:
        """Count one message of this socket; False (after telling the client, at most once a second) when over."""
        if self.limit is None:
            self.limit = SocketRateLimit(rate_limits(settings.GAME_SOCKET_RATE_LIMIT))
            self.notices = SocketRateLimit([NOTICE_LIMIT])
        allowed = self.limit.hit()
        if not allowed and self.notices.hit():
            await self.send_json({"type": "error", "code": "rate_limited",
                                  "message": "Too many messages; slow down."})
        return allowed

    async def handle(self, message):
        """Carry out one parsed client message."""
        if self.role == "S" and isinstance(message, (PlayMove, Action)):
            await self.check_seated(message)
        if isinstance(message, Ping):
            # In the background: a slow Redis must not hold up this socket's next move.
            in_background(presence.refresh(self.game_id, self.channel_name, self.role))
            await self.send_json({"type": "pong"})
        elif isinstance(message, Sync):
            await self.send_snapshot()
        elif isinstance(message, PlayMove):
            outcome = await in_db_thread(services.play_move)(
                self.game_id, self.player_id, message.move, message.v
            )
            await self.publish(outcome.events)
        elif isinstance(message, ClockCheck):
            if self.deadline is not None and time.monotonic() >= self.deadline - CLOCK_CHECK_LEAD_S:
                await self.check_clock()
        elif isinstance(message, Action):
            service = ACTION_SERVICES[message.name]
            outcome = await in_db_thread(service)(self.game_id, self.player_id)
            await self.publish(outcome.events)

    async def check_seated(self, message) -> None:
        """A spectator's socket asks to move or act: refuse it ``not_seated`` before any service
        call takes the game's row lock (a crowd of spectators would otherwise queue on it), unless
        the viewer took a seat since the socket opened (then this socket plays for that seat)."""
        seat = await in_db_thread(services.seat_of)(self.game_id, self.player_id)
        if seat is None:
            what = "move" if isinstance(message, PlayMove) else "do that"
            raise services.ActionError("not_seated", f"Only the seated players can {what}; you are watching.")
        self.role = seat

    async def publish(self, events: list[dict]) -> None:
        """Publish committed ``events`` to the game; if the channel layer fails, at least this
        socket gets them (the others catch up from the database when they reconnect)."""
        if not await publish(self.game_id, events):
            for event in events:
                await self.send_state(event)
            in_background(republish(self.game_id, events))

    async def send_snapshot(self):
        """Send this viewer a fresh snapshot of the game, never an older one after a newer event.

        Snapshots of one socket are read and sent one at a time, and the hub's events
        that arrive meanwhile are held and sent after the snapshot (the page ignores
        those it already has), so a page never goes back from an event to an older
        snapshot.  Raises what :func:`game.services.snapshot` raises.
        """
        async with self.holding_events():
            await self.send_state(await in_db_thread(services.snapshot)(self.game_id, self.player_id))

    @contextlib.asynccontextmanager
    async def holding_events(self):
        """While a snapshot is read and sent (one at a time per socket), hold the hub's events
        for this socket; send them afterwards, in order."""
        async with self.snapshot_lock:
            self.held = held = []
            try:
                yield
            finally:
                while held:  # events keep arriving while these are sent
                    text, follow = held.pop(0)
                    await self.forward(text, follow)
                self.held = None

    async def deliver(self, text: str, follow: dict | None) -> None:
        """One event of the game from the hub (:meth:`game.fanout.Member.deliver`): forward it
        to the browser, or hold it while a snapshot is on its way (:meth:`send_snapshot`)."""
        if self.held is not None:
            self.held.append((text, follow))
        else:
            await self.forward(text, follow)

    async def forward(self, text: str, follow: dict | None) -> None:
        """Send one encoded event and follow the clock of its state (``follow``)."""
        try:
            await self.send(text_data=text)
        except Exception as exc:  # noqa: BLE001 - the browser went away mid-send
            # Its disconnect still runs (hub and presence cleanup).
            log.debug("could not forward an event to a closing socket: %s", exc)
            return
        if follow is not None:
            self.follow_clock(follow)

    def resync(self) -> None:
        """The hub may have missed events (:meth:`game.fanout.Member.resync`): send a snapshot
        (after any snapshot on its way, which may have been read before)."""
        in_background(self._resync())

    async def _resync(self) -> None:
        try:
            await self.send_snapshot()
        except Exception as exc:  # noqa: BLE001 - the page asks again when it sees a gap
            log.warning("could not resynchronise a socket of game %s: %s", self.game_id, exc)

    async def send_state(self, event: dict) -> None:
        """Send ``event`` and follow the clock of the state it carries, if any."""
        await self.send_json(event)
        if "state" in event:
            self.follow_clock(event["state"])

    def follow_clock(self, state: dict) -> None:
        """Keep the time at which the side to move runs out, from ``state["clock"]``.

        A player's socket also arms a timer for that moment, so the server ends
        the game on time without waiting for a message; any number of such
        checks end it once.
        """
        if self.timer:
            self.timer.cancel()
            self.timer = None
        self.deadline = None
        clock = state.get("clock")
        if not clock or state.get("status") != "active":
            return
        lefts = [clock[clock["running"]] if clock["running"] else None, clock["first_move_ms"]]
        lefts = [ms for ms in lefts if ms is not None]
        if not lefts:
            return
        delay_s = min(lefts) / 1000
        self.deadline = time.monotonic() + delay_s
        if self.role in ("B", "W"):
            self.timer = asyncio.get_running_loop().create_task(self.check_clock_after(delay_s))

    async def check_clock_after(self, delay_s: float) -> None:
        await asyncio.sleep(delay_s + CLOCK_TIMER_SLACK_S)
        try:
            await self.check_clock()
        except services.ActionError:
            pass

    async def check_clock(self) -> None:
        """Ask the server's clock whether the side to move has run out; publish the end if so."""
        outcome = await in_db_thread(services.check_clock)(self.game_id)
        await self.publish(outcome.events)
