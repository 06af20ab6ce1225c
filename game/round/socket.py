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
import collections
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime
from typing import Any, cast

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from checkers_site.handshakes import FRAME_SEND
from checkers_site.keepalive import Keepalive, of_scope
from checkers_site.ops import logs, metrics
from game import http_limits
from game.accounts import identity
from game.computer import player as computer_player
from game.computer.seat import has_computer
from game.correspondence import forecasts
from game.i18n import language_of_scope, lazy_text, resolved
from game.round import (
    actions,
    admission,
    chat,
    claims,
    drawer,
    events,
    fanout,
    presence,
    reads,
    rematcher,
    snapshots,
    takebacks,
    turns,
)
from game.round.errors import ActionError
from game.round.progress import Progress
from game.round.protocol import (
    CLOSE_NO_SUCH_GAME,
    CLOSE_SEAT_MOVED,
    CLOSE_SILENT,
    CLOSE_TOO_MANY_SOCKETS,
    CLOSE_UNAVAILABLE,
    Action,
    Chat,
    ClientMessage,
    ClockCheck,
    ForecastLines,
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
    "takeback_propose": takebacks.propose,
    "takeback_accept": takebacks.accept,
    "takeback_decline": takebacks.decline,
}

#: The actions that may start a new game: counted against the new-game limits.
NEW_GAME_ACTIONS = frozenset({"rematch_offer", "rematch_accept"})

#: The error code of an action refused because the socket's session's log-in ended.
SESSION_ENDED = "session_ended"
#: Seconds without a frame from the page after which its socket counts as gone (the page pings every
#: ``protocol.PING_EVERY_S``) and is closed with :data:`CLOSE_SILENT`.
SILENT_AFTER_S = 10.0

