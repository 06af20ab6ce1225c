"""Who is at a game: a socket's presence, the silence that ends it, its seat changing, and the
``audience`` notices that tell every page of the game.

Each game socket has a :class:`Watch` from the moment its snapshot is sent: its entry in the
game's presence (:mod:`game.round.presence`, kept by the process with every other socket's), and
a watchdog that closes the socket once the page has been silent for :data:`SILENT_AFTER_S` (a
network gone without a close frame).  When the seats change while the socket is open, a
spectator's socket whose own viewer took a seat becomes that seat's (:func:`reseat`) and a seat's
socket whose session no longer holds the seat is closed (:func:`check_seat`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

from checkers_site.keepalive import Keepalive, of_scope
from checkers_site.ops import logs
from game.clock import TimeControl
from game.round import events, fanout, presence, reads
from game.round.protocol import CLOSE_SEAT_MOVED, CLOSE_SILENT
from game.round.role import Role
from game.round.round import Round
from game.sockets import in_background, in_db_thread

log = logging.getLogger(__name__)

#: Seconds without a frame from the page after which its socket counts as gone (the page pings every
#: ``protocol.PING_EVERY_S``) and is closed with :data:`~game.round.protocol.CLOSE_SILENT`.
SILENT_AFTER_S = 10.0
#: Seconds between two ``audience`` notices of one game from one process.
AUDIENCE_EVERY_S = 1.0


class Watched(Protocol):
    """What a watch needs of its game socket."""

    game_id: str
    channel_name: str
    player_id: str | None
    round: Round
    role: Role
    scope: Any
    #: The socket has closed: tasks still running for it change nothing.
    closed: bool

    async def close(self, code: int | None = None, reason: str | None = None) -> None:
        """Close the socket with ``code``."""

    async def resend_snapshot(self) -> None:
        """Send the page a fresh snapshot (a failure is logged, nothing more)."""


class Watch:
    """One socket's presence in its game, from :meth:`enter` until it leaves (:meth:`leave`) or
    falls silent."""

    def __init__(self, socket: Watched, state: dict[str, Any]):
        self.socket = socket
        #: Seconds the game's sightings are kept after each write (by its time control, in ``state``).
        self.kept_s = presence.seen_ttl_s(control_of(state))
        #: The first write of the socket's presence entry, under way.
        self.entering: asyncio.Task[None] | None = None
        #: When the page last sent a frame (``time.monotonic()``).
        self.heard = time.monotonic()
        #: The transport's keep-alive of this socket, when it answers pings itself (None: it does not).
        self.keepalive: Keepalive | None = None
        self.watchdog: asyncio.Task[None] | None = None
        #: The page was found silent: the socket has left the game's presence.
        self.silent = False

    def enter(self) -> None:
        """The socket's snapshot is sent: it counts as present (kept by the process until it
        leaves: :class:`game.round.presence.Keeper`; written in the background, so that a burst of
        sockets connecting does not hold up their first moves), its silence is watched from now
        on, and the game's pages are told who is there."""
        socket = self.socket
        presence.keeper().keep(socket.game_id, socket.channel_name, socket.role.letter, self.kept_s)
        self.entering = in_background(presence.refresh(socket.game_id, socket.channel_name, socket.role.letter,
                                                       self.kept_s))
        self.heard = time.monotonic()
        # The site's transport answers this page's pings from now on (checkers_site.keepalive).
        self.keepalive = of_scope(socket.scope)
        if self.keepalive is not None:
            self.keepalive.answering = True
        self.watchdog = asyncio.get_running_loop().create_task(self._watch_silence())
        announce(socket.round)

    def last_heard(self) -> float:
        """When the page last sent a frame (``time.monotonic()``): one the socket read, or a ping
        its transport answered (:mod:`checkers_site.keepalive`)."""
        if self.keepalive is None:
            return self.heard
        return max(self.heard, self.keepalive.heard)

    async def _watch_silence(self) -> None:
        """Close the socket once the page has sent nothing for :data:`SILENT_AFTER_S` seconds.

        A network that drops without a close frame (a laptop closed, a tunnel) leaves the socket
        open here for minutes; a page pings every few seconds, so silence this long means it is
        gone.  The socket leaves the game's presence at once (the opponent's page sees the player
        away within a second, :data:`AUDIENCE_EVERY_S`) and is closed with ``CLOSE_SILENT``; the
        page, once its network is back, connects again and gets a snapshot.
        """
        while (left := self.last_heard() + SILENT_AFTER_S - time.monotonic()) > 0:
            await asyncio.sleep(left)
        log.info("game socket silent for %.0f s: closed", SILENT_AFTER_S)
        self.silent = True
        try:
            await self._leave_presence()
        finally:
            await self.socket.close(code=CLOSE_SILENT)

    async def _leave_presence(self) -> None:
        socket = self.socket
        if self.entering is not None and not self.entering.done():
            await asyncio.wait([self.entering])  # the entry is written before it is removed
        await presence.leave(socket.game_id, socket.channel_name, socket.role.letter, self.kept_s)
        announce(socket.round)

    def stop(self) -> None:
        """The socket closes: its entry is renewed no more (it expires if a late write puts it
        back), its pings are no longer answered for it, its silence no longer watched."""
        presence.keeper().drop(self.socket.channel_name)
        if self.keepalive is not None:
            self.keepalive.answering = False
        if self.watchdog is not None and self.watchdog is not asyncio.current_task():
            self.watchdog.cancel()

    async def leave(self) -> None:
        """The socket closed: it leaves the game's presence (unless it left when it fell silent)."""
        if not self.silent:
            await self._leave_presence()

    def refresh(self) -> None:
        """Write the socket's presence entry again at once (Redis may have lost it: a restart)."""
        if not self.silent:
            socket = self.socket
            in_background(presence.refresh(socket.game_id, socket.channel_name, socket.role.letter, self.kept_s))

    async def move_to(self, role: Role) -> None:
        """The socket's viewer now holds ``role``'s seat: its presence moves there."""
        socket = self.socket
        if not self.silent:
            await presence.leave(socket.game_id, socket.channel_name, socket.role.letter, self.kept_s)
        socket.role = role
        logs.bind(seat=role.letter)
        if not self.silent and not socket.closed:
            presence.keeper().keep(socket.game_id, socket.channel_name, role.letter, self.kept_s)
            await presence.refresh(socket.game_id, socket.channel_name, role.letter, self.kept_s)
            announce(socket.round)


