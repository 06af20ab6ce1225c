"""The game socket: a thin adapter between websocket frames and the game's actions.

One socket per open game page at ``/ws/game/<id>/``.  On connect it sends a
``snapshot``; then every committed event of the game, through the process's
:class:`game.round.fanout.Hub` (not the channel layer: these sockets have no channel).
Each client frame is parsed at the edge (:mod:`game.round.protocol`), handed
to one action off the event loop (a row of :data:`ACTIONS`, or a move), and
any refusal is answered with an ``error`` to this socket only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from checkers_site.ops import logs, metrics
from game.computer import player as computer_player
from game.computer.seat import has_computer
from game.i18n import language_of_scope, resolved
from game.round import actions, admission, claims, drawer, events, fanout, presence, reads, rematcher, turns
from game.round.errors import ActionError
from game.round.progress import Progress
from game.round.protocol import (
    Action,
    ClientMessage,
    ClockCheck,
    Ping,
    PlayMove,
    ProtocolError,
    Sync,
    decode_frame,
    parse_client_message,
)
from game.sockets import RATE_LIMITED, RateLimited, SocketRateLimit, in_background, in_db_thread

log = logging.getLogger(__name__)

#: The action carrying out each field-less client message (``docs/protocol.md``): one row per
#: action, each ``(game_id, player_id, now) -> Progress``, ``now`` the frame's arrival.
ACTIONS: dict[str, Callable[[str, str | None, datetime | None], Progress]] = {
    "draw_offer": drawer.offer_draw,
    "draw_accept": drawer.accept_draw,
    "draw_decline": drawer.decline_draw,
    "resign": actions.resign,
    "abort": actions.abort,
    "rematch_offer": rematcher.offer_rematch,
    "rematch_accept": rematcher.offer_rematch,
    "rematch_decline": rematcher.decline_rematch,
    "claim_win": claims.claim_win,
    "claim_draw": claims.claim_draw,
}

#: Close code sent when the game in the URL does not exist.
CLOSE_NO_SUCH_GAME = 4404
#: Close code sent when the game's events cannot be followed (Redis unreachable): reconnect.
CLOSE_UNAVAILABLE = 4503
#: Close code sent when the session or the client address already holds as many game sockets as it
#: may (``GAME_SOCKETS_PER_SESSION``, ``GAME_SOCKETS_PER_ADDRESS``): close another tab first.
CLOSE_TOO_MANY_SOCKETS = 4429
#: A ``clock_check`` this many seconds before the server's own deadline is honoured (the page's
#: countdown may run a little ahead).
CLOCK_CHECK_LEAD_S = 1.0
#: A player's socket checks the clock this long after the side to move should run out.
CLOCK_TIMER_SLACK_S = 0.05

#: Seconds between two ``audience`` notices of one game from one process.
AUDIENCE_EVERY_S = 1.0
_audience_pending: dict[str, asyncio.Task[None]] = {}


async def _announce_later(game_id: str) -> None:
    try:
        await asyncio.sleep(AUDIENCE_EVERY_S)
        del _audience_pending[game_id]  # a change from now on schedules the next notice
        audience = await presence.audience(game_id)
        # The game's version rides along: a page behind it missed an event (one whose publish
        # died with its server process, say) and asks for a snapshot.
        game_v = await in_db_thread(reads.version)(game_id)
        await fanout.publish(game_id, [events.AudienceEvent(game_v=game_v, **audience)])
    except Exception as exc:  # noqa: BLE001 - a notice is a convenience; never fatal
        _audience_pending.pop(game_id, None)
        log.warning("could not announce the audience of %s: %s", game_id, exc)


class GameConsumer(AsyncJsonWebsocketConsumer):
    """Websocket consumer for one viewer (player or spectator) of one game.

    A :class:`game.round.fanout.Member` of its game in the process's hub from
    before its snapshot is read until it closes; ``role`` is its seat's
    letter or ``"S"`` for a spectator; ``channel_name`` is a random id naming
    the socket in :mod:`game.round.presence`.
    """

    #: No channel-layer channel: game events come through :mod:`game.round.fanout`.
    channel_layer_alias = None  # type: ignore[assignment]  # channels reads None as "no layer"; its stubs say str
    limit: RateLimited | None = None
    #: The limit shared by every socket of this session in the process (None: no session, or no limit).
    session_limit: SocketRateLimit | None = None
    #: This socket's entry in the per-session and per-address counts (None: not counted).
    ticket: admission.Ticket | None = None
    role = "S"
    #: Events from the hub held while a snapshot is read and sent (None when none is).
    held: list[tuple[list[tuple[str, str]], dict[str, Any] | None]] | None = None
    deadline: float | None = None
    timer: asyncio.Task[None] | None = None
    joined = False
    entered = False
    entering: asyncio.Task[None] | None = None
    #: The language of the socket's human texts (game.i18n.language_of_scope), read at connect.
    language: str | None = None

    async def connect(self) -> None:
        self.game_id = self.scope["url_route"]["kwargs"]["game_id"]
        logs.bind(game_id=self.game_id)  # every line of this socket's task names its game
        self.language = language_of_scope(self.scope)
        self.channel_name = uuid.uuid4().hex
        session = self.scope.get("session")
        self.player_id = session.get("player_id") if session is not None else None
        self.snapshot_lock = asyncio.Lock()
        client = self.scope.get("client")
        self.ticket, over = await admission.admit(self.channel_name, self.player_id,
                                                  client[0] if client else None)
        if over is not None:
            limit = (settings.GAME_SOCKETS_PER_SESSION if over == admission.OVER_SESSION
                     else settings.GAME_SOCKETS_PER_ADDRESS)
            await self.accept()  # then closed: a page seeing 4429 gives up instead of reconnecting
            await self.close(code=CLOSE_TOO_MANY_SOCKETS, reason=f"{over} limit {limit} reached")
            return
        if self.player_id and settings.GAME_SESSION_RATE_LIMIT:
            self.session_limit = admission.session_rates.enter(self.player_id, self)
        async with self.holding_events():
            try:
                # Joined first: every event committed after the snapshot is read reaches this socket.
                await fanout.hub().join(self.game_id, self)
                self.joined = True
                snapshot = await in_db_thread(reads.snapshot)(self.game_id, self.player_id)
            except (ActionError, fanout.Unavailable, DatabaseError) as exc:
                if isinstance(exc, DatabaseError):
                    log.error("database unavailable for game %s: %s", self.game_id, exc)
                # Accepted first: a handshake refused before accept reaches the page as a plain
                # failure (HTTP 403), and the page would keep reconnecting instead of giving up.
                await self.accept()
                if isinstance(exc, ActionError):
                    await self.close(code=CLOSE_NO_SUCH_GAME, reason="no such game")
                else:
                    await self.close(code=CLOSE_UNAVAILABLE, reason="database unavailable"
                                     if isinstance(exc, DatabaseError) else "game events unavailable")
                return
            self.role = snapshot.you or "S"
            logs.bind(seat=self.role)
            self.computer = has_computer(snapshot.state)
            self.entered = True
            metrics.game_sockets.inc()
            await self.accept()
            await self.send_event(snapshot)
        # In the background: a burst of sockets connecting must not hold up their first moves.
        self.entering = in_background(presence.refresh(self.game_id, self.channel_name, self.role))
        self.announce()
        if self.computer:
            computer_player.wake(self.game_id)  # resumes the computer's turn after a restart or reconnect

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Run the handler of ``message``, without the ``aclose_old_connections()`` that channels
        runs before each one: that is a hop to its single sync thread for every frame, and this
        consumer touches the database only through :func:`game.sockets.in_db_thread`, which
        closes stale connections itself."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def disconnect(self, code: int) -> None:
        logs.bind(close_code=code)
        log.debug("game socket closed")  # with its game, seat and close code (checkers_site/ops/logs.py)
        if self.timer:
            self.timer.cancel()
        if self.session_limit is not None and self.player_id:
            admission.session_rates.leave(self.player_id, self)
        if self.ticket is not None:
            in_background(admission.release(self.ticket))
        if self.joined:
            fanout.hub().leave(self.game_id, self)
        if self.entered:
            metrics.game_sockets.dec()
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

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None,
                      **kwargs: Any) -> None:
        # A player is charged up to the moment the frame arrived, not the moment the server got
        # round to it (a busy game row, a crowded event loop): docs/protocol.md, "Clocks".
        arrived, arrived_mono = timezone.now(), time.monotonic()
        if not await self.within_rate_limit():
            return
        try:
            message = parse_client_message(decode_frame(text_data, bytes_data))
        except ProtocolError as exc:
            await self.send_message({"type": "error", "code": exc.code, "message": exc.message})
            return
        try:
            if self.deadline is not None and arrived_mono >= self.deadline \
                    and not isinstance(message, PlayMove):
                await self.check_clock()
            await self.handle(message, arrived)
            if isinstance(message, PlayMove):
                metrics.move_accepted(arrived_mono)
        except ActionError as exc:
            if isinstance(message, PlayMove):
                metrics.move_refused(exc.code)
            await self.send_message(exc.as_event())
            if exc.code in ("stale", "bad_version"):
                await self.send_snapshot()
        except DatabaseError as exc:
            if isinstance(message, PlayMove):
                metrics.move_refused("unavailable")
            log.error("database unavailable for game %s: %s", self.game_id, exc)
            await self.send_message({"type": "error", "code": "unavailable",
                                  "message": _("The server cannot reach its database right now; "
                                               "nothing was changed. Try again in a moment.")})
        finally:
            if self.computer:
                computer_player.wake(self.game_id)  # the computer's reply, off the event loop

    async def within_rate_limit(self) -> bool:
        """Count one message of this socket and of its session (``GAME_SOCKET_RATE_LIMIT``,
        ``GAME_SESSION_RATE_LIMIT``, the latter shared by the session's sockets in this process);
        False (after telling this socket's client, at most once a second) when over either."""
        if self.limit is None:
            self.limit = RateLimited(settings.GAME_SOCKET_RATE_LIMIT)
        now = time.monotonic()
        allowed, notify = self.limit.allow(now)
        if allowed and self.session_limit is not None and not self.session_limit.hit(now):
            allowed, notify = False, self.limit.notices.hit(now)
        if notify:
            await self.send_message(RATE_LIMITED)
        return allowed

    async def handle(self, message: ClientMessage, arrived: datetime | None = None) -> None:
        """Carry out one parsed client message that arrived at ``arrived`` (default: now).
        Raises :class:`ActionError`, ``DatabaseError``."""
        if self.role == "S" and isinstance(message, (PlayMove, Action)):
            await self.check_seated(message)
        if isinstance(message, Ping):
            # In the background: a slow Redis must not hold up this socket's next move.
            in_background(presence.refresh(self.game_id, self.channel_name, self.role))
            if self.ticket is not None:
                in_background(admission.refresh(self.ticket))
            await self.send_message({"type": "pong"})
        elif isinstance(message, Sync):
            await self.sync(message.v)
        elif isinstance(message, PlayMove):
            progress = await turns.run(self.game_id, actions.play_move, self.player_id, message.move,
                                       message.v, arrived_at=arrived)
            await self.publish(progress)
        elif isinstance(message, ClockCheck):
            if self.deadline is not None and time.monotonic() >= self.deadline - CLOCK_CHECK_LEAD_S:
                await self.check_clock()
        elif isinstance(message, Action):
            progress = await turns.run(self.game_id, ACTIONS[message.name], self.player_id, arrived)
            await self.publish(progress)

    async def sync(self, v: int | None) -> None:
        """Answer ``sync``: ``synced`` when the page already has the game's version ``v`` (one
        indexed read of the version, no moves read), else a snapshot."""
        if v is not None and await in_db_thread(reads.version)(self.game_id) == v:
            await self.send_message({"type": "synced", "v": v})
            return
        await self.send_snapshot()

    async def check_seated(self, message: PlayMove | Action) -> None:
        """A spectator's socket asks to move or act: refuse it ``not_seated`` before any action
        takes the game's row lock (a crowd of spectators would otherwise queue on it), unless
        the viewer took a seat since the socket opened (then this socket plays for that seat)."""
        seat = await in_db_thread(reads.seat_of)(self.game_id, self.player_id)
        if seat is None:
            raise ActionError("not_seated", _("Only the seated players can move; you are watching.")
                              if isinstance(message, PlayMove)
                              else _("Only the seated players can do that; you are watching."))
        self.role = seat.value
        logs.bind(seat=self.role)

    async def publish(self, progress: Progress) -> None:
        """Publish the committed events of ``progress`` to the game (:func:`game.round.fanout.publish`:
        if Redis fails, this socket still gets them and they are published again)."""
        await fanout.publish(self.game_id, progress.events, fallback=self)

    async def send_snapshot(self) -> None:
        """Send this viewer a fresh snapshot of the game, never an older one after a newer event.

        Snapshots of one socket are read and sent one at a time, and the hub's events
        that arrive meanwhile are held and sent after the snapshot (the page ignores
        those it already has), so a page never goes back from an event to an older
        snapshot.  Raises what :func:`game.round.reads.snapshot` raises.
        """
        async with self.holding_events():
            await self.send_event(await in_db_thread(reads.snapshot)(self.game_id, self.player_id))

    @contextlib.asynccontextmanager
    async def holding_events(self) -> AsyncIterator[None]:
        """While a snapshot is read and sent (one at a time per socket), hold the hub's events
        for this socket; send them afterwards, in order."""
        async with self.snapshot_lock:
            held: list[tuple[list[tuple[str, str]], dict[str, Any] | None]] = []
            self.held = held
            try:
                yield
            finally:
                while held:  # events keep arriving while these are sent
                    copies, follow = held.pop(0)
                    await self.forward(copies, follow)
                self.held = None

    async def deliver(self, copies: list[tuple[str, str]], follow: dict[str, Any] | None) -> None:
        """One event of the game from the hub (:meth:`game.round.fanout.Member.deliver`): forward
        this socket's copy to the browser, or hold the event while a snapshot is on its way
        (:meth:`send_snapshot`: the role, and so the copy, is known once the snapshot is read)."""
        if self.held is not None:
            self.held.append((copies, follow))
        else:
            await self.forward(copies, follow)

    async def forward(self, copies: list[tuple[str, str]], follow: dict[str, Any] | None) -> None:
        """Send this socket's copy of one encoded event and follow the clock of its state."""
        text = next((text for roles, text in copies if self.role in roles), None)
        if text is None:
            return
        try:
            await self.send(text_data=text)
        except Exception as exc:  # noqa: BLE001 - the page asks again when it sees a gap
            # Its disconnect still runs (hub and presence cleanup).
            log.debug("could not forward an event to a closing socket: %s", exc)
            return
        if follow is not None:
            self.follow_clock(follow)

    def resync(self) -> None:
        """The hub may have missed events (:meth:`game.round.fanout.Member.resync`): send a
        snapshot (after any snapshot on its way, which may have been read before).  Redis may
        also have lost this socket's presence (a restart): it is written again at once, not at
        the page's next ping."""
        in_background(self._resync())
        if self.entered:
            in_background(presence.refresh(self.game_id, self.channel_name, self.role))

    async def _resync(self) -> None:
        try:
            await self.send_snapshot()
        except Exception as exc:  # noqa: BLE001 - the browser went away mid-send
            log.warning("could not resynchronise a socket of game %s: %s", self.game_id, exc)

    async def send_message(self, message: dict[str, Any]) -> None:
        """Send one message to this socket only (an ``error``, ``pong``), encoded by
        :func:`game.round.events.encode`, its human texts in this socket's language."""
        await self.send(text_data=events.encode(resolved(message, self.language)))

    async def send_event(self, event: events.Event) -> None:
        """Send ``event`` (this socket's copy of it, if it has one) and follow the clock of the
        state it carries, if any (:meth:`game.round.fanout.Fallback.send_event`)."""
        payload = event.for_role(self.role)
        if payload is None:
            return
        await self.send(text_data=events.encode(payload))
        state = payload.get("state")
        if state is not None:
            self.follow_clock(events.follow_of(state))

    def follow_clock(self, follow: dict[str, Any] | None) -> None:
        """Keep the time at which the side to move runs out, from ``follow["clock"]``.

        A player's socket also arms a timer for that moment, so the server ends
        the game on time without waiting for a message; any number of such
        checks end it once.
        """
        if self.timer:
            self.timer.cancel()
            self.timer = None
        self.deadline = None
        clock = follow.get("clock") if follow else None
        if not clock or follow is None or follow.get("status") != "active":
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
        with contextlib.suppress(ActionError):
            await self.check_clock()

    async def check_clock(self) -> None:
        """Ask the server's clock whether the side to move has run out; publish the end if so."""
        await self.publish(await turns.run(self.game_id, actions.check_clock))
