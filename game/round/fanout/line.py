"""One pub/sub connection of a hub (:class:`Line`): the games' channels it reads, its link
channel, the confirmations it counts, and what it does when the connection is lost or back.

Pub/sub keeps nothing: what is published while a process is not subscribed never reaches it.
So a line also subscribes to a channel of its own (:data:`~game.round.fanout.transport.LINK_CHANNEL`),
first on every connection, and counts its confirmations: every confirmation after the first
(redis-py subscribes again by itself after a reconnection, or the line does after a failure, to
every game it serves, in the same command) means events may have been missed, and every socket
of the line's games is told to resynchronise (:meth:`~game.round.round.Member.resync`: it sends
its page a fresh snapshot, read after the subscription is back, so nothing published before it
is missing and everything after it arrives).  Events carry ``v``, so a page ignores one it
already has.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import logging
import time
from typing import Any, Protocol

import redis.asyncio

from checkers_site.ops import metrics
from game.round import outages
from game.round.events import EVERYONE, encode
from game.round.fanout.transport import Transport, Unavailable
from game.round.round import Member, Round

log = logging.getLogger(__name__)

#: Seconds between attempts to subscribe again after the subscription failed.
RETRY_S = 0.5
#: Seconds between two pings of the subscription's connection when nothing comes, and the silence
#: after which it is taken for lost (a link that died without closing, a Redis that hangs).
HEALTH_EVERY_S = 5.0
HEALTH_LIMIT_S = 12.0


def link_notice(up: bool) -> list[tuple[str, str]]:
    """The ``link`` notice for every socket, as the copies :meth:`Member.deliver` takes: ``up``
    False when this process lost its link to the game events (events of other processes come
    late; a snapshot follows when it is back), True when it is back."""
    return [(EVERYONE.key, encode({"type": "link", "up": up}))]


class Listener(Protocol):
    """What a hub's line needs of the reader of a channel that is not a game's (the lobby's seeks:
    :mod:`game.lobby.fanout`)."""

    async def hear(self, data: bytes) -> None:
        """A message published to the channel."""

    def resync(self) -> None:
        """Messages may have been missed (the subscription was lost and is back)."""


class Owner(Protocol):
    """What a line needs of its hub (:class:`game.round.fanout.hubs.Hub`)."""

    prefix: str
    transport: Transport
    rounds: dict[str, Round]
    listeners: dict[str, Listener]

    def line_of(self, game_id: str) -> Line:
        """The line that reads ``game_id``'s channel."""

    def has_members(self, game_id: str) -> bool:
        """Whether ``game_id`` has sockets in this process."""

    async def dispatch(self, name: bytes, data: bytes) -> None:
        """An event came on channel ``name``."""

    def subscription_confirmed(self, game_id: str) -> None:
        """``game_id``'s subscription is confirmed."""

    def wake_joins(self, game_id: str, confirmed: bool) -> None:
        """The joins waiting for ``game_id``'s subscription go on."""

    def count_subscriptions(self) -> None:
        """Update the subscriptions gauge."""


