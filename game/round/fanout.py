"""Game events to every socket of a game: one Redis ``PUBLISH`` per event, fanned out in memory.

Publishing (:func:`publish`, :func:`publish_sync`) has one policy for every
publisher (the game socket, the computer, the pages): publish the committed
events; if Redis fails, the acting socket (when there is one) gets them
itself at once, and they are published again after
:data:`REPUBLISH_AFTER_S` seconds until one attempt succeeds.  Delivery is
at most once and the database stays the truth: a page that misses an event
sees a gap in ``v`` and asks for a snapshot.

Each server process (each event loop, in tests) has one :class:`Hub`.  The hub
keeps the game sockets of its process by game and holds one Redis pub/sub
connection, subscribed to the channel of each game it has sockets of: the
first socket of a game on a process subscribes it (and waits for Redis to
confirm), the last one to leave unsubscribes it.  An event of game ``g`` is
published once to ``<prefix>:game:g`` and reaches only the processes with
sockets of ``g``, which hand it to those sockets.  Per move that is one Redis
command and one read per process serving the game
(``checkers_game_events_read_total`` counts them), where channels-redis' group
layer stored, popped and cleaned up a copy per socket (``docs/performance.md``,
"Live load"), and a pattern subscription made every process read every game.

Pub/sub keeps nothing: what is published while a process is not subscribed
never reaches it.  So the hub also subscribes to a channel of its own,
:data:`LINK_CHANNEL`, first on every connection, and counts its confirmations:
every confirmation after the first (redis-py subscribes again by itself after a
reconnection, or the hub does after a failure, to every game it serves, in the
same command) means events may have been missed, and every socket of the
process is told to resynchronise
(:meth:`Member.resync`: it sends its page a fresh snapshot, read after the
subscription is back, so nothing published before it is missing and
everything after it arrives).  Events carry ``v``, so a page ignores one it
already has.

A socket joins its game before reading its snapshot (:meth:`Hub.join`), so an
event committed after the snapshot was read always reaches it; the socket
holds events back until its snapshot is sent.

The pub/sub connection and its bookkeeping are a :class:`Line`; how a line
reaches Redis is its hub's :class:`Transport`.  On one Redis server a hub
has one line for every game.  On a Redis Cluster (``REDIS_CLUSTER_URL``,
:class:`ClusterTransport`) events use sharded pub/sub (``SPUBLISH``,
``SSUBSCRIBE``): a hub has one line per shard, each with a link channel of
its own, and a line that loses its master (a failover) connects to the
promoted replica, subscribes its games again and resynchronises only their
sockets (``docs/scaling.md``, "Redis Cluster").
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import logging
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import redis
import redis.asyncio
import redis.cluster
from django.conf import settings
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.crc import REDIS_CLUSTER_HASH_SLOTS as REDIS_CLUSTER_SLOTS
from redis.crc import key_slot
from redis.exceptions import RedisError
from redis.retry import Retry

from checkers_site import redis_cluster
from checkers_site.ops import metrics
from checkers_site.redis_pools import BlockingPool
from game.round import outages
from game.round.events import EVERYONE, Event, encode, publications, read_publication
from game.round.snapshots import SnapshotCache
from game.sockets import in_background

log = logging.getLogger(__name__)

#: Seconds a socket's join waits for its process's first subscription before giving up.
JOIN_TIMEOUT_S = 5.0
#: Seconds a socket's join waits for its game's subscription to be confirmed while the link to Redis
#: is up.  A busy process (a crowd connecting at once) confirms late, not never: failing the join
#: after a few seconds sent the page away to reconnect, which added to the crowd.  A link that
#: breaks meanwhile lets the join go on at once (the ``link`` notice, then a snapshot when it is
#: back).  Under the deployment's 10-s handshake timeout (deploy/systemd); past this the join
#: fails (4503) and the page comes back later.
JOIN_PATIENCE_S = 8.0
#: Seconds between attempts to subscribe again after the subscription failed.
RETRY_S = 0.5
#: The hub's own channel (after the prefix; no game id has a ``~``), subscribed with the games on every
#: connection: its confirmation says the link is up.
LINK_CHANNEL = "~link"
#: Redis connections of one process for publishing.
PUBLISH_MAX_CONNECTIONS = 50
#: The name the publishing connections give themselves (``CLIENT LIST``).
PUBLISH_CLIENT_NAME = "checkers-publish"


class Unavailable(Exception):
    """Redis could not be reached: no subscription (join) or no publish."""


#: Seconds after which events whose publish failed are published again; after the last, again
#: every as many seconds, until one attempt succeeds or :data:`REPUBLISH_FOR_S` have passed.
REPUBLISH_AFTER_S = (0.5, 2.0, 5.0)
#: Seconds during which events whose publish failed are still published again.
REPUBLISH_FOR_S = 600.0
#: Seconds between two pings of the subscription's connection when nothing comes, and the silence
#: after which it is taken for lost (a link that died without closing, a Redis that hangs).
HEALTH_EVERY_S = 5.0
HEALTH_LIMIT_S = 12.0
#: Events this process delivered itself while they could not be published, whose own echo (when
#: the republish succeeds) is not delivered again; at most this many by game.
ECHOES_KEPT = 64


def link_notice(up: bool) -> list[tuple[str, str]]:
    """The ``link`` notice for every socket, as the copies :meth:`Member.deliver` takes: ``up``
    False when this process lost its link to the game events (events of other processes come
    late; a snapshot follows when it is back), True when it is back."""
    return [(EVERYONE.key, encode({"type": "link", "up": up}))]


class Member(Protocol):
    """What the hub needs of a game socket."""

    async def deliver(self, copies: list[tuple[str, str]], follow: dict[str, Any] | None) -> None:
        """Send one event to the page: ``copies`` are ``(roles, text)`` (an audience's roles, as
        :attr:`game.round.events.Audience.key`, and the JSON text of its copy), of which the socket
        sends the one for its role, if any; ``follow``: ``{"clock", "status"}`` of the state it
        carries, or None."""

    def resync(self) -> None:
        """Events may have been missed: send the page a fresh snapshot soon."""


def _prefix() -> str:
    return f"{settings.REDIS_PREFIX}:game:"


def channel(game_id: str) -> str:
    """The Redis pub/sub channel of a game's events: ``<prefix>:game:<id>``."""
    return _prefix() + game_id


