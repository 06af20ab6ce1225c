"""The game socket: a thin adapter between websocket frames and the game's actions.

One socket per open game page at ``/ws/game/<id>/``.  On connect it sends a
``snapshot``; then every committed event of the game, through the process's
:class:`game.round.fanout.hubs.Hub` (not the channel layer: these sockets have no channel).
Each client frame is parsed at the edge (:mod:`game.round.protocol`), handed
to its handler (:mod:`game.round.handlers`: one action off the event loop), and
any refusal is answered with an ``error`` to this socket only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from checkers_site.handshakes import send_frame
from checkers_site.ops import logs, metrics
from game import sessions
from game.errors import ActionError
from game.i18n import language_of_scope, resolved
from game.players import has_computer
from game.round import (
    actions,
    admission,
    chat,
    events,
    fanout,
    forecasts,
    handlers,
    hiding,
    outages,
    reads,
    signals,
    snapshots,
)
from game.round.flag import Flag
from game.round.progress import Progress
from game.round.protocol import (
    CLOSE_NO_SUCH_GAME,
    CLOSE_SEAT_MOVED,
    CLOSE_TOO_MANY_SOCKETS,
    CLOSE_UNAVAILABLE,
    Action,
    Chat,
    ClientMessage,
    ForecastLines,
    PlayMove,
    ProtocolError,
    decode_frame,
    parse_client_message,
)
from game.round.role import Role
from game.round.round import Round
from game.round.watch import Watch, check_seat, reseat
from game.sockets import RATE_LIMITED, Guard, SocketRateLimit, in_background, in_db_thread

log = logging.getLogger(__name__)

#: Close code of a socket whose handler failed unexpectedly (RFC 6455: internal error); the page
#: reconnects.
CLOSE_INTERNAL_ERROR = 1011
#: The error code of an action refused because the socket's session's log-in ended.
SESSION_ENDED = "session_ended"
#: How an encoded ``seats`` event begins (:func:`game.round.events.encode`, compact JSON, type first).
SEATS_PREFIX = '{"type":"seats"'


class GameConsumer(AsyncJsonWebsocketConsumer):
    """Websocket consumer for one viewer (player or spectator) of one game.

    A :class:`~game.round.round.Member` of its game's :class:`~game.round.round.Round` from before
    its snapshot is read until it closes; ``role`` is its :class:`~game.round.role.Role` (a seat,
    or a spectator); ``channel_name`` is a random id naming the socket in
    :mod:`game.round.presence`.  Each parsed client message goes to its handler in
    :data:`game.round.handlers.HANDLERS`.
    """

    #: No channel-layer channel: game events come through :mod:`game.round.fanout`.
    channel_layer_alias = None  # type: ignore[assignment]  # channels reads None as "no layer"; its stubs say str
    #: The limits on this socket's client messages, set once it is admitted.
    guard: Guard | None = None
    #: The limits shared by every socket of this session, and of this client address, in the process.
    session_limit: SocketRateLimit | None = None
    address_limit: SocketRateLimit | None = None
    address: str | None = None
    #: This socket's entry in the per-session and per-address counts (None: not counted).
    ticket: admission.Ticket | None = None
    role = Role()
    #: The game's Round in this process (set when the socket joins its game).
    round: Round
    #: Events from the hub held while a snapshot is read and sent (None when none is).
    held: list[tuple[list[tuple[str, str]], dict[str, Any] | None]] | None = None
    flag: Flag
    #: The socket's presence in its game, from its entry on (None before).
    watch: Watch | None = None
    joined = False
    #: The socket has closed (its disconnect ran): tasks still running for it change nothing.
    closed = False
    #: The language of the socket's human texts (game.i18n.language_of_scope), read at connect.
    language: str | None = None
    _speaker: chat.Speaker | None = None
    #: The socket's session is signed in to an account: its log-in is checked before each action.
    signed_in = False
    #: The computer holds a seat of the game.
    computer = False
    #: A signed-in viewer's filter of the chat lines of the players it blocks (None: a guest).
    chat_filter: hiding.ChatFilter | None = None

    async def connect(self) -> None:
        self.game_id = self.scope["url_route"]["kwargs"]["game_id"]
        logs.bind(game_id=self.game_id)  # every line of this socket's task names its game
        self.language = language_of_scope(self.scope)
        self.channel_name = uuid.uuid4().hex
        self.snapshot_lock = asyncio.Lock()
        self.flag = Flag(self.check_clock)
        await self.identify()
        if not await self.admit():
            return
        if self.signed_in and self.player_id:
            self.chat_filter = hiding.ChatFilter(self.player_id, self.game_id)
            await self.chat_filter.read()
        snapshot = await self.enter()
        if snapshot is None:
            return
        self.watch = Watch(self, snapshot.state)
        self.watch.enter()
        if self.computer:
            # The computer's turn resumes after a restart or a reconnect.
            signals.computer_seat_touched.send(sender=GameConsumer, game_id=self.game_id)
        if self.role.seated and forecasts.may_answer(snapshot.state):
            # A forecast reply that a server lost between the opponent's move and its reply.
            in_background(handlers.answer_forecast(self))

    async def identify(self) -> None:
        """Who the socket plays as: its session's player id; a cookie whose log-in ended (logged
        out, password changed) only watches."""
        session = self.scope.get("session")
        self.player_id = session.get("player_id") if session is not None else None
        if sessions.signed_in(session):
            self.signed_in = await in_db_thread(sessions.log_in_holds)(session)
            if not self.signed_in:
                self.player_id = None

    async def admit(self) -> bool:
        """Count the socket against its session's and address's sockets (:mod:`game.round.admission`);
        False, the socket closed with ``CLOSE_TOO_MANY_SOCKETS``, over either limit (a seated
        player's socket: over its session's only)."""
        client = self.scope.get("client")
        self.address = client[0] if client else None
        self.ticket, over = await admission.admit(self.channel_name, self.player_id, self.address)
        if over == admission.OVER_ADDRESS and self.player_id and \
                await in_db_thread(reads.seat_of)(self.game_id, self.player_id) is not None:
            # Other sessions of the player's address (a shared network, or an opponent on it filling
            # the address's sockets) never keep a seated player from their game: counted for the session.
            self.ticket, over = await admission.admit(self.channel_name, self.player_id, None)
        if over is not None:
            limit = (settings.GAME_SOCKETS_PER_SESSION if over == admission.OVER_SESSION
                     else settings.GAME_SOCKETS_PER_ADDRESS)
            await self.accept()  # then closed: a page seeing 4429 gives up instead of reconnecting
            await self.close(code=CLOSE_TOO_MANY_SOCKETS, reason=f"{over} limit {limit} reached")
            return False
        if self.player_id:
            self.session_limit = admission.session_rates.enter(self.player_id, self)
        if self.address:
            self.address_limit = admission.address_rates.enter(self.address, self)
        self.guard = Guard(settings.GAME_SOCKET_RATE_LIMIT, self.session_limit, self.address_limit)
        return True

    async def enter(self) -> snapshots.Copy | None:
        """Join the game's events, then read and send the socket's snapshot; None (the socket
        accepted, then closed with its code) for no such game or no database or Redis."""
        async with self.holding_events():
            try:
                # Joined first: every event committed after the snapshot is read reaches this socket.
                self.round = await fanout.hub().join(self.game_id, self)
                self.joined = True
                snapshot = await self.round.snapshots.copy(self.player_id)
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
                return None
            self.role = Role.of(snapshot.you)
            logs.bind(seat=self.role.letter)
            self.computer = has_computer(snapshot.state)
            metrics.game_sockets.inc()
            await self.accept()
            await self.send_copy(snapshot)
        return snapshot

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Run the handler of ``message``, without the ``aclose_old_connections()`` that channels
        runs before each one: that is a hop to its single sync thread for every frame, and this
        consumer touches the database only through :func:`game.sockets.in_db_thread`, which
        closes stale connections itself."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        try:
            await handler(message)
        except StopConsumer:
            raise
        except Exception:
            # A handler that fails past every refusal it knows (a Redis or a database failing in a
            # way no one foresaw) still gives back what the socket holds, then ends the socket.
            log.exception("game socket handler failed on %s", message.get("type"))
            if not self.closed:
                await self.disconnect(CLOSE_INTERNAL_ERROR)
                with contextlib.suppress(Exception):
                    await self.close(code=CLOSE_INTERNAL_ERROR)
            raise StopConsumer() from None

    async def disconnect(self, code: int) -> None:
        """The socket closed: everything it holds is given back (its Round's membership, its
        presence, its admission, its rate limits, its timers), once, whatever a Redis or a
        database that went away meanwhile raises."""
        if self.closed:
            return      # given back already, when its handler failed
        logs.bind(close_code=code)
        log.debug("game socket closed")  # with its game, seat and close code (checkers_site/ops/logs.py)
        self.closed = True
        self.flag.stop()
        if self.watch is not None:
            self.watch.stop()
        if self.session_limit is not None and self.player_id:
            admission.session_rates.leave(self.player_id, self)
        if self.address_limit is not None and self.address:
            admission.address_rates.leave(self.address, self)
        if self.ticket is not None:
            in_background(admission.release(self.ticket))
        if self.joined:
            fanout.hub().leave(self.game_id, self)
        if self.watch is not None:
            metrics.game_sockets.dec()
            try:
                await self.watch.leave()
            except Exception as exc:  # noqa: BLE001 - its entry expires with its TTL
                log.warning("could not take a closed socket out of game %s's presence: %s", self.game_id, exc)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None,
                      **kwargs: Any) -> None:
        # A player is charged up to the moment the frame arrived, not the moment the server got
        # round to it (a busy game row, a crowded event loop): docs/protocol.md, "Clocks".
        arrived, arrived_mono = timezone.now(), time.monotonic()
        if self.watch is not None:
            self.watch.heard = arrived_mono
        if not await self.within_rate_limit(arrived_mono):
            return
        try:
            message = parse_client_message(decode_frame(text_data, bytes_data))
        except ProtocolError as exc:
            await self.send_message({"type": "error", "code": exc.code, "message": exc.message})
            return
        try:
            if self.flag.passed(arrived_mono) and not isinstance(message, PlayMove):
                await self.check_clock()
            await self.handle(message, arrived)
            if isinstance(message, PlayMove):
                metrics.move_accepted(arrived_mono)
        except ActionError as exc:
            await self.refused(message, exc)
        except DatabaseError as exc:
            if isinstance(message, PlayMove):
                metrics.move_refused("unavailable")
            log.error("database unavailable for game %s: %s", self.game_id, exc)
            await self.send_message({"type": "error", "code": "unavailable",
                                     "message": _("The server cannot reach its database right now; "
                                                  "nothing was changed. Try again in a moment.")})
        finally:
            if self.computer:
                # The computer's reply, off the event loop.
                signals.computer_seat_touched.send(sender=GameConsumer, game_id=self.game_id)

    async def refused(self, message: ClientMessage, exc: ActionError) -> None:
        """Tell this socket only why ``message`` was refused; a stale board gets a snapshot, a
        log-in that ended closes the socket."""
        if isinstance(message, PlayMove):
            metrics.move_refused(exc.code)
        await self.send_message(exc.as_event())
        if exc.code in ("stale", "bad_version"):
            await self.send_snapshot()
        elif exc.code == SESSION_ENDED:
            await self.close(code=CLOSE_SEAT_MOVED, reason="session ended")

    async def within_rate_limit(self, now: float) -> bool:
        """Count one message of this socket, of its session and of its client address at ``now``
        (monotonic s: ``GAME_SOCKET_RATE_LIMIT``, ``GAME_SESSION_RATE_LIMIT``,
        ``GAME_ADDRESS_RATE_LIMIT``, the last two shared by the session's, and the address's,
        sockets in this process: :class:`game.sockets.Guard`); False (after telling this socket's
        client, at most once a second) when over any of them.  A socket that floods is closed
        with ``CLOSE_FLOODING`` (4429: the page gives up) instead of read on."""
        if self.guard is None:
            self.guard = Guard(settings.GAME_SOCKET_RATE_LIMIT, self.session_limit, self.address_limit)
        return await self.guard.admit(lambda code, reason: self.close(code=code, reason=reason),
                                      lambda: self.send_message(RATE_LIMITED), now)

    async def handle(self, message: ClientMessage, arrived: datetime | None = None) -> None:
        """Carry out one parsed client message that arrived at ``arrived`` (default: now), through
        its handler in :data:`game.round.handlers.HANDLERS`.  Raises :class:`ActionError`, ``DatabaseError``."""
        if self.signed_in and isinstance(message, (PlayMove, Action, ForecastLines, Chat)):
            await self.check_log_in()
        if not self.role.seated and isinstance(message, (PlayMove, Action, ForecastLines)):
            await self.check_seated(message)
        await handlers.HANDLERS[type(message)](self, message, arrived or timezone.now())

    def speaker(self) -> chat.Speaker:
        """This socket's voice in the game's chat (its own line rate), made on its first line."""
        if self._speaker is None:
            session = self.scope.get("session")
            self._speaker = chat.Speaker(self.player_id, session.get("name") if session is not None else None,
                                         self.language)
        return self._speaker

    async def check_log_in(self) -> None:
        """Before an action of a signed-in session's socket: refuse it ``session_ended`` when the
        session's log-in no longer holds (:func:`game.sessions.log_in_holds`: logged out,
        password changed, account deleted, from any browser and any server process); the socket
        is then closed with ``CLOSE_SEAT_MOVED``.  Raises :class:`ActionError`."""
        if not await in_db_thread(sessions.log_in_holds)(self.scope.get("session")):
            self.signed_in = False
            self.player_id = None
            raise ActionError(SESSION_ENDED, sessions.SESSION_ENDED_MESSAGE)

    async def check_seated(self, message: PlayMove | Action | ForecastLines) -> None:
        """A spectator's socket asks to move or act: refuse it ``not_seated`` before any action
        takes the game's row lock (a crowd of spectators would otherwise queue on it), unless
        the viewer took a seat since the socket opened (then this socket plays for that seat)."""
        seat = await in_db_thread(reads.seat_of)(self.game_id, self.player_id)
        if seat is None:
            raise ActionError("not_seated", _("Only the seated players can move; you are watching.")
                              if isinstance(message, PlayMove)
                              else _("Only the seated players can do that; you are watching."))
        self.role = Role(seat.value)
        logs.bind(seat=self.role.letter)

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
            await self.send_copy(await self.round.snapshots.copy(self.player_id, self.role.letter))

    async def resend_snapshot(self) -> None:
        """:meth:`send_snapshot`, a failure (the browser went away mid-send) logged."""
        try:
            await self.send_snapshot()
        except Exception as exc:  # noqa: BLE001 - the browser went away mid-send
            log.warning("could not resynchronise a socket of game %s: %s", self.game_id, exc)

    async def send_copy(self, snapshot: snapshots.Copy) -> None:
        """Send a snapshot already encoded for this socket (less the chat lines it does not read:
        :mod:`game.round.hiding`) and follow the clock of its state."""
        await self.send_text(snapshot.text if self.chat_filter is None else self.chat_filter.snapshot(snapshot.text))
        self.flag.follow(events.follow_of(snapshot.state), timer=self.role.seated)

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
        """One event of the game from the hub (:meth:`game.round.round.Member.deliver`): forward
        this socket's copy to the browser, or hold the event while a snapshot is on its way
        (:meth:`send_snapshot`: the role, and so the copy, is known once the snapshot is read)."""
        if self.held is not None:
            self.held.append((copies, follow))
        else:
            await self.forward(copies, follow)

    async def forward(self, copies: list[tuple[str, str]], follow: dict[str, Any] | None) -> None:
        """Send this socket's copy of one encoded event and follow the clock of its state; a
        change of seats may change this socket's seat (:mod:`game.round.watch`)."""
        text = self.role.text_of(copies)
        if text is not None and self.chat_filter is not None:
            text = self.chat_filter.event(text)
        if text is None:
            return
        try:
            await self.send_text(text)
        except Exception as exc:  # noqa: BLE001 - the page asks again when it sees a gap
            # Its disconnect still runs (hub and presence cleanup).
            log.debug("could not forward an event to a closing socket: %s", exc)
            return
        if follow is not None:
            self.flag.follow(follow, timer=self.role.seated)
        if text.startswith(SEATS_PREFIX):
            if self.role.seated:
                in_background(check_seat(self))
            elif self.player_id:
                in_background(reseat(self, self.watch))

    def resync(self) -> None:
        """The hub may have missed events (:meth:`game.round.round.Member.resync`): send a
        snapshot (after any snapshot on its way, which may have been read before).  Redis may
        also have lost this socket's presence (a restart): it is written again at once, not at
        the page's next ping."""
        in_background(self.resend_snapshot())
        if self.watch is not None and not self.closed:
            self.watch.refresh()

    async def send_text(self, text: str) -> None:
        """Send one text frame, already encoded (:func:`checkers_site.handshakes.send_frame`)."""
        await send_frame(self, text)

    async def send_message(self, message: dict[str, Any]) -> None:
        """Send one message to this socket only (an ``error``, ``pong``), encoded by
        :func:`game.round.events.encode`, its human texts in this socket's language."""
        await self.send_text(events.encode(resolved(message, self.language)))

    async def send_event(self, event: events.Event) -> None:
        """Send ``event`` (this socket's copy of it, if it has one) and follow the clock of the
        state it carries, if any (:meth:`game.round.fanout.Fallback.send_event`)."""
        payload = event.for_role(self.role.letter)
        if payload is None:
            return
        await self.send_text(events.encode(payload))
        state = payload.get("state")
        if state is not None:
            self.flag.follow(events.follow_of(state), timer=self.role.seated)

    async def check_clock(self) -> None:
        """Ask the server's clock whether the side to move has run out; publish the end if so.
        If not (an outage of the game events was not charged), follow the clock as it is now."""
        progress = await self.round.run(actions.check_clock)
        await self.publish(progress)
        if not progress.events and self.role.seated:
            game = progress.game
            self.flag.follow({"clock": outages.clock(game, read=False).state(timezone.now()), "status": game.status},
                             timer=True)