class Line:
    """One pub/sub connection of a hub and the games read on it (all of them on one Redis server;
    those of one shard on a cluster).

    ``subscriptions`` counts the confirmations of the line's link channel so
    far (0: not subscribed yet).  ``confirmed`` holds the games whose
    subscription Redis has confirmed on the current connection.
    """

    def __init__(self, hub: Owner, key: int):
        self.hub = hub
        self.key = key
        self.link = hub.transport.link_channel(key, hub.prefix)
        self.subscriptions = 0
        self.subscribed = asyncio.Event()
        #: The subscription was lost and is not back yet (this process's outage window is open).
        self.lost = False
        #: The key of that outage window (:meth:`game.round.outages.Tracker.begin`), while it is open.
        self.outage: int | None = None
        #: Set when the lost subscription is back: the events waiting to be published again go then.
        self.restored = asyncio.Event()
        self.reader: asyncio.Task | None = None
        #: Subscribe and unsubscribe commands not sent yet, in order: ``(command, game id)``.
        self.commands: collections.deque[tuple[str, str]] = collections.deque()
        self.commands_waiting = asyncio.Event()
        #: The last command queued or sent for a game on this connection (a game not here: none).
        self.last_command: dict[str, str] = {}
        #: Subscribe commands of a game whose confirmation has not come yet.
        self.outstanding: dict[str, int] = {}
        #: Unsubscribe commands of a game whose confirmation has not come yet.
        self.leaving: dict[str, int] = {}
        self.confirmed: set[str] = set()

    def start(self) -> None:
        """Start reading (once)."""
        if self.reader is None:
            # A context of its own: its log lines are the process's, not those of the socket that
            # happened to start it (checkers_site/ops/logs.py).
            self.reader = asyncio.get_running_loop().create_task(self._read(), context=contextvars.Context())

    def command(self, command: str, game_id: str) -> None:
        """Queue ``subscribe`` or ``unsubscribe`` of ``game_id`` for the connection's sender."""
        self.last_command[game_id] = command
        if command == "subscribe":
            self.outstanding[game_id] = self.outstanding.get(game_id, 0) + 1
            if self.outage is not None and game_id not in self.hub.listeners:
                outages.tracker.widen(self.outage, game_id)   # its events are held up too
        else:
            self.leaving[game_id] = self.leaving.get(game_id, 0) + 1
        self.commands.append((command, game_id))
        self.commands_waiting.set()

    async def _send_commands(self, pubsub: Any) -> None:
        """Send the queued commands on the subscription's connection, in order, as they come: a
        run of queued commands of one kind goes as one command naming all their games (a crowd
        joining at once costs a few round trips, not one each)."""
        prefix, transport = self.hub.prefix, self.hub.transport
        while True:
            await self.commands_waiting.wait()
            self.commands_waiting.clear()
            while self.commands:
                command = self.commands[0][0]
                names = []
                while self.commands and self.commands[0][0] == command:
                    names.append(prefix + self.commands.popleft()[1])
                if command == "subscribe":
                    await transport.subscribe(pubsub, names)
                else:
                    await transport.unsubscribe(pubsub, names)

    def games(self) -> list[str]:
        """The games with sockets here that this line reads."""
        return [g for g, r in self.hub.rounds.items() if r.members and self.hub.line_of(g) is self]

    def listened(self) -> list[str]:
        """The keys of the hub's listeners (:class:`Listener`) whose channel this line reads."""
        return [key for key in self.hub.listeners if self.hub.line_of(key) is self]

    def sockets(self) -> list[Member]:
        """The sockets of the games this line reads."""
        return [m for g in self.games() for m in self.hub.rounds[g].members]

    async def _read(self) -> None:
        hub, transport = self.hub, self.hub.transport
        while True:
            connection: redis.asyncio.Redis | None = None
            pubsub: Any = None
            sender: asyncio.Task | None = None
            try:
                connection = await transport.connect(self.key)
                pubsub = connection.pubsub()
                # Every game served here and every listener's channel, with the link channel: a
                # snapshot read after the link's confirmation misses no event of any of them.
                games = self.games() + self.listened()
                self.commands.clear()
                self.last_command = dict.fromkeys(games, "subscribe")
                self.outstanding = dict.fromkeys(games, 1)
                self.leaving = {}
                self.confirmed = set()
                await transport.subscribe_all(pubsub, self.link, [hub.prefix + g for g in games])
                sender = asyncio.get_running_loop().create_task(self._send_commands(pubsub))
                heard = time.monotonic()
                while True:
                    message = await pubsub.get_message(timeout=HEALTH_EVERY_S)
                    if sender.done():
                        sender.result()  # a command could not be sent: the link is broken
                    if message is None:
                        # Nothing for a while: a ping, whose answer comes as a message; a link
                        # that died without closing answers nothing and is given up.
                        if time.monotonic() - heard > HEALTH_LIMIT_S:
                            raise Unavailable(f"no answer from Redis for {HEALTH_LIMIT_S:.0f} s")
                        await pubsub.ping()
                        continue
                    heard = time.monotonic()
                    kind = message["type"]
                    if kind in transport.message_types:
                        await hub.dispatch(message["channel"], message["data"])
                    elif kind in transport.subscribe_types:
                        await self._confirmed(message["channel"])
                    elif kind in transport.unsubscribe_types:
                        self._unsubscribed(message["channel"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis failed: subscribe again, then resync
                await self._lost(exc)
                await asyncio.sleep(RETRY_S)
            finally:
                if sender is not None:
                    sender.cancel()
                    await asyncio.gather(sender, return_exceptions=True)
                try:
                    if pubsub is not None:
                        await pubsub.aclose()
                    if connection is not None:
                        await connection.aclose()
                except Exception:  # noqa: BLE001 - the connection is already broken
                    pass

    async def _confirmed(self, name: bytes) -> None:
        """Redis confirmed the subscription to channel ``name``: the link channel (the link is up)
        or a game's (its joins waiting for it go on, once the last subscribe sent is confirmed)."""
        text = name.decode()
        if text == self.link:
            await self._subscribed()
            return
        key = text[len(self.hub.prefix):]
        left = self.outstanding.get(key, 0) - 1
        if left > 0:
            self.outstanding[key] = left
            return
        self.outstanding.pop(key, None)
        if self.last_command.get(key) != "subscribe" or not self.hub.has_members(key):
            return
        self.confirmed.add(key)
        self.hub.subscription_confirmed(key)

    def _unsubscribed(self, name: bytes) -> None:
        """Redis confirmed leaving channel ``name``: nothing more to keep of that game, unless it was
        subscribed again meanwhile.  A leave nobody asked for (a cluster's shard gave the slot
        away) breaks the line: it connects again and resynchronises its games."""
        text = name.decode()
        key = text[len(self.hub.prefix):]
        left = self.leaving.get(key, 0)
        if text == self.link or left <= 0:
            raise Unavailable(f"Redis ended the subscription to {text}")
        if left > 1:
            self.leaving[key] = left - 1
        else:
            del self.leaving[key]
        if self.last_command.get(key) == "unsubscribe" and not self.outstanding.get(key):
            del self.last_command[key]

    async def _lost(self, exc: Exception) -> None:
        """The subscription failed: the first time since it was last confirmed, this process's
        outage window opens and every socket of the line's games is told (``link`` down)."""
        was_subscribed = self.subscribed.is_set()
        self.subscribed.clear()
        for game_id in self.games():
            self.hub.rounds[game_id].snapshots.reset()     # events are missed until subscribed again
            self.hub.wake_joins(game_id, False)
        self.confirmed = set()
        self.hub.count_subscriptions()
        if not was_subscribed:
            return   # still down (every retry fails), or never up: told already, or nobody here
        log.warning("game events subscription lost: %s", exc)
        self.lost = True
        self.restored = asyncio.Event()
        self.outage = outages.tracker.begin("subscription", self.games())
        notice = link_notice(False)
        for member in self.sockets():
            try:
                await member.deliver(notice, None)
            except Exception:  # one socket's failure must not stop the others
                log.exception("could not tell a socket that the game events are interrupted")

    async def _subscribed(self) -> None:
        """A confirmation of the link channel: after the first, events may have been missed, so
        every socket of the line's games is told the link is back and sent a fresh snapshot; the
        outage window (if any) ends first, so those snapshots charge nobody for it."""
        self.subscriptions += 1
        self.subscribed.set()
        lost, self.lost = self.lost, False
        if lost:
            self._outage_over()
            self.restored.set()
        if self.subscriptions > 1:
            sockets = self.sockets()
            metrics.resubscriptions.inc()
            metrics.resyncs.inc(len(sockets))
            log.warning("game events subscribed again: resynchronising %d sockets", len(sockets))
            for game_id in self.games():
                self.hub.rounds[game_id].snapshots.reset()
            notice = link_notice(True)
            for member in sockets:
                if lost:
                    try:
                        await member.deliver(notice, None)
                    except Exception:  # one socket's failure must not stop the others
                        log.exception("could not tell a socket that the game events are back")
                member.resync()
            for key in self.listened():
                self.hub.listeners[key].resync()

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)
            self.reader = None
        if self.lost:
            self.lost = False
            self._outage_over()

    def _outage_over(self) -> None:
        """The line's outage window (if open) ends now."""
        if self.outage is not None:
            outages.tracker.end(self.outage)
            self.outage = None

