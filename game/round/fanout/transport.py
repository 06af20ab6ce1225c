"""How a hub reaches Redis: one server (``PUBLISH``/``SUBSCRIBE``) or a Redis Cluster's sharded
pub/sub (``SPUBLISH``/``SSUBSCRIBE``), for the event loop's publishers and lines and for the
synchronous publishers (the pages)."""

from __future__ import annotations

import asyncio
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
#: Redis connections of one process for publishing.
PUBLISH_MAX_CONNECTIONS = 50
#: Seconds a publish waits for one of them when all are busy (a burst, an event loop reading its
#: replies late): as long as a command may take (``socket_timeout``), so that a busy pool makes a
#: publish wait rather than fail; a failed publish costs more (an outage window of its game, the
#: local delivery, the republish).  A Redis that is gone fails at connect, not here.
PUBLISH_POOL_WAIT_S = 5.0
#: The name the publishing connections give themselves (``CLIENT LIST``).
PUBLISH_CLIENT_NAME = "checkers-publish"


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

    def __init__(self, url: str):
        self.url = url
        # A pooled connection that Redis closed (a restart, a failover) fails its next command:
        # the command is retried at once on a new connection, so the first publish after a
        # restart is not left to the republish half a second later.
        pool = BlockingPool.from_url(
            url, max_connections=PUBLISH_MAX_CONNECTIONS, timeout=PUBLISH_POOL_WAIT_S,
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
        self.max_connections = PUBLISH_MAX_CONNECTIONS
        #: A publish's turns on each shard (line key): one per connection the client may open to it.
        self._turns: dict[int, asyncio.Semaphore] = {}
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
        """As :meth:`Transport.publish`, with ``SPUBLISH``.  redis-py's cluster client refuses a
        command at once when its connections to the node are all in use, so a publish first waits
        (up to :data:`PUBLISH_POOL_WAIT_S`, as the one server's pool does) for one of
        :data:`PUBLISH_MAX_CONNECTIONS` turns on its shard; raises ``ConnectionError`` when none
        came."""
        key = self.line_key(name) if self.keys else 0
        turns = self._turns.get(key)
        if turns is None:
            turns = self._turns[key] = asyncio.Semaphore(self.max_connections)
        try:
            async with asyncio.timeout(PUBLISH_POOL_WAIT_S):
                await turns.acquire()
        except TimeoutError:
            raise redis.exceptions.ConnectionError("No connection available.") from None
        try:
            await self._spublish(name, texts)
        finally:
            turns.release()

    async def _spublish(self, name: str, texts: list[str]) -> None:
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