def control_of(state: dict[str, Any]) -> TimeControl:
    """The time control of the game whose state (a snapshot's, an event's) is ``state``."""
    clock = state.get("clock")
    return TimeControl.parse(clock["control"]) if clock else TimeControl()


async def check_seat(socket: Watched) -> None:
    """The seats changed while ``socket`` is a seat's: if its session no longer holds that seat
    (handed over, :mod:`game.round.handover`), it is closed with ``CLOSE_SEAT_MOVED`` and the page
    reconnects with the browser's current cookie."""
    seat = await in_db_thread(reads.seat_of)(socket.game_id, socket.player_id)
    if seat is None or seat.value != socket.role.letter:
        await socket.close(code=CLOSE_SEAT_MOVED, reason="seat moved")


async def reseat(socket: Watched, watch: Watch | None) -> None:
    """A seat was taken while ``socket`` watches: if it was taken by the socket's own viewer
    (another tab of the same browser joined), the socket becomes that seat's socket at once (its
    copy of every event, the players' chat, the legal moves, its presence as the player) and is
    sent a snapshot for the seat.  ``watch``: the socket's presence (None before it entered)."""
    seat = await in_db_thread(reads.seat_of)(socket.game_id, socket.player_id)
    if seat is None or socket.role.seated or socket.closed:
        return
    if watch is not None:
        await watch.move_to(Role(seat.value))
    else:
        socket.role = Role(seat.value)
        logs.bind(seat=socket.role.letter)
    await socket.resend_snapshot()


def announce(round_: Round) -> None:
    """Soon tell every socket of the game who is watching (``{"type": "audience", ...}``,
    unversioned): at most one notice per game and process every :data:`AUDIENCE_EVERY_S`
    seconds, however many sockets come and go, so a crowd joining costs O(sockets), not
    O(sockets²)."""
    if round_.audience is None:
        round_.audience = asyncio.get_running_loop().create_task(_announce_later(round_))


async def _announce_later(round_: Round) -> None:
    game_id = round_.game_id
    try:
        await asyncio.sleep(AUDIENCE_EVERY_S)
        round_.audience = None  # a change from now on schedules the next notice
        audience = await presence.audience(game_id)
        # The game's version rides along: a page behind it missed an event (one whose publish
        # died with its server process, say) and asks for a snapshot.
        game_v = await in_db_thread(reads.version)(game_id)
        await fanout.publish(game_id, [events.AudienceEvent(game_v=game_v, **audience)])
    except Exception as exc:  # noqa: BLE001 - a notice is a convenience; never fatal
        log.warning("could not announce the audience of %s: %s", game_id, exc)
    finally:
        if round_.audience is asyncio.current_task():
            round_.audience = None
        round_.released()