class Transport:
    """How the hub talks to Redis: one plain server (this class) or a cluster (:class:`ClusterTransport`).

    The hub's logic (members, confirmations, resyncs, outage windows) is the
    same for both; a transport says which :class:`Line` (pub/sub connection) a
    game's channel is read on, opens that connection, and subscribes and
    publishes with the commands its Redis takes (``SUBSCRIBE``/``PUBLISH``
    here, ``SSUBSCRIBE``/``SPUBLISH`` on a cluster).
    """

    message_types = ("message",)
    subscribe_types = ("subscribe",)
    unsubscribe_types = ("unsubscribe",)

    def __init__(self, url: str):
        self.url = url
        # A pooled connection that Redis closed (a restart, a failover) fails its next command:
        # the command is retried at once on a new connection, so the first publish after a
        # restart is not left to the republish half a second later.
        pool = BlockingPool.from_url(
            url, max_connections=PUBLISH_MAX_CONNECTIONS, timeout=2,
            socket_timeout=5, socket_connect_timeout=5, client_name=PUBLISH_CLIENT_NAME,
            retry=AsyncRetry(NoBackoff(), 1))
        self.client: Any = redis.asyncio.Redis(connection_pool=pool)

    async def ready(self) -> None:
        """Learn what :meth:`line_key` needs (nothing for one server); raises :class:`Unavailable`."""

    def line_key(self, name: str) -> int:
        """The key of the line that reads channel ``name`` (one server: a single line, 0)."""
        return 0

    def link_channel(self, key: int, prefix: str) -> str:
        """The link channel of line ``key``."""
        return prefix + LINK_CHANNEL

    async def connect(self, key: int) -> redis.asyncio.Redis:
        """A new client for line ``key``'s pub/sub connection."""
        return redis.asyncio.Redis.from_url(self.url, socket_connect_timeout=5, socket_keepalive=True)

    async def subscribe_all(self, pubsub: Any, link: str, names: list[str]) -> None:
        """Subscribe ``link`` and the games' channels ``names`` in one command: the link's
        confirmation comes once Redis has subscribed them all."""
        await pubsub.subscribe(link, *names)

    async def subscribe(self, pubsub: Any, names: list[str]) -> None:
        """Subscribe the channels ``names`` (one confirmation each comes later, in order)."""
        await pubsub.subscribe(*names)

    async def unsubscribe(self, pubsub: Any, names: list[str]) -> None:
        """Unsubscribe the channels ``names`` (one confirmation each comes later, in order)."""
        await pubsub.unsubscribe(*names)

    async def publish(self, name: str, texts: list[str]) -> None:
        """Publish ``texts`` to channel ``name``, in order; raises what redis-py raises."""
        if len(texts) == 1:
            await self.client.publish(name, texts[0])
            return
        async with self.client.pipeline(transaction=False) as pipe:
            for text in texts:
                pipe.publish(name, text)
            await pipe.execute()

    async def aclose(self) -> None:
        await self.client.aclose()


