"""How a hub reaches Redis: one server (``PUBLISH``/``SUBSCRIBE``) or a Redis Cluster's sharded
pub/sub (``SPUBLISH``/``SSUBSCRIBE``), for the event loop's publishers and lines and for the
synchronous publishers (the pages)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

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
from checkers_site.redis_pools import BlockingPool

#: The hub's own channel (after the prefix; no game id has a ``~``), subscribed with the games on every
#: connection: its confirmation says the link is up.
LINK_CHANNEL = "~link"
#: Redis connections of one process for publishing (on a cluster, to each shard's master); 32 failed
#: hundreds of publishes for want of a connection in a burst of 1,500 sockets on a starved process
#: (docs/performance/16-failover.md).
PUBLISH_MAX_CONNECTIONS = 50
#: Seconds a publish waits for one of them when all are busy (a burst, an event loop reading its
#: replies late): as long as a command may take (``socket_timeout``), so that a busy pool makes a
#: publish wait rather than fail; a failed publish costs more (an outage window of its game, the
#: local delivery, the republish).  A Redis that is gone fails at connect, not here.
PUBLISH_POOL_WAIT_S = 5.0
#: The name the publishing connections give themselves (``CLIENT LIST``).
PUBLISH_CLIENT_NAME = "checkers-publish"
#: The name the subscription connections (the lines') give themselves.
LINE_CLIENT_NAME = "checkers-events"
#: Seconds after a read of a cluster's slots before the next one: a shard that fails over fails
#: every publish to it, each of which asks whether the shard has a new master.
SLOTS_READ_EVERY_S = 0.25
#: Seconds a cluster node has to answer which node serves each slot.
SLOTS_TIMEOUT_S = 2.0


#: Told of every publish of this process as it is sent, ``(game_id, texts)`` (each attempt, the
#: republishes too): empty in production; the tests' record of what was published, so that they
#: assert which sockets were sent what instead of waiting to see that one is sent nothing.
recorders: list[Callable[[str, list[str]], None]] = []


def record(game_id: str, texts: list[str]) -> None:
    """Tell :data:`recorders` of a publish of ``texts`` to ``game_id``'s channel."""
    for recorder in recorders:
        recorder(game_id, texts)


class Unavailable(Exception):
    """Redis could not be reached: no subscription (join) or no publish."""


def prefix() -> str:
    """What every game's channel name starts with: ``<prefix>:game:``."""
    return f"{settings.REDIS_PREFIX}:game:"