#: How an encoded ``seats`` event begins (:func:`game.round.events.encode`, compact JSON, type first).
SEATS_PREFIX = '{"type":"seats"'
#: The answer to a ``ping``, encoded once.
PONG = events.encode({"type": "pong"})
#: A socket with more than this many messages refused for a rate limit within KICK_WINDOW_S
#: seconds is closed with CLOSE_TOO_MANY_SOCKETS: a flood, not a page (pages send a few a second).
KICK_AFTER_REFUSED = 50
KICK_WINDOW_S = 10.0
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
    #: The limit shared by every socket of this client address in the process (None: no limit).
    address_limit: SocketRateLimit | None = None
    #: When this socket's recently refused messages came (monotonic s; None: none yet).
    refused: collections.deque[float] | None = None
    kicked = False
    address: str | None = None
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
    #: When the page last sent a frame (time.monotonic()); the task that closes the socket once the
    #: page has been silent too long.
    heard = 0.0
    #: The transport's keep-alive of this socket, when it answers pings itself (None: it does not).
    keepalive: Keepalive | None = None
    watchdog: asyncio.Task[None] | None = None
    #: The socket was found silent and has left the game's presence (SILENT_AFTER_S).
    silent = False
    #: The socket has closed (its disconnect ran): tasks still running for it change nothing.
    closed = False
    #: The language of the socket's human texts (game.i18n.language_of_scope), read at connect.
    language: str | None = None
    _speaker: chat.Speaker | None = None
    #: The socket's session is signed in to an account: its log-in is checked before each action.
    signed_in = False

    async def connect(self) -> None:
        self.game_id = self.scope["url_route"]["kwargs"]["game_id"]
        logs.bind(game_id=self.game_id)  # every line of this socket's task names its game
        self.language = language_of_scope(self.scope)
        self.channel_name = uuid.uuid4().hex
        session = self.scope.get("session")
        self.player_id = session.get("player_id") if session is not None else None
        if identity.signed_in(session):
            # A cookie whose log-in ended (logged out, password changed) only watches.
            self.signed_in = await in_db_thread(identity.log_in_holds)(session)
            if not self.signed_in:
                self.player_id = None
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
        if self.player_id:
            self.session_limit = admission.session_rates.enter(self.player_id, self)
        self.address = client[0] if client else None
        if self.address:
            self.address_limit = admission.address_rates.enter(self.address, self)
        async with self.holding_events():
            try:
                # Joined first: every event committed after the snapshot is read reaches this socket.
                await fanout.hub().join(self.game_id, self)
                self.joined = True
                snapshot = await fanout.hub().snapshots.copy(self.game_id, self.player_id)
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
            await self.send_copy(snapshot)
        # Kept by the process from now until the socket leaves (presence.Keeper); written in the
        # background: a burst of sockets connecting must not hold up their first moves.
        presence.keeper().keep(self.game_id, self.channel_name, self.role)
        self.entering = in_background(presence.refresh(self.game_id, self.channel_name, self.role))
        self.heard = time.monotonic()
        # The site's transport answers this page's pings from now on (checkers_site.keepalive).
        self.keepalive = of_scope(self.scope)
        if self.keepalive is not None:
            self.keepalive.answering = True
        self.watchdog = asyncio.get_running_loop().create_task(self.watch_silence())
        self.announce()
        if self.computer:
            computer_player.wake(self.game_id)  # resumes the computer's turn after a restart or reconnect
        if self.role in ("B", "W") and forecasts.may_answer(snapshot.state):
            # A forecast reply that a server lost between the opponent's move and its reply.
            in_background(self.answer_forecast())

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
        self.closed = True
        # Whatever happens below, or in a task still running for this socket, its presence entry
        # is renewed no more (it expires if a late write puts it back).
        presence.keeper().drop(self.channel_name)
        if self.keepalive is not None:
            self.keepalive.answering = False
        if self.timer:
            self.timer.cancel()
        if self.watchdog is not None and self.watchdog is not asyncio.current_task():
            self.watchdog.cancel()
        if self.session_limit is not None and self.player_id:
            admission.session_rates.leave(self.player_id, self)
        if self.address_limit is not None and self.address:
            admission.address_rates.leave(self.address, self)
        if self.ticket is not None:
            in_background(admission.release(self.ticket))
        if self.joined:
            fanout.hub().leave(self.game_id, self)
        if self.entered:
            metrics.game_sockets.dec()
            if self.entering is not None and not self.entering.done():
                await asyncio.wait([self.entering])  # the entry is written before it is removed
            if not self.silent:  # a silent socket has left already, when it fell silent
                await presence.leave(self.game_id, self.channel_name, self.role)
                self.announce()

    async def watch_silence(self) -> None:
        """Close this socket once the page has sent nothing for :data:`SILENT_AFTER_S` seconds.

        A network that drops without a close frame (a laptop closed, a tunnel) leaves the socket
        open here for minutes; a page pings every 3 s, so silence this long means it is gone. The
        socket leaves the game's presence at once (the opponent's page sees the player away within
        a second, :data:`AUDIENCE_EVERY_S`) and is closed with :data:`CLOSE_SILENT`; the page,
        once its network is back, connects again and gets a snapshot.
        """
        while (left := self.last_heard() + SILENT_AFTER_S - time.monotonic()) > 0:
            await asyncio.sleep(left)
        log.info("game socket silent for %.0f s: closed", SILENT_AFTER_S)
        self.silent = True
        try:
            if self.entering is not None and not self.entering.done():
                await asyncio.wait([self.entering])
            await presence.leave(self.game_id, self.channel_name, self.role)
            self.announce()
        finally:
            await self.close(code=CLOSE_SILENT)

    def last_heard(self) -> float:
        """When the page last sent a frame (``time.monotonic()``): one this socket read, or a ping
        its transport answered (:mod:`checkers_site.keepalive`)."""
        if self.keepalive is None:
            return self.heard
        return max(self.heard, self.keepalive.heard)

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
        self.heard = arrived_mono
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
            elif exc.code == SESSION_ENDED:
                await self.close(code=CLOSE_SEAT_MOVED, reason="session ended")
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
        """Count one message of this socket, of its session and of its client address
        (``GAME_SOCKET_RATE_LIMIT``, ``GAME_SESSION_RATE_LIMIT``, ``GAME_ADDRESS_RATE_LIMIT``, the
        last two shared by the session's, and the address's, sockets in this process); False
        (after telling this socket's client, at most once a second) when over any of them.  A
        message refused by one limit is not counted by the next ones."""
        if self.limit is None:
            self.limit = RateLimited(settings.GAME_SOCKET_RATE_LIMIT)
        now = time.monotonic()
        allowed, notify = self.limit.allow(now)
        for shared in (self.session_limit, self.address_limit):
            if allowed and shared is not None and not shared.hit(now):
                allowed, notify = False, self.limit.notices.hit(now)
        if self.kicked:
            return False
        if not allowed and self.flooding(now):
            # No page sends like this: close it (4429, the page gives up) instead of reading on.
            self.kicked = True
            await self.close(code=CLOSE_TOO_MANY_SOCKETS, reason=f"over the message rate {KICK_AFTER_REFUSED} "
                                                                 f"times in {KICK_WINDOW_S:.0f} s")
            return False
        if notify:
            try:
                await self.send_message(RATE_LIMITED)
            except Exception as exc:  # noqa: BLE001 - the flooding client went away meanwhile
                log.debug("could not send rate_limited to a closing socket: %s", exc)
        return allowed

    def flooding(self, now: float) -> bool:
        """Count one refused message (``now``: monotonic s); True when this socket has had more
        than :data:`KICK_AFTER_REFUSED` refused in the last :data:`KICK_WINDOW_S` seconds."""
        if self.refused is None:
            self.refused = collections.deque()
        self.refused.append(now)
        while self.refused[0] <= now - KICK_WINDOW_S:
            self.refused.popleft()
        return len(self.refused) > KICK_AFTER_REFUSED

    async def handle(self, message: ClientMessage, arrived: datetime | None = None) -> None:
        """Carry out one parsed client message that arrived at ``arrived`` (default: now).
        Raises :class:`ActionError`, ``DatabaseError``."""
        if self.signed_in and isinstance(message, (PlayMove, Action, ForecastLines, Chat)):
            await self.check_log_in()
        if self.role == "S" and isinstance(message, (PlayMove, Action, ForecastLines)):
            await self.check_seated(message)
        if isinstance(message, Ping):
            # Heard (receive noted it): nothing else to do.  The socket's presence and admission
            # entries are renewed by its process with all the others' (presence.Keeper,
            # admission.Keeper), not by each ping (every 3 s, so that a silent page is noticed).
            # Behind the site's transport most pings never come here (checkers_site.keepalive).
            try:
                await self.send_text(PONG)
            except Exception as exc:  # noqa: BLE001 - the socket closed meanwhile: nothing to answer
                log.debug("could not answer a ping on a closing socket: %s", exc)
        elif isinstance(message, Sync):
            await self.sync(message.v)
        elif isinstance(message, PlayMove):
            progress = await turns.run(self.game_id, actions.play_move, self.player_id, message.move,
                                       message.v, arrived_at=arrived, on_loop=actions.play_move_on_loop)
            await self.publish(progress)
            if progress.events and progress.game.control.days:
                # The opponent's forecast may answer this move: its reply is an ordinary move, played
                # and published after this one (game.correspondence.forecasts).
                await self.answer_forecast()
        elif isinstance(message, ForecastLines):
            progress = await turns.run(self.game_id, forecasts.save, self.player_id, message.lines, arrived)
            await self.publish(progress)
        elif isinstance(message, ClockCheck):
            if self.deadline is not None and time.monotonic() >= self.deadline - CLOCK_CHECK_LEAD_S:
                await self.check_clock()
        elif isinstance(message, Action):
            if message.name in NEW_GAME_ACTIONS:
                await self.count_new_game()
            progress = await turns.run(self.game_id, ACTIONS[message.name], self.player_id, arrived)
            await self.publish(progress)
        elif isinstance(message, Chat):
            # No turn of the game's actions and no row lock: a line does not change the game.
            progress = await in_db_thread(chat.say)(self.game_id, self.speaker(), message.room, message.text)
            await self.publish(progress)

    async def count_new_game(self) -> None:
        """Count a message that may start a new game (a rematch) against the new-game limits of the
        session and the client address, as ``POST /`` and ``POST /computer`` are
        (:data:`game.http_limits.GAME_CREATE`): the computer accepts a rematch at once, so a loop of
        resignations and rematches would otherwise make games without end.  Raises
        :class:`ActionError` ``rate_limited`` over the limits (its message says when to try again)."""
        wait = await in_db_thread(http_limits.retry_after)(http_limits.GAME_CREATE, self.player_id, self.address)
        if wait is not None:
            raise ActionError("rate_limited", lazy_text(_("Too many new games; try again in %(seconds)s s."),
                                                        seconds=wait))

    async def answer_forecast(self) -> None:
        """Play the forecast reply the last move calls for, if one is pending
        (:func:`game.correspondence.forecasts.reply`), and publish it."""
        try:
            await self.publish(await turns.run(self.game_id, forecasts.reply))
        except (ActionError, DatabaseError) as exc:
            log.warning("could not play the forecast reply in %s: %s", self.game_id, exc)

    def speaker(self) -> chat.Speaker:
        """This socket's voice in the game's chat (its own line rate), made on its first line."""
        if self._speaker is None:
            session = self.scope.get("session")
            self._speaker = chat.Speaker(self.player_id, session.get("name") if session is not None else None,
                                         self.language)
        return self._speaker

    async def sync(self, v: int | None) -> None:
        """Answer ``sync``: ``synced`` when the page already has the game's version ``v``, else a
        snapshot; both from this process's snapshots of the game while fresh
        (:mod:`game.round.snapshots`: a sync that finds nothing changed reads nothing)."""
        if v is not None and await fanout.hub().snapshots.version(self.game_id) == v:
            await self.send_message({"type": "synced", "v": v})
            return
        await self.send_snapshot()

    async def check_log_in(self) -> None:
        """Before an action of a signed-in session's socket: refuse it ``session_ended`` when the
        session's log-in no longer holds (:func:`game.accounts.identity.log_in_holds`: logged out,
        password changed, account deleted, from any browser and any server process); the socket
        is then closed with :data:`CLOSE_SEAT_MOVED`.  Raises :class:`ActionError`."""
        if not await in_db_thread(identity.log_in_holds)(self.scope.get("session")):
            self.signed_in = False
            self.player_id = None
            raise ActionError(SESSION_ENDED, identity.SESSION_ENDED_MESSAGE)

    async def check_seated(self, message: PlayMove | Action | ForecastLines) -> None:
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
            await self.send_copy(await fanout.hub().snapshots.copy(self.game_id, self.player_id, self.role))

    async def send_copy(self, snapshot: snapshots.Copy) -> None:
        """Send a snapshot already encoded for this socket and follow the clock of its state."""
        await self.send_text(snapshot.text)
        self.follow_clock(events.follow_of(snapshot.state))

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
            await self.send_text(text)
        except Exception as exc:  # noqa: BLE001 - the page asks again when it sees a gap
            # Its disconnect still runs (hub and presence cleanup).
            log.debug("could not forward an event to a closing socket: %s", exc)
            return
        if follow is not None:
            self.follow_clock(follow)
        if self.role == "S" and self.player_id and text.startswith(SEATS_PREFIX):
            in_background(self.reseat())
        elif self.role in ("B", "W") and text.startswith(SEATS_PREFIX):
            in_background(self.check_seat())

    async def check_seat(self) -> None:
        """The seats changed while this socket is a seat's: if its session no longer holds that
        seat (handed over, :mod:`game.round.handover`), it is closed with :data:`CLOSE_SEAT_MOVED`
        and the page reconnects with the browser's current cookie."""
        seat = await in_db_thread(reads.seat_of)(self.game_id, self.player_id)
        if seat is None or seat.value != self.role:
            await self.close(code=CLOSE_SEAT_MOVED, reason="seat moved")

    async def reseat(self) -> None:
        """A seat was taken while this socket watches: if it was taken by this socket's own
        viewer (another tab of the same browser joined), this socket becomes that seat's socket
        at once (its copy of every event, the players' chat, the legal moves, its presence as
        the player) and is sent a snapshot for the seat."""
        seat = await in_db_thread(reads.seat_of)(self.game_id, self.player_id)
        if seat is None or self.role != "S" or self.closed:
            return
        if self.entered and not self.silent:
            await presence.leave(self.game_id, self.channel_name, self.role)
        self.role = seat.value
        logs.bind(seat=self.role)
        if self.entered and not self.silent and not self.closed:
            presence.keeper().keep(self.game_id, self.channel_name, self.role)
            await presence.refresh(self.game_id, self.channel_name, self.role)
            self.announce()
        await self._resync()

    def resync(self) -> None:
        """The hub may have missed events (:meth:`game.round.fanout.Member.resync`): send a
        snapshot (after any snapshot on its way, which may have been read before).  Redis may
        also have lost this socket's presence (a restart): it is written again at once, not at
        the page's next ping."""
        in_background(self._resync())
        if self.entered and not self.silent and not self.closed:
            in_background(presence.refresh(self.game_id, self.channel_name, self.role))

    async def _resync(self) -> None:
        try:
            await self.send_snapshot()
        except Exception as exc:  # noqa: BLE001 - the browser went away mid-send
            log.warning("could not resynchronise a socket of game %s: %s", self.game_id, exc)

    async def send_text(self, text: str) -> None:
        """Send one text frame, straight to the server (:data:`checkers_site.handshakes.FRAME_SEND`)
        past the middlewares' checks of every message, or through them where the scope has no
        such ``send`` (a consumer run without :class:`checkers_site.handshakes.HandshakeLog`)."""
        frame_send = cast("Callable[[dict[str, Any]], Awaitable[None]] | None", self.scope.get(FRAME_SEND))
        if frame_send is None:
            await self.send(text_data=text)
        else:
            await frame_send({"type": "websocket.send", "text": text})

    async def send_message(self, message: dict[str, Any]) -> None:
        """Send one message to this socket only (an ``error``, ``pong``), encoded by
        :func:`game.round.events.encode`, its human texts in this socket's language."""
        await self.send_text(events.encode(resolved(message, self.language)))

    async def send_event(self, event: events.Event) -> None:
        """Send ``event`` (this socket's copy of it, if it has one) and follow the clock of the
        state it carries, if any (:meth:`game.round.fanout.Fallback.send_event`)."""
        payload = event.for_role(self.role)
        if payload is None:
            return
        await self.send_text(events.encode(payload))
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
        """Ask the server's clock whether the side to move has run out; publish the end if so.
        If not (an outage of the game events was not charged), follow the clock as it is now."""
        progress = await turns.run(self.game_id, actions.check_clock)
        await self.publish(progress)
        if not progress.events and self.role in ("B", "W"):
            game = progress.game
            self.follow_clock({"clock": game.clock.state(timezone.now()), "status": game.status})