class ClusterTransport(Transport):
    """A Redis Cluster: sharded pub/sub, one :class:`Line` per shard (a master and its replicas).

    A game's channel ``<prefix>:game:<id>`` lives in one hash slot, so on one
    shard; the line of a shard is keyed by the lowest slot the shard served
    when the hub learnt the cluster's slots, and connects to whichever node
    serves that slot as master now (after a failover, the promoted replica).
    Each line has a link channel of its own, named to hash into its shard.
    Slots moved to another shard later (resharding) are not followed: a
    shard that drops a subscription (``SUNSUBSCRIBE`` from the server) makes
    its line connect again, and the games then read from a line whose key no
    longer matches their slot get ``MOVED``, which restarts the line until
    the process is restarted (``docs/scaling.md``, "Redis Cluster").
    """

    message_types = ("smessage",)
    subscribe_types = ("ssubscribe",)
    unsubscribe_types = ("sunsubscribe",)

    def __init__(self, url: str):
        self.url = url
        self.cluster = self.client = redis_cluster.async_client(
            url, socket_timeout=5, socket_connect_timeout=2, client_name=PUBLISH_CLIENT_NAME,
            max_connections=PUBLISH_MAX_CONNECTIONS)
        #: The line key of each of the 16,384 slots (empty until :meth:`ready`).
        self.keys: list[int] = []
        self.links: dict[int, str] = {}

    async def ready(self) -> None:
        if self.keys:
            return
        try:
            await self.cluster.initialize()
        except (RedisError, OSError) as exc:
            raise Unavailable(f"no Redis Cluster node answers: {exc}") from exc
        lowest: dict[str, int] = {}
        owners = []
        for slot in range(REDIS_CLUSTER_SLOTS):
            owner = self.cluster.nodes_manager.slots_cache[slot][0].name
            lowest.setdefault(owner, slot)
            owners.append(owner)
        self.keys = [lowest[owner] for owner in owners]

    def line_key(self, name: str) -> int:
        return self.keys[key_slot(name.encode())]

    def link_channel(self, key: int, prefix: str) -> str:
        found = self.links.get(key)
        if found is None:
            tag = 0
            while self.keys[key_slot(f"{prefix}{LINK_CHANNEL}{{{tag}}}".encode())] != key:
                tag += 1
            found = self.links[key] = f"{prefix}{LINK_CHANNEL}{{{tag}}}"
        return found

    async def connect(self, key: int) -> redis.asyncio.Redis:
        """A client of the node that serves slot ``key`` as master now (the slots read again)."""
        manager = self.cluster.nodes_manager
        try:
            await manager.initialize()
            node = manager.get_node_from_slot(key)
        except (RedisError, OSError, IndexError) as exc:
            raise Unavailable(f"no master serves slot {key}: {exc}") from exc
        # No reconnection by redis-py itself: the line subscribes again, shard by shard.
        return redis.asyncio.Redis(host=node.host, port=int(node.port), socket_connect_timeout=2,
                                   socket_keepalive=True, retry=AsyncRetry(NoBackoff(), 0))

    async def subscribe_all(self, pubsub: Any, link: str, names: list[str]) -> None:
        """One ``SSUBSCRIBE`` per slot (a command's channels share one slot), the link channel's
        last: Redis answers a connection's commands in order, so its confirmation comes once
        every game's subscription is in place."""
        for group in by_slot(names):
            await pubsub.ssubscribe(*group)
        await pubsub.ssubscribe(link)

    async def subscribe(self, pubsub: Any, names: list[str]) -> None:
        """One ``SSUBSCRIBE`` per slot of ``names`` (a command's channels share one slot)."""
        for group in by_slot(names):
            await pubsub.ssubscribe(*group)

    async def unsubscribe(self, pubsub: Any, names: list[str]) -> None:
        """One ``SUNSUBSCRIBE`` per slot of ``names``."""
        for group in by_slot(names):
            await pubsub.sunsubscribe(*group)

    async def publish(self, name: str, texts: list[str]) -> None:
        if len(texts) == 1:
            await self.client.spublish(name, texts[0])
            return
        async with self.client.pipeline(transaction=False) as pipe:
            for text in texts:
                pipe.spublish(name, text)
            await pipe.execute()