def channel(game_id: str) -> str:
    """The Redis pub/sub channel of a game's events: ``<prefix>:game:<id>``."""
    return prefix() + game_id


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
    #: The command that publishes an event to a channel.
    publish_command = "PUBLISH"

    def __init__(self, url: str):
        self.url = url
        # A pooled connection that Redis closed (a restart, a failover) fails its next command:
        # the command is retried at once on a new connection, so the first publish after a
        # restart is not left to the republish half a second later.
        pool = BlockingPool.from_url(
            url, max_connections=PUBLISH_MAX_CONNECTIONS, timeout=PUBLISH_POOL_WAIT_S,
            socket_timeout=5, socket_connect_timeout=5, client_name=PUBLISH_CLIENT_NAME,
            retry=AsyncRetry(NoBackoff(), 1))
        #: The client the events are published with.
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
        return redis.asyncio.Redis.from_url(self.url, socket_connect_timeout=5, socket_keepalive=True,
                                            client_name=LINE_CLIENT_NAME)

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
        """Publish ``texts`` to channel ``name``, in order, in one round trip; raises what redis-py
        raises (a publish waits up to :data:`PUBLISH_POOL_WAIT_S` for a connection, then
        ``ConnectionError``)."""
        await self._send(self.client, name, texts)

    async def _send(self, client: Any, name: str, texts: list[str]) -> None:
        if len(texts) == 1:
            await client.execute_command(self.publish_command, name, texts[0])
            return
        async with client.pipeline(transaction=False) as pipe:
            for text in texts:
                pipe.execute_command(self.publish_command, name, text)
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

    Each shard's events are published through connections of their own, to
    the shard's master (:meth:`publisher`): when a shard fails over, only its
    own publishes fail or wait, and only they read the slots again
    (:meth:`master`), while the other shards' go on, on connections nothing
    touched.  (redis-py's cluster client, one for every shard, reads the slots
    again under one lock after any failed command and then reconnects to every
    node, before its next command to any shard: docs/performance/16-failover.md.)

    Slots moved to another shard later (resharding) are not followed: a
    shard that drops a subscription (``SUNSUBSCRIBE`` from the server) makes
    its line connect again, and the games then read from a line whose key no
    longer matches their slot get ``MOVED``, which restarts the line until
    the process is restarted (``docs/scaling.md``, "Redis Cluster").
    """

    message_types = ("smessage",)
    subscribe_types = ("ssubscribe",)
    unsubscribe_types = ("sunsubscribe",)
    publish_command = "SPUBLISH"

    def __init__(self, url: str):
        self.url = url
        self.client = None
        #: Every node known, ``(host, port)``: those of ``url``, then those the slots named.
        self.nodes: list[tuple[str, int]] = redis_cluster.nodes(url)
        #: The line key of each of the 16,384 slots (empty until :meth:`ready`).
        self.keys: list[int] = []
        self.links: dict[int, str] = {}
        #: The node serving each line key's slot as master, as the slots were last read.
        self.masters: dict[int, tuple[str, int]] = {}
        #: Each line key's publishing client and the node it connects to.
        self.publishers: dict[int, tuple[tuple[str, int], redis.asyncio.Redis]] = {}
        self._reading: asyncio.Task[None] | None = None
        self._read_at = float("-inf")

    async def ready(self) -> None:
        if self.keys:
            return
        slots = await self._read_slots()
        lowest: dict[tuple[str, int], int] = {}
        for slot, owner in enumerate(slots):
            lowest.setdefault(owner, slot)
        self.keys = [lowest[owner] for owner in slots]
        self.masters = {key: owner for owner, key in lowest.items()}
        self._read_at = time.monotonic()

    async def master(self, key: int, again: bool = True) -> tuple[str, int]:
        """The node serving line ``key``'s slot as master, ``(host, port)``: with ``again``, from
        the slots read anew (one read at a time for every caller, at most every
        :data:`SLOTS_READ_EVERY_S`: a failing shard fails every publish to it).  Raises
        :class:`Unavailable` when no node tells."""
        await self.ready()
        if again and time.monotonic() - self._read_at >= SLOTS_READ_EVERY_S:
            if self._reading is None:
                self._reading = asyncio.get_running_loop().create_task(self._read_masters())
            await asyncio.shield(self._reading)
        return self.masters[key]

    async def _read_masters(self) -> None:
        try:
            slots = await self._read_slots()
            self.masters = {key: slots[key] for key in self.masters}
        finally:
            self._read_at = time.monotonic()
            self._reading = None

    async def _read_slots(self) -> list[tuple[str, int]]:
        """The master of each slot, ``(host, port)``, from the first node that answers ``CLUSTER
        SLOTS`` with every slot served (every known node asked at once: one that hangs, its host
        cut off, holds up nobody).  Raises :class:`Unavailable` when none does."""
        asking = [asyncio.ensure_future(_slots_of(node)) for node in list(self.nodes)]
        failures = []
        try:
            for answer in asyncio.as_completed(asking):
                try:
                    slots, nodes = await answer
                except (RedisError, OSError, ValueError, IndexError) as exc:
                    failures.append(exc)
                    continue
                self.nodes += [node for node in nodes if node not in self.nodes]
                return slots
        finally:
            for task in asking:
                task.cancel()
            await asyncio.gather(*asking, return_exceptions=True)
        raise Unavailable(f"no Redis Cluster node tells which node serves each slot: {failures[-1:]}")

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
        host, port = await self.master(key)
        # No reconnection by redis-py itself: the line subscribes again, shard by shard.
        return redis.asyncio.Redis(host=host, port=port, socket_connect_timeout=2, client_name=LINE_CLIENT_NAME,
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
        """As :meth:`Transport.publish`, with ``SPUBLISH``, through the connections of the channel's
        shard (:meth:`publisher`).  A publish that fails reads the slots again: when the shard has
        a new master (a failover), it is sent once more, there; else the error is raised."""
        await self.ready()
        key = self.line_key(name)
        node, client = await self.publisher(key, again=False)
        try:
            await self._send(client, name, texts)
        except Exception as exc:
            try:
                moved = await self.master(key) != node
            except Unavailable:
                moved = False
            if not moved:
                raise exc
            await self._send((await self.publisher(key, again=False))[1], name, texts)

    async def publisher(self, key: int, again: bool) -> tuple[tuple[str, int], redis.asyncio.Redis]:
        """Line ``key``'s publishing client and its node, made anew when the shard's master changed
        (:meth:`master`, ``again`` as there): :data:`PUBLISH_MAX_CONNECTIONS` connections at most,
        a publish waiting up to :data:`PUBLISH_POOL_WAIT_S` for one."""
        node = await self.master(key, again)
        found = self.publishers.get(key)
        if found is not None and found[0] == node:
            return found
        pool = BlockingPool(
            host=node[0], port=node[1], max_connections=PUBLISH_MAX_CONNECTIONS, timeout=PUBLISH_POOL_WAIT_S,
            socket_timeout=5, socket_connect_timeout=2, client_name=PUBLISH_CLIENT_NAME,
            retry=AsyncRetry(NoBackoff(), 0))
        self.publishers[key] = (node, redis.asyncio.Redis.from_pool(pool))
        if found is not None:
            # The old master's connections: its publishes under way fail (it is no longer master).
            await found[1].aclose()
        return self.publishers[key]

    async def aclose(self) -> None:
        for _node, client in self.publishers.values():
            await client.aclose()
        self.publishers = {}


async def _slots_of(node: tuple[str, int]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """``CLUSTER SLOTS`` asked of ``node``: the master of each of the 16,384 slots and every node
    named, ``(host, port)``.  Raises what redis-py raises, ``IndexError`` when a slot is not
    served."""
    client = redis.asyncio.Redis(host=node[0], port=node[1], socket_timeout=SLOTS_TIMEOUT_S,
                                 socket_connect_timeout=SLOTS_TIMEOUT_S, retry=AsyncRetry(NoBackoff(), 0))
    try:
        ranges = await client.execute_command("CLUSTER", "SLOTS")
    finally:
        await client.aclose()
    masters: list[tuple[str, int] | None] = [None] * REDIS_CLUSTER_SLOTS
    named: list[tuple[str, int]] = []
    for start, end, *serving in ranges:
        nodes = [((host.decode() if isinstance(host, bytes) else host) or node[0], int(port))
                 for host, port, *_ in serving]
        named += [found for found in nodes if found not in named]
        masters[int(start):int(end) + 1] = [nodes[0]] * (int(end) - int(start) + 1)
    if None in masters:
        raise IndexError(f"{masters.count(None)} slots served by no node")
    return [found for found in masters if found is not None], named


def by_slot(names: list[str]) -> list[list[str]]:
    """``names`` grouped by their Redis Cluster hash slot, each group in the order given."""
    groups: dict[int, list[str]] = {}
    for name in names:
        groups.setdefault(key_slot(name.encode()), []).append(name)
    return list(groups.values())


def transport(url: str, cluster_url: str = "") -> Transport:
    """The transport of a hub: the cluster of ``cluster_url`` when set, else the Redis at ``url``."""
    return ClusterTransport(cluster_url) if cluster_url else Transport(url)



class SyncPublisher:
    """:meth:`Transport.publish` for synchronous callers (the pages, management commands): one
    client per process, made on first use, for the cluster of ``REDIS_CLUSTER_URL`` when set,
    else the Redis of ``REDIS_URL``."""

    def __init__(self) -> None:
        self.client: redis.Redis | redis.cluster.RedisCluster | None = None

    def publish(self, game_id: str, texts: list[str]) -> None:
        """Publish ``texts`` to the game's channel, in order, in one round trip.  Raises
        :class:`Unavailable` when Redis fails (some may have gone out)."""
        record(game_id, texts)
        try:
            client = self.client
            if client is None:
                client = self.client = self._connect()
            pipe = client.pipeline(transaction=False)
            for text in texts:
                if settings.REDIS_CLUSTER_URL:
                    pipe.spublish(channel(game_id), text)
                else:
                    pipe.publish(channel(game_id), text)
            pipe.execute()
        except Exception as exc:  # whatever the client raised: a failed publish (Hub.publish)
            raise Unavailable(f"{type(exc).__name__}: {exc}") from exc

    @staticmethod
    def _connect() -> redis.Redis | redis.cluster.RedisCluster:
        if settings.REDIS_CLUSTER_URL:
            return redis_cluster.sync_client(settings.REDIS_CLUSTER_URL, socket_timeout=5, socket_connect_timeout=2,
                                             client_name=PUBLISH_CLIENT_NAME)
        return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5, socket_connect_timeout=5,
                                    client_name=PUBLISH_CLIENT_NAME, retry=Retry(NoBackoff(), 1))


#: This process's synchronous publisher.
sync_publisher = SyncPublisher()
