"""The lobby socket: "Play online" seeks, pool counts, and the news of a pairing.

One socket per open home page at ``/ws/lobby/``.  The browser sends ``seek``
to look for an opponent in a pool and ``cancel`` to stop; the socket holds at
most one seek at a time and refreshes it in Redis every few seconds (its
heartbeat), so a seek disappears when its player cancels, closes the page or
loses the connection, and expires by itself when this server process dies.

Every seek that enters a pool makes this process settle the pool in the
background (:func:`game.lobby.settling.request_settle`); each pairing becomes a
game, and ``lobby.paired`` comes through the channel layer to the socket of
each seek, whichever process created the game (:mod:`game.lobby.paired`).

Every socket of the lobby receives ``pool`` messages with the number of waiting seeks: on
connect, after changes (:mod:`game.lobby.fanout`, which hears every process's changes and writes
the same text to each socket of this process) and every :data:`COUNT_REFRESH_S` seconds (expired
seeks change nothing else).  A client that keeps sending over its rate is closed
(:class:`game.sockets.Guard`).

A page that sends ``watch`` is also sent the seeks waiting in every pool and the counters (players
online, games in play), kept up to date (:mod:`game.lobby.seeklist`; the changes come in ``seeks``
with their pools' counts, instead of ``pool`` messages); a ``seek`` naming one of
those seeks in ``accept`` plays it at once (:mod:`game.lobby.accepting`).

When the matchmaking Redis cannot be reached the player gets the error
``matchmaking_unavailable``; nothing else depends on it.  The protocol is in
``docs/protocol.md`` ("Lobby socket").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
import uuid
from typing import TYPE_CHECKING

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.utils.translation import gettext_lazy as _

from checkers_site.handshakes import send_frame
from checkers_site.ops import logs, metrics
from game import sessions
from game.errors import ActionError
from game.i18n import language_of_scope, resolved
from game.lobby import accepting, fanout, pools, seekers, seeklist
from game.lobby.groups import player_group
from game.lobby.pairing import POOLS, RANGE_MAX, RANGE_START, RANGE_STEP, RANGE_STEP_S, Seek
from game.lobby.pools import MatchmakingUnavailable
from game.lobby.protocol import CancelSeek, Ping, SeekGame, WatchSeeks, parse_lobby_message
from game.lobby.settling import request_settle
from game.round import admission
from game.round.fanout import Unavailable
from game.sockets import RATE_LIMITED, Guard, ProtocolError, decode_frame, in_db_thread

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

log = logging.getLogger(__name__)

#: Close code sent to a socket whose session has no player id.
CLOSE_NO_SESSION = 4401
#: Close code sent when the session or the client address holds its most lobby sockets.
CLOSE_TOO_MANY_SOCKETS = 4429
#: Close code sent to the lobby sockets of an account deleted meanwhile (from any browser), and to a
#: socket seeking with a session whose log-in ended (logged out, password changed): the page
#: reconnects with the browser's cookie as it is now, as a game page does.
CLOSE_SESSION_ENDED = 4409
#: Seconds between two renewals of this socket's entry in the socket counts (they live 60 s).
ADMISSION_REFRESH_S = 20.0
#: Seconds between pushes of the counts when nothing changes (seeks of dead processes expire silently).
COUNT_REFRESH_S = 10.0

#: How a rated seek's rating range widens, as the ``seeking`` answer tells the page: points at first,
#: points more every ``step_s`` seconds of waiting, at most ``max`` (game.lobby.pairing.rating_range).
RATING_RANGE = {"start": RANGE_START, "step": RANGE_STEP, "step_s": RANGE_STEP_S, "max": RANGE_MAX}

#: Messages one lobby socket may send (each seek or cancel costs Redis calls); more are refused.
RATE_LIMIT = "20/second;240/minute"

UNAVAILABLE_MESSAGE = _("Matchmaking is unavailable right now; please try again in a moment. "
                        "Games in progress are not affected.")
NO_SESSION_MESSAGE = _("Your browser has no player id yet: reload the home page.")


def heartbeat_s() -> float:
    """Seconds between two refreshes of a seek: ``MATCHMAKING_HEARTBEAT``, at most a third of the seek TTL."""
    return min(float(settings.MATCHMAKING_HEARTBEAT), float(settings.MATCHMAKING_SEEK_TTL) / 3)


def error(code: str, message: str | StrPromise) -> dict:
    """The ``error`` message sent to the one socket concerned (its message becomes words in the
    socket's language when sent: :meth:`LobbyConsumer.send_json`)."""
    return {"type": "error", "code": code, "message": message}


class LobbyConsumer(AsyncJsonWebsocketConsumer):
    """Websocket consumer of one home page: its player's seek (at most one) and the pool counts."""

    seek: Seek | None = None
    ticket: admission.Ticket | None = None
    #: Monotonic time of the first of the heartbeat's failures in a row (None: the last one worked).
    failing_since: float | None = None
    #: This socket's rate limit and flood kick (:class:`game.sockets.Guard`), made at connect.
    guard: Guard
    cancelling = False
    player_id: str | None = None
    ticker: asyncio.Task | None = None
    joined: tuple[str, ...] = ()
    #: Counted in the open sockets' gauge (from a connect that joined its groups to its disconnect).
    counted = False
    #: The language of the socket's human texts (game.i18n.language_of_scope), read at connect.
    language: str | None = None
    #: The page sent ``watch`` (once is enough).
    watch_asked = False
    #: The page shows the seeks and counters: they are sent with the counts, and the fan-out sends
    #: it the seeks that change (set once :attr:`hidden` is known).
    watching = False
    watching_since = 0.0   # time.monotonic() when this socket started watching
    news_since = 0.0       # time.monotonic() when this socket joined the fan-out
    #: The players whose seeks this page is not shown: those its player blocks or is blocked by
    #: (:func:`game.lobby.seekers.hidden_from`), read when it starts watching.
    hidden: frozenset[str] = frozenset()

    async def connect(self):
        self.guard = Guard(RATE_LIMIT)
        self.language = language_of_scope(self.scope)
        session = self.scope.get("session")
        self.player_id = session.get("player_id") if session is not None else None
        self.session_name = session.get("name") if session is not None else None
        self.lock = asyncio.Lock()
        await self.accept()
        if not self.player_id:
            await self.send_json(error("no_session", NO_SESSION_MESSAGE))
            await self.close(code=CLOSE_NO_SESSION)
            return
        client = self.scope.get("client")
        self.ticket, over = await admission.admit(self.channel_name, self.player_id,
                                                  client[0] if client else None, kind="lobby")
        if over is not None:
            limit = admission.limits_of("lobby")[0 if over == admission.OVER_SESSION else 1]
            await self.close(code=CLOSE_TOO_MANY_SOCKETS, reason=f"lobby {over} limit {limit} reached")
            return
        try:
            await self.join(player_group(self.player_id))
            await self.join_fanout()
            await self.send_counts()
        except BaseException:
            # The page went away while this socket connected (a quick reload: sending to it
            # raised, or the server cancelled the consumer): channels will not call disconnect,
            # so the groups joined so far are left here, or this channel would stay in them.
            await self.leave_groups()
            if self.ticket is not None:
                await admission.release(self.ticket)
            raise
        self.ticker = asyncio.create_task(self.tick())
        self.counted = True
        metrics.lobby_sockets.inc()

    async def join(self, group: str) -> None:
        """Join a channel-layer group, remembered for :meth:`leave_groups`.  A failure is logged:
        without the player's group other tabs' seeks simply expire or get cancelled, without a
        pool's group its counts are not pushed; seeking still works."""
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except Exception as exc:  # noqa: BLE001 - see the docstring
            log.warning("lobby: could not join %s: %s", group, exc)
            return
        self.joined = (*self.joined, group)

    async def join_fanout(self) -> None:
        """Get the news of every pool's changes from now on (:mod:`game.lobby.fanout`).  A failure
        (no subscription confirmed: Redis down) is logged: the counts and seeks then come with this
        socket's own refreshes only; seeking still works."""
        try:
            await fanout.fanout().join(self)
        except Unavailable as exc:
            log.warning("lobby: no news of the pools' changes for this socket: %s", exc)
        self.news_since = time.monotonic()

    async def leave_groups(self) -> None:
        """Leave the fan-out and every group joined (errors ignored: the memberships then expire in
        Redis)."""
        fanout.fanout().leave(self)
        groups, self.joined = self.joined, ()
        for group in groups:
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(group, self.channel_name)

    async def disconnect(self, code):
        logs.bind(close_code=code)
        if self.counted:
            self.counted = False
            metrics.lobby_sockets.dec()
        if self.ticker is not None:
            self.ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.ticker
        if self.seek is not None:
            async with self.lock:
                seek, self.seek = self.seek, None
                if seek is not None:
                    try:
                        await pools.from_settings().cancel(seek)
                        fanout.changed(seek.pool)
                    except MatchmakingUnavailable:
                        pass  # it expires by itself
        await self.leave_groups()
        if self.ticket is not None:
            ticket, self.ticket = self.ticket, None
            await admission.release(ticket)

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        if not await self.within_rate_limit():
            return
        try:
            message = parse_lobby_message(decode_frame(text_data, bytes_data))
        except ProtocolError as exc:
            await self.send_json(error(exc.code, exc.message))
            return
        if not self.player_id:
            await self.send_json(error("no_session", NO_SESSION_MESSAGE))
            return
        try:
            await self.handle(message)
        except ActionError as exc:
            await self.send_json(exc.as_event())
        except MatchmakingUnavailable as exc:
            log.warning("lobby: matchmaking unavailable: %s", exc)
            await self.send_json(error("matchmaking_unavailable", UNAVAILABLE_MESSAGE))

    async def send_text(self, text: str) -> None:
        """Send one frame already encoded, as it is (:func:`checkers_site.handshakes.send_frame`): the
        fan-out's news, encoded once for every socket of the process."""
        await send_frame(self, text)

    async def send_json(self, content, close=False):
        """Send ``content`` with its human texts in this socket's language (codes stay English)."""
        await super().send_json(resolved(content, self.language), close=close)

    async def within_rate_limit(self) -> bool:
        """Count one message of this socket; False when over :data:`RATE_LIMIT` (told at most once a
        second).  A socket that keeps sending over it is closed with :data:`game.sockets.CLOSE_FLOODING`
        (:class:`game.sockets.Guard`)."""
        return await self.guard.admit(lambda code, reason: self.close(code=code, reason=reason),
                                      lambda: self.send_json(RATE_LIMITED))

    async def handle(self, message):
        """Carry out one parsed client message.  Raises ActionError or MatchmakingUnavailable."""
        if isinstance(message, Ping):
            await self.send_json({"type": "pong"})
        elif isinstance(message, SeekGame):
            await self.start_seeking(message)
        elif isinstance(message, CancelSeek):
            await self.cancel_seek()
        elif isinstance(message, WatchSeeks) and not self.watch_asked:
            self.watch_asked = True
            if self.player_id and sessions.signed_in(self.scope.get("session")):   # a guest blocks nobody
                self.hidden = await in_db_thread(seekers.hidden_from)(self.player_id)
            self.watching_since = time.monotonic()
            self.watching = True    # the fan-out sends this page the seeks (without the hidden) from now on
            await self.send_counts()

    async def start_seeking(self, message: SeekGame) -> None:
        """Put this socket's seek into the pool, tell the player, then settle the pool.

        A rated pool takes only a signed-in account (ActionError ``rated_needs_account``); its seek
        is the account's, under its username, with its rating in the pool's category (a log-in
        that no longer holds is a guest's there: ``rated_needs_account``).  A casual seek from a
        socket of a signed-in session whose log-in ended since (logged out, password changed,
        account deleted), or of a guest id that has logged in to an account since
        (:func:`game.sessions.log_in_holds`), is told ``session_ended`` and the socket closed
        (:data:`CLOSE_SESSION_ENDED`): it seeks no more as that identity.  With ``accept`` (a seek of
        the list clicked) the seek meets that one at once or is refused, storing nothing
        (:func:`game.lobby.accepting.play_seek`: ActionError ``seek_gone``, ``own_seek``,
        ``out_of_range``)."""
        session = self.scope.get("session")
        if not POOLS[message.pool].rated and not await in_db_thread(sessions.log_in_holds)(session):
            await self.send_json(error("session_ended", sessions.SESSION_ENDED_MESSAGE))
            await self.close(code=CLOSE_SESSION_ENDED)
            return
        async with self.lock:
            if self.seek is not None:
                raise ActionError("already_seeking", _("You are already looking for a game."))
            assert self.player_id is not None  # receive() refuses a session without one
            seek = await seekers.new_seek(session, message, self.player_id, self.session_name, self.channel_name)
            if seek.player != self.player_id:  # a rated seek of a session older than its log-in's player id
                await self.join(player_group(seek.player))
            if message.accept is not None:  # a seek of the list clicked: that game at once, or a refusal
                await accepting.play_seek(seek, message.accept)
                fanout.changed(seek.pool)
                return
            mm = pools.from_settings()
            try:
                seek, status = await mm.add(seek)
            except MatchmakingUnavailable:
                # Redis may have run the ADD and lost the answer: take the seek back if it can.
                with contextlib.suppress(MatchmakingUnavailable):
                    await mm.cancel(seek)
                raise
            self.seek, self.cancelling = seek, False
        answer: dict = {"type": "seeking", "pool": seek.pool, "waiting": status.waiting, "seek": seek.id}
        if seek.rating is not None:  # a rated seek: its rating and how its range widens (pairing.rating_range)
            answer["rating"] = seek.rating
            answer["range"] = RATING_RANGE
        await self.send_json(answer)
        fanout.changed(seek.pool)
        request_settle(seek.pool)

    async def cancel_seek(self) -> None:
        """Take this socket's seek out of the pool; answer ``cancelled`` (unless it was just paired)."""
        async with self.lock:
            seek = self.seek
            if seek is None:
                await self.send_json({"type": "cancelled", "pool": None})
                return
            status = await pools.from_settings().cancel(seek)
            if status.state == "claimed":
                self.cancelling = True  # too late: the game is being created and `paired` follows
                return
            self.seek = None
        await self.send_json({"type": "cancelled", "pool": seek.pool, "waiting": status.waiting})
        fanout.changed(seek.pool)

    async def send_counts(self) -> None:
        """Send this socket the number of seeks waiting in each pool (``pool`` messages), or to a page
        that watches every pool's seeks with their counts and the counters instead
        (:mod:`game.lobby.seeklist`); or ``matchmaking_unavailable``.  Every pool is read at most
        once every :data:`game.lobby.seeklist.LISTS_TTL_S` by the process, and never before this
        socket joined the fan-out."""
        try:
            if self.watching:
                await seeklist.mark_online(self.player_id or "")
                for news in await seeklist.everything(self.watching_since, self.hidden):
                    await self.send_json(news)
                return
            every = await seeklist.every_pool(self.news_since)
            for pool, waiting in every["waiting"].items():
                await self.send_json({"type": "pool", "pool": pool, "waiting": waiting})
        except MatchmakingUnavailable as exc:
            log.warning("lobby: matchmaking unavailable: %s", exc)
            await self.send_json(error("matchmaking_unavailable", UNAVAILABLE_MESSAGE))

    async def tick(self) -> None:
        """Every heartbeat: refresh this socket's seek; now and then, send this socket fresh pool counts."""
        next_counts = next_admission = time.monotonic() + COUNT_REFRESH_S
        while True:
            await asyncio.sleep(heartbeat_s())
            if self.ticket is not None and time.monotonic() >= next_admission:
                next_admission = time.monotonic() + ADMISSION_REFRESH_S
                await admission.refresh(self.ticket)   # this socket still counts against its limits
            try:
                await self.heartbeat()
            except Exception:  # the heartbeat must go on
                log.exception("lobby: heartbeat failed")
            if time.monotonic() >= next_counts:
                # This socket's own refresh (counts that expired seeks changed without any
                # event); pushing to every lobby socket here would cost O(sockets²).
                next_counts = time.monotonic() + COUNT_REFRESH_S
                await self.send_counts()

    async def heartbeat(self) -> None:
        """Refresh the seek; seek again if it expired unpaired; settle the pool if others wait too."""
        async with self.lock:
            seek = self.seek
            if seek is None:
                return
            mm = pools.from_settings()
            try:
                status = await mm.refresh(seek)
                if status.state == "gone" and self.cancelling:
                    self.seek = None
                    await self.send_json({"type": "cancelled", "pool": seek.pool, "waiting": status.waiting})
                    return
                if status.state == "gone":
                    # Expired while this process stalled, or paired by a process that died before
                    # creating the game: the player is still here, so the seek goes back in.
                    seek, status = await mm.add(seek)
                    self.seek = seek
                    fanout.changed(seek.pool)
            except MatchmakingUnavailable as exc:
                # A passing fault keeps the seek: the next heartbeat refreshes it, or puts it
                # back if it expired meanwhile.  Only once Redis has failed for as long as a seek
                # lives is it given up, and the player told.
                now = time.monotonic()
                self.failing_since = self.failing_since or now
                if now - self.failing_since < float(settings.MATCHMAKING_SEEK_TTL):
                    log.warning("lobby: matchmaking unavailable, seek %s kept for now: %s", seek.id, exc)
                    return
                log.warning("lobby: matchmaking unavailable, seek %s dropped: %s", seek.id, exc)
                self.seek, self.failing_since = None, None
                await self.send_json(error("matchmaking_unavailable", UNAVAILABLE_MESSAGE))
                return
            self.failing_since = None
        if status.state == "waiting" and status.waiting >= 2:
            request_settle(seek.pool)

    async def lobby_paired(self, message):
        """Channel message ``lobby.paired`` (``seek``, ``game``, ``url``, ``color``): go to the game."""
        async with self.lock:
            current, self.seek, self.cancelling = self.seek, None, False
            if current is not None and current.id != message["seek"]:
                # A newer seek of this socket: the player is taken to the game, so it must go.
                with contextlib.suppress(MatchmakingUnavailable):
                    await pools.from_settings().cancel(current)
        await self.send_json({"type": "paired", "game": message["game"], "url": message["url"],
                              "color": message["color"]})

    async def lobby_withdraw(self, message):
        """Group message ``lobby.withdraw`` (``keep``, ``game``, ``url``): another tab of this player
        was paired; this socket's seek, if any, is taken out and the page told ``cancelled`` with
        ``reason`` ``paired_elsewhere``."""
        if message["keep"] == self.channel_name:
            return
        async with self.lock:
            seek = self.seek
            if seek is None:
                return
            try:
                status = await pools.from_settings().cancel(seek)
            except MatchmakingUnavailable:
                return
            if status.state == "claimed":
                return  # paired here too, at the same moment: `paired` follows
            self.seek = None
        await self.send_json({"type": "cancelled", "pool": seek.pool, "waiting": status.waiting,
                              "reason": "paired_elsewhere", "game": message["game"], "url": message["url"]})
        fanout.changed(seek.pool)

    async def lobby_account_deleted(self, message):
        """Group message ``lobby.account_deleted`` (:func:`game.lobby.groups.on_account_deleted`):
        this socket's player was an account deleted meanwhile.  Its seek, if any, is taken out and
        the page told ``cancelled`` with ``reason`` ``account_deleted``; then the socket closes
        (:data:`CLOSE_SESSION_ENDED`), so that no seek is made again as the deleted player."""
        async with self.lock:
            seek, self.seek = self.seek, None
            status = None
            if seek is not None:
                try:
                    status = await pools.from_settings().cancel(seek)
                except MatchmakingUnavailable as exc:  # it expires without its socket's refreshes
                    log.warning("lobby: could not cancel seek %s of a deleted account: %s", seek.id, exc)
        if seek is not None:
            await self.send_json({"type": "cancelled", "pool": seek.pool,
                                  "waiting": status.waiting if status is not None else 0,
                                  "reason": "account_deleted"})
            fanout.changed(seek.pool)
        await self.close(code=CLOSE_SESSION_ENDED)

    async def lobby_requeue(self, message):
        """Channel message ``lobby.requeue`` (``seek``): this socket's seek was paired with one that
        could not play (an account deleted since); it goes back in its pool under a new id (the
        old one is marked paired), and the page hears nothing of it."""
        async with self.lock:
            if self.seek is None or self.seek.id != message["seek"]:
                return
            try:
                seek, _status = await pools.from_settings().add(dataclasses.replace(self.seek, id=uuid.uuid4().hex))
            except MatchmakingUnavailable:
                self.seek = None
                await self.send_json(error("matchmaking_unavailable", UNAVAILABLE_MESSAGE))
                return
            self.seek = seek
        fanout.changed(seek.pool)
        request_settle(seek.pool)

    async def lobby_failed(self, message):
        """Channel message ``lobby.failed``: the pairing was made but its game could not be created."""
        async with self.lock:
            if self.seek is None or self.seek.id != message["seek"]:
                return
            self.seek, self.cancelling = None, False
        await self.send_json(error("pairing_failed", _("An opponent was found but the game could not be "
                                                       "created; please try again.")))