def by_slot(names: list[str]) -> list[list[str]]:
    """``names`` grouped by their Redis Cluster hash slot, each group in the order given."""
    groups: dict[int, list[str]] = {}
    for name in names:
        groups.setdefault(key_slot(name.encode()), []).append(name)
    return list(groups.values())


def transport(url: str, cluster_url: str = "") -> Transport:
    """The transport of a hub: the cluster of ``cluster_url`` when set, else the Redis at ``url``."""
    return ClusterTransport(cluster_url) if cluster_url else Transport(url)


class Line:
    """One pub/sub connection of a hub and the games read on it (all of them on one Redis server;
    those of one shard on a cluster).

    ``subscriptions`` counts the confirmations of the line's link channel so
    far (0: not subscribed yet).  ``confirmed`` holds the games whose
    subscription Redis has confirmed on the current connection.
    """

    def __init__(self, hub: Hub, key: int):
        self.hub = hub
        self.key = key
        self.link = hub.transport.link_channel(key, hub.prefix)
        self.subscriptions = 0
        self.subscribed = asyncio.Event()
        #: The subscription was lost and is not back yet (this process's outage window is open).
        self.lost = False
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
        return [g for g in self.hub.members if self.hub.line_of(g) is self]

    def sockets(self) -> list[Member]:
        return [m for g in self.games() for m in self.hub.members.get(g, ())]

    async def _read(self) -> None:
        hub, transport = self.hub, self.hub.transport
        while True:
            connection: redis.asyncio.Redis | None = None
            pubsub: Any = None
            sender: asyncio.Task | None = None
            try:
                connection = await transport.connect(self.key)
                pubsub = connection.pubsub()
                # Every game served here, with the link channel: a snapshot read after the link's
                # confirmation misses no event of any of them.
                games = self.games()
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
                        await hub._dispatch(message["channel"], message["data"])
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
        if self.last_command.get(key) != "subscribe" or key not in self.hub.members:
            return
        self.confirmed.add(key)
        self.hub._confirmed(key)

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
            self.hub.snapshots.forget(game_id)      # events are missed until subscribed again
            self.hub._wake(game_id, False)
        self.confirmed = set()
        self.hub._count_subscriptions()
        if not was_subscribed:
            return   # still down (every retry fails), or never up: told already, or nobody here
        log.warning("game events subscription lost: %s", exc)
        self.lost = True
        self.restored = asyncio.Event()
        outages.tracker.begin("subscription")
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
            outages.tracker.end("subscription")
            self.restored.set()
        if self.subscriptions > 1:
            sockets = self.sockets()
            metrics.resubscriptions.inc()
            metrics.resyncs.inc(len(sockets))
            log.warning("game events subscribed again: resynchronising %d sockets", len(sockets))
            for game_id in self.games():
                self.hub.snapshots.forget(game_id)
            notice = link_notice(True)
            for member in sockets:
                if lost:
                    try:
                        await member.deliver(notice, None)
                    except Exception:  # one socket's failure must not stop the others
                        log.exception("could not tell a socket that the game events are back")
                member.resync()

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)
            self.reader = None
        if self.lost:
            self.lost = False
            outages.tracker.end("subscription")


class Hub:
    """The game sockets of one process (event loop) and its subscriptions to their games' events.

    ``members`` maps a game id to the set of this process's sockets of that
    game.  ``lines`` are its pub/sub connections (:class:`Line`): one on a
    single Redis server, one per shard on a cluster (``cluster_url``, sharded
    pub/sub).  Start it with :meth:`start`.
    """

    def __init__(self, url: str, cluster_url: str = ""):
        self.url = url
        self.members: dict[str, set[Member]] = {}
        self.echoes: dict[str, list[str]] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.prefix = _prefix()
        self.transport = transport(url, cluster_url)
        self.lines: dict[int, Line] = {}
        #: The snapshots of this process's games, kept by the versions its events carry.
        self.snapshots = SnapshotCache()
        #: Joins waiting for their game's subscription to be confirmed, by game.
        self.waiting: dict[str, list[asyncio.Future]] = {}

    @property
    def client(self) -> Any:
        """The client the events are published with (``redis.asyncio.Redis`` or ``RedisCluster``)."""
        return self.transport.client

    @client.setter
    def client(self, client: Any) -> None:
        self.transport.client = client

    # What the lines say, for the whole process (one line on a single Redis server).
    @property
    def subscriptions(self) -> int:
        """The link confirmations of every line so far."""
        return sum(line.subscriptions for line in self.lines.values())

    @property
    def lost(self) -> bool:
        """Whether some line's subscription is lost now."""
        return any(line.lost for line in self.lines.values())

    @property
    def confirmed(self) -> set[str]:
        """The games whose subscription Redis has confirmed on their line's current connection."""
        return set().union(*(line.confirmed for line in self.lines.values()))

    def start(self) -> None:
        """Start the subscription of a single Redis server (once; a cluster's lines start as their
        first game joins)."""
        self.loop = asyncio.get_running_loop()
        if not isinstance(self.transport, ClusterTransport):
            self._line_by_key(0).start()

    def _line_by_key(self, key: int) -> Line:
        line = self.lines.get(key)
        if line is None:
            line = self.lines[key] = Line(self, key)
        return line

    def line_of(self, game_id: str) -> Line:
        """The line that reads ``game_id``'s channel (the cluster's slots must be known: after a join)."""
        return self._line_by_key(self.transport.line_key(self.prefix + game_id))

    async def join(self, game_id: str, member: Member) -> None:
        """Give ``member`` every event of ``game_id`` published from now on.

        Waits for the first subscription of the game's line (at most
        :data:`JOIN_TIMEOUT_S` seconds), then for the game's (at most
        :data:`JOIN_PATIENCE_S` while the link stays up); raises
        :class:`Unavailable` when there is none by then (Redis down).  A line
        whose subscription was lost later lets sockets join at once (their
        snapshot comes from the database; events of this process reach them;
        their game is subscribed with the others when the link is back) and
        gives them the ``link`` notice that it is down, then a snapshot when it
        is back.
        """
        self.start()
        try:
            await asyncio.wait_for(self.transport.ready(), JOIN_TIMEOUT_S)
        except TimeoutError:
            raise Unavailable("no answer from the Redis Cluster") from None
        line = self.line_of(game_id)
        line.start()
        if not line.subscribed.is_set() and not line.lost:
            try:
                await asyncio.wait_for(line.subscribed.wait(), JOIN_TIMEOUT_S)
            except TimeoutError:
                raise Unavailable("no subscription to the game events") from None
        self.members.setdefault(game_id, set()).add(member)
        if line.last_command.get(game_id) != "subscribe":
            line.command("subscribe", game_id)
        if line.lost:
            await member.deliver(link_notice(False), None)
            return
        if game_id in line.confirmed:
            return
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(game_id, []).append(future)
        try:
            confirmed = await asyncio.wait_for(asyncio.shield(future), JOIN_PATIENCE_S)
        except TimeoutError:
            self.leave(game_id, member)
            raise Unavailable(f"no subscription to the events of game {game_id}") from None
        finally:
            waiting = self.waiting.get(game_id)
            if waiting is not None and future in waiting:
                waiting.remove(future)
                if not waiting:
                    del self.waiting[game_id]
        if not confirmed:   # the link broke while the join waited: as a join while it is down
            await member.deliver(link_notice(False), None)

    def _confirmed(self, game_id: str) -> None:
        """A line has ``game_id``'s subscription confirmed: its waiting joins go on."""
        self._count_subscriptions()
        self._wake(game_id, True)

    def _wake(self, game_id: str, confirmed: bool) -> None:
        """Let the joins waiting for ``game_id``'s subscription go on: ``confirmed``, or False when
        the line's link broke first (they join as while it is down)."""
        for future in self.waiting.pop(game_id, []):
            if not future.done():
                future.set_result(confirmed)

    def _count_subscriptions(self) -> None:
        metrics.game_subscriptions.set(sum(len(line.confirmed) for line in self.lines.values()))

    def leave(self, game_id: str, member: Member) -> None:
        """Stop giving ``member`` the events of ``game_id`` (no error if it was not there)."""
        members = self.members.get(game_id)
        if members is not None:
            members.discard(member)
            if not members:
                line = self.line_of(game_id)
                del self.members[game_id]
                self.echoes.pop(game_id, None)
                self.snapshots.forget(game_id)
                line.confirmed.discard(game_id)
                if line.last_command.get(game_id) == "subscribe":
                    line.command("unsubscribe", game_id)
                self._count_subscriptions()

    def line_lost(self, game_id: str) -> Line | None:
        """The line of ``game_id`` when its subscription is lost now, else None."""
        if not self.lines:
            return None
        try:
            line = self.line_of(game_id)
        except IndexError:   # a cluster's slots not known yet
            return None
        return line if line.lost else None

    async def publish(self, game_id: str, texts: list[str]) -> None:
        """Publish the encoded events ``texts`` of ``game_id``, in order, in one round trip.

        Raises :class:`Unavailable` when Redis fails (some may have gone out).
        """
        try:
            await self.transport.publish(self.prefix + game_id, texts)
        except (RedisError, OSError) as exc:
            raise Unavailable(str(exc)) from exc

    def _sockets(self) -> list[Member]:
        return [m for members in self.members.values() for m in members]

    async def _dispatch(self, name: bytes, data: bytes) -> None:
        game_id = name[len(self.prefix):].decode()
        members = self.members.get(game_id)
        if not members:
            metrics.game_events_read.labels(wanted="no").inc()
            return
        metrics.game_events_read.labels(wanted="yes").inc()
        text = data.decode()
        echoes = self.echoes.get(game_id)
        if echoes and text in echoes:   # delivered here already, when its publish failed
            echoes.remove(text)
            if not echoes:
                del self.echoes[game_id]
            return
        await self._deliver(game_id, members, text)

    async def _deliver(self, game_id: str, members: set[Member], text: str) -> None:
        follow, copies = read_publication(text)
        self.snapshots.saw(game_id, copies)     # before any socket is sent it
        for member in list(members):
            try:
                await member.deliver(copies, follow)
            except Exception:  # one socket's failure must not stop the others
                log.exception("could not deliver an event of game %s", game_id)

    async def deliver_here(self, game_id: str, texts: list[str]) -> set[Member]:
        """Deliver published events ``texts`` of ``game_id`` to this process's sockets of that game
        at once, without Redis (their publish failed); their echo, when the republish succeeds,
        is not delivered again.  Returns the sockets they went to."""
        members = self.members.get(game_id)
        if not members:
            return set()
        reached = set(members)
        echoes = self.echoes.setdefault(game_id, [])
        for text in texts:
            echoes.append(text)
            await self._deliver(game_id, members, text)
        del echoes[:-ECHOES_KEPT]
        return reached

    async def close(self) -> None:
        """Stop the subscriptions and close the connections (tests; a server just exits)."""
        for line in list(self.lines.values()):
            await line.close()
        await self.transport.aclose()


_hubs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_sync_client: redis.Redis | redis.cluster.RedisCluster | None = None


def hub() -> Hub:
    """The hub of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = Hub(settings.REDIS_URL, settings.REDIS_CLUSTER_URL)
    return found


def _publish_sync(game_id: str, texts: list[str]) -> None:
    """:meth:`Hub.publish` for synchronous callers (views); raises :class:`Unavailable`."""
    global _sync_client
    try:
        if _sync_client is None:
            if settings.REDIS_CLUSTER_URL:
                _sync_client = redis_cluster.sync_client(
                    settings.REDIS_CLUSTER_URL, socket_timeout=5, socket_connect_timeout=2,
                    client_name=PUBLISH_CLIENT_NAME)
            else:
                _sync_client = redis.Redis.from_url(
                    settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5,
                    client_name=PUBLISH_CLIENT_NAME, retry=Retry(NoBackoff(), 1))
        pipe = _sync_client.pipeline(transaction=False)
        for text in texts:
            if settings.REDIS_CLUSTER_URL:
                pipe.spublish(channel(game_id), text)
            else:
                pipe.publish(channel(game_id), text)
        pipe.execute()
    except (RedisError, OSError, ValueError) as exc:  # ValueError: a socket closed under redis-py
        raise Unavailable(str(exc)) from exc


class Fallback(Protocol):
    """The acting socket, which gets its own events directly when they cannot be published."""

    async def send_event(self, event: Event) -> None:
        """Send ``event`` (its copy for this socket's role) to this socket's page."""


async def publish(game_id: str, events: Sequence[Event], fallback: Fallback | None = None) -> bool:
    """Send committed ``events`` to every socket of the game, in order (one round trip).

    Returns False when Redis failed: the change is stored all the same; this
    process's own sockets of the game (``fallback``, the acting socket, among
    them) are then sent the events at once, the events are published again in
    the background (:data:`REPUBLISH_AFTER_S`, for up to :data:`REPUBLISH_FOR_S`)
    and until then this process's outage window is open
    (:mod:`game.round.outages`: no clock is charged).  A page that gets an event
    twice ignores the second: events carry ``v``.
    """
    if not events:
        return True
    texts = publications(events)
    the_hub = hub()
    try:
        await the_hub.publish(game_id, texts)
        metrics.events_published.inc(len(texts))
        return True
    except Unavailable as exc:
        metrics.first_publish_failed.inc()
        log.warning("could not publish to game %s: %s", game_id, exc)
    outages.tracker.begin("republish")
    try:
        reached = await the_hub.deliver_here(game_id, texts)
        if fallback is not None and fallback not in reached:
            for event in events:
                await fallback.send_event(event)
    finally:
        in_background(_republish(game_id, texts))
    return False


def _delays() -> Iterator[float]:
    """The waits before each republish (:data:`REPUBLISH_AFTER_S`, then its last one again)."""
    yield from REPUBLISH_AFTER_S
    waited = sum(REPUBLISH_AFTER_S)
    while waited < REPUBLISH_FOR_S:
        waited += REPUBLISH_AFTER_S[-1]
        yield REPUBLISH_AFTER_S[-1]


async def _republish(game_id: str, texts: list[str]) -> None:
    """Publish again events whose publish failed, until it works (or :data:`REPUBLISH_FOR_S`).

    Without this the game's other sockets would wait for a next event to notice the gap, and
    the next event is the opponent's move, which waits for this one.  While the process's
    subscription is lost, the next attempt comes as soon as it is back (Redis is up again), so
    the outage window closes with it.  Ends this publish's part
    of the outage window (:func:`publish` began it) however it ends.
    """
    try:
        for delay in _delays():
            the_hub = hub()
            line = the_hub.line_lost(game_id)
            if line is not None:   # Redis is down: try again at once when the subscription is back
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(line.restored.wait(), delay)
            else:
                await asyncio.sleep(delay)
            try:
                await the_hub.publish(game_id, texts)
                metrics.events_republished.inc(len(texts))
                return
            except Unavailable as exc:
                metrics.republish_failed.inc()
                log.warning("could not publish to game %s again: %s", game_id, exc)
    finally:
        outages.tracker.end("republish")


def _deliver_here_from_thread(game_id: str, texts: list[str]) -> None:
    """:meth:`Hub.deliver_here` on the hub of each running event loop (a server has one), from a
    synchronous caller's thread; waits at most a second for it."""
    for loop, found in list(_hubs.items()):
        if loop.is_closed() or not loop.is_running() or found.loop is not loop:
            continue
        future = asyncio.run_coroutine_threadsafe(found.deliver_here(game_id, texts), loop)
        try:
            future.result(timeout=1)
        except Exception as exc:  # noqa: BLE001 - the republish and the resync still cover them
            log.warning("could not deliver the events of game %s here: %s", game_id, exc)


def publish_sync(game_id: str, events: Sequence[Event]) -> bool:
    """:func:`publish` for synchronous callers (the pages): publish, or else deliver the events
    to this process's sockets of the game and publish them again from a background thread, as
    :func:`publish` does.  Returns False when the first try failed."""
    if not events:
        return True
    texts = publications(events)
    try:
        _publish_sync(game_id, texts)
        metrics.events_published.inc(len(texts))
        return True
    except Unavailable as exc:
        metrics.first_publish_failed.inc()
        log.warning("could not publish to game %s: %s", game_id, exc)
    outages.tracker.begin("republish")
    _deliver_here_from_thread(game_id, texts)

    def again() -> None:
        try:
            for delay in _delays():
                time.sleep(delay)
                try:
                    _publish_sync(game_id, texts)
                    metrics.events_republished.inc(len(texts))
                    return
                except Unavailable as exc:
                    metrics.republish_failed.inc()
                    log.warning("could not publish to game %s again: %s", game_id, exc)
        finally:
            outages.tracker.end("republish")

    threading.Thread(target=again, name=f"republish:{game_id}", daemon=True).start()
    return False
