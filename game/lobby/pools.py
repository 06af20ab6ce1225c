"""The seek pools in Redis: the atomic part of matchmaking.

The decision of who meets whom is :func:`game.lobby.pairing.pair_seeks`, a pure
function.  This module only keeps the pools in Redis, shared by every server
process, and makes each change with one Lua script (:mod:`game.lobby.pool_scripts`), so that
under any interleaving of any number of processes:

- a seek is paired at most once, and never with a seek of the same player
  (the claim script checks both again, whatever the decision proposed);
- a cancelled seek is never paired once :meth:`Matchmaker.cancel` has returned;
- a seek that is not refreshed lives ``seek_ttl_s`` seconds at most (the
  socket holding it refreshes it every few seconds; when its server process
  dies the refreshes stop): every script first purges the expired seeks, and
  none of them counts or pairs a seek past its deadline.

Keys, for a key prefix ``P`` and a pool ``p`` (the ``{P:p}`` hash tag keeps a
pool's keys together on one Redis Cluster node; every key a script touches is
passed in ``KEYS``)::

    {P:p}:queue     ZSET  seek id -> arrival time, µs on the Redis clock (oldest first)
    {P:p}:deadline  ZSET  seek id -> expiry, ms on the Redis clock (alive while in the future)
    {P:p}:seeks     HASH  seek id -> the seek as JSON (Seek.to_json)
    {P:p}:claimed   ZSET  seek id -> ms until which a paired seek is remembered as "claimed"
    {P:p}:claims    HASH  seek id -> token of the claim that took it (makes a retried claim idempotent)

The seek keys live the seek TTL and then another minute at least (the TTL again
if longer) after the last ``ADD`` or refresh, so that expired seeks wait there for
:meth:`Matchmaker.sweep`, and the claim keys ``claimed_ttl_s`` after the last
claim, so a pool nobody uses leaves nothing behind.  Every script is safe to run
twice (redis-py retries a command whose answer was lost): ``ADD`` never puts back
a seek that was claimed, and a repeated ``CLAIM`` recognises its own token.

Times come from the Redis server's clock (``TIME``), so the processes' clocks
do not matter.  Every Redis failure (refused connection, timeout, script
error) is raised as :class:`MatchmakingUnavailable`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import RedisClusterException, RedisError

from checkers_site import redis_cluster
from checkers_site.redis_pools import BlockingPool
from game.lobby import pool_scripts as scripts
from game.lobby.pairing import (
    POOLS,
    RANGE_MAX,
    RANGE_START,
    RANGE_STEP,
    RANGE_STEP_S,
    Pairing,
    Seek,
    is_pool_id,
    pair_rated,
    pair_seeks,
)

log = logging.getLogger(__name__)

#: Seeks read by one pairing round, oldest first (a bound on the work of one script call).
SNAPSHOT_LIMIT = 500
#: Connections one matchmaker (one server process) opens to Redis at most.
MAX_CONNECTIONS = 50
#: Pairing rounds one :meth:`Matchmaker.settle` call makes at most (each lost race costs one).
SETTLE_ROUNDS = 25


class MatchmakingUnavailable(Exception):
    """Redis could not be reached or refused the command; nothing is known to have changed."""


@dataclass(frozen=True)
class SeekStatus:
    """Where a seek stands, as told by :meth:`Matchmaker.refresh` and :meth:`Matchmaker.cancel`.

    ``state``: ``"waiting"`` (in the pool), ``"removed"`` (cancel took it out),
    ``"claimed"`` (paired: the news is on its way to its socket) or ``"gone"``
    (expired, or never there).  ``waiting``: how many seeks wait in the pool
    afterwards.
    """

    state: str
    waiting: int


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _read_snapshot(flat: list) -> tuple[int, list[Seek]]:
    """The reply of the snapshot script as (the Redis clock in µs, the seeks); unreadable seeks are skipped."""
    now_us, flat = int(flat[0]), flat[1:]
    seeks = []
    for i in range(0, len(flat), 3):
        try:
            seeks.append(Seek.from_json(_text(flat[i + 2]), since=int(float(_text(flat[i + 1])))))
        except (ValueError, KeyError, TypeError):
            log.warning("matchmaking: skipping an unreadable seek %r", flat[i])
    return now_us, seeks


class Matchmaker:
    """The seek pools of one key prefix in one Redis, seen from one server process.

    ``client``: a ``redis.asyncio.Redis`` or ``RedisCluster``; ``prefix``: the key prefix (tests use
    one per test); ``seek_ttl_s``: seconds a seek lives without a refresh;
    ``claimed_ttl_s``: seconds a paired seek is remembered as claimed (a socket
    whose news of the pairing was lost seeks again after that).  Every method
    raises :class:`MatchmakingUnavailable` when Redis fails, and ``ValueError``
    for a malformed pool id.
    """

    def __init__(self, client: Any, prefix: str = "mm", seek_ttl_s: float = 10.0,
                 claimed_ttl_s: float = 30.0):
        if seek_ttl_s <= 0 or claimed_ttl_s <= 0:
            raise ValueError("time-to-live values must be positive")
        self.client = client
        self.prefix = prefix
        self.seek_ttl_ms = max(1, round(seek_ttl_s * 1000))
        self.claimed_ttl_ms = max(1, round(claimed_ttl_s * 1000))
        self._add = client.register_script(scripts.ADD)
        self._cancel = client.register_script(scripts.CANCEL)
        self._refresh = client.register_script(scripts.REFRESH)
        self._count = client.register_script(scripts.COUNT)
        self._sweep = client.register_script(scripts.SWEEP)
        self._snapshot = client.register_script(scripts.SNAPSHOT)
        self._claim = client.register_script(scripts.CLAIM)

    @classmethod
    def from_url(cls, url: str, **options) -> Matchmaker:
        """A matchmaker with its own connection pool to the Redis at ``url`` (``redis://host:port/db``).

        At most :data:`MAX_CONNECTIONS` connections are open at once; a command
        waits up to 10 s for a free one.  Connecting times out after 2 s and
        reading after 5 s; a failed command is retried twice at most (every
        script is safe to run twice), so a refused connection is reported at
        once and a Redis that hangs within 15 s.  ``options`` go to
        :class:`Matchmaker`.  A ``redis+cluster://host:port,host:port`` URL names a Redis
        Cluster (every pool's keys share one slot: see the module).
        """
        if url.startswith("redis+cluster://"):
            return cls(redis_cluster.async_client(
                url, max_connections=MAX_CONNECTIONS, socket_connect_timeout=2, socket_timeout=5),
                **options)
        pool = BlockingPool.from_url(
            url, max_connections=MAX_CONNECTIONS, timeout=10,
            socket_connect_timeout=2, socket_timeout=5, health_check_interval=15,
            retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.25), 2),
        )
        return cls(aioredis.Redis.from_pool(pool), **options)

    async def close(self) -> None:
        """Close the connections of this matchmaker's client."""
        await self.client.aclose()

    def keys(self, pool: str) -> list[str]:
        """The five Redis keys of ``pool``: queue, deadline, seeks, claimed, claims (see the module)."""
        if not is_pool_id(pool):
            raise ValueError(f"malformed pool id {pool!r}")
        tag = f"{{{self.prefix}:{pool}}}"
        return [f"{tag}:queue", f"{tag}:deadline", f"{tag}:seeks", f"{tag}:claimed", f"{tag}:claims"]

    async def _run(self, script, pool: str, args: Sequence = ()):
        keys = self.keys(pool)
        try:
            return await script(keys=keys, args=list(args))
        except (TimeoutError, RedisError, RedisClusterException, OSError) as exc:
            raise MatchmakingUnavailable(f"{type(exc).__name__}: {exc}") from exc

    async def add(self, seek: Seek) -> tuple[Seek, SeekStatus]:
        """Put ``seek`` into its pool (again, if it was there: its arrival time is kept).

        Returns the seek with ``since`` set to its arrival time and its status:
        ``waiting`` (the seek lives ``seek_ttl_s`` seconds unless
        :meth:`refresh` is called), or ``claimed`` when this seek id was paired
        in the last ``claimed_ttl_s`` seconds (it is not put back).  Safe to
        retry.
        """
        waiting, since = await self._run(self._add, seek.pool, [seek.id, seek.to_json(), self.seek_ttl_ms])
        if int(since) < 0:
            return seek, SeekStatus("claimed", int(waiting))
        return replace(seek, since=int(since)), SeekStatus("waiting", int(waiting))

    async def cancel(self, seek: Seek) -> SeekStatus:
        """Take ``seek`` out of its pool.  Once this returns ``removed`` or ``gone`` it is never paired.

        ``claimed`` means it was paired before the cancel arrived: the news of
        the game is on its way to the seek's socket.
        """
        state, waiting = await self._run(self._cancel, seek.pool, [seek.id])
        return SeekStatus(_text(state), int(waiting))

    async def refresh(self, seek: Seek) -> SeekStatus:
        """Give a waiting ``seek`` ``seek_ttl_s`` more seconds; report its state (see :class:`SeekStatus`)."""
        state, waiting = await self._run(self._refresh, seek.pool, [seek.id, self.seek_ttl_ms])
        return SeekStatus(_text(state), int(waiting))

    async def waiting(self, pool: str) -> int:
        """How many live seeks wait in ``pool``."""
        return int(await self._run(self._count, pool))

    async def sweep(self, pool: str, dry_run: bool = False) -> int:
        """Remove the expired seeks of ``pool`` (every script does so in passing; this is for a
        pool nobody has touched since) and forget its old claims; return how many seeks it removed
        (with ``dry_run``: how many it would remove, removing nothing)."""
        return int(await self._run(self._sweep, pool, ["1" if dry_run else "0"]))

    async def snapshot(self, pool: str, limit: int = SNAPSHOT_LIMIT) -> list[Seek]:
        """The live seeks of ``pool``, oldest first, at most ``limit`` of them."""
        return (await self.snapshot_at(pool, limit))[1]

    async def counts(self, pool_ids: Iterable[str]) -> dict[str, int]:
        """How many live seeks wait in each of ``pool_ids``: ``{pool id: count}``, in one round
        trip to Redis (a pipeline of the count script, one pool per call; on a cluster, which
        pipelines no scripts, the calls go side by side).  Raises :class:`MatchmakingUnavailable`,
        ``ValueError`` for a malformed id."""
        pool_ids = list(pool_ids)
        try:
            if isinstance(self.client, aioredis.RedisCluster):
                # A cluster pipelines no scripts: one call per pool, side by side.
                replies = await asyncio.gather(*(self._count(keys=self.keys(pool), args=[]) for pool in pool_ids))
                return {pool: int(n) for pool, n in zip(pool_ids, replies, strict=True)}
            async with self.client.pipeline(transaction=False) as pipe:
                for pool in pool_ids:
                    await self._count(keys=self.keys(pool), args=[], client=pipe)
                replies = await pipe.execute()
        except (TimeoutError, RedisError, RedisClusterException, OSError) as exc:
            raise MatchmakingUnavailable(f"{type(exc).__name__}: {exc}") from exc
        return {pool: int(n) for pool, n in zip(pool_ids, replies, strict=True)}

    async def listing(self, pool_ids: Iterable[str], limit: int) -> dict[str, tuple[int, list[Seek]]]:
        """The live seeks of each of ``pool_ids``, oldest first, at most ``limit`` of each, with the
        Redis clock (µs) they were read at: ``{pool id: (now µs, [Seek])}``, in one round trip (a
        pipeline of the snapshot script; on a cluster the calls go side by side).  Raises
        :class:`MatchmakingUnavailable`, ``ValueError`` for a malformed id."""
        pool_ids = list(pool_ids)
        try:
            if isinstance(self.client, aioredis.RedisCluster):
                replies = await asyncio.gather(*(self._snapshot(keys=self.keys(pool), args=[limit])
                                                 for pool in pool_ids))
            else:
                async with self.client.pipeline(transaction=False) as pipe:
                    for pool in pool_ids:
                        await self._snapshot(keys=self.keys(pool), args=[limit], client=pipe)
                    replies = await pipe.execute()
        except (TimeoutError, RedisError, RedisClusterException, OSError) as exc:
            raise MatchmakingUnavailable(f"{type(exc).__name__}: {exc}") from exc
        return {pool: _read_snapshot(flat) for pool, flat in zip(pool_ids, replies, strict=True)}

    async def snapshot_at(self, pool: str, limit: int = SNAPSHOT_LIMIT) -> tuple[int, list[Seek]]:
        """The Redis server's clock (µs) and the live seeks of ``pool``, oldest first, at most
        ``limit`` of them, read at that instant."""
        return _read_snapshot(await self._run(self._snapshot, pool, [limit]))

    async def claim(self, pool: str, pairings: Iterable[Pairing],
                    now_us: int | None = None) -> tuple[list[Pairing], int]:
        """Atomically take the ``pairings`` whose two seeks are both still waiting; drop the others.

        A pairing of two seeks of one player is never taken, whoever proposed
        it; in a rated pool (``POOLS[pool].rated``) neither is a pairing of two
        seeks out of range at ``now_us`` (µs on the clock of the seeks'
        ``since``; None: the Redis server's clock now), checked in Redis by the
        rule of :func:`game.lobby.pairing.in_range`.  Returns the pairings taken
        (in the given order) and how many seeks wait in the pool afterwards.
        Safe to retry: a claim that Redis ran but whose answer was lost is
        recognised by its token.
        """
        pairings = list(pairings)
        if not pairings:
            return [], await self.waiting(pool)
        args: list = [uuid.uuid4().hex, self.claimed_ttl_ms]
        if pool in POOLS and POOLS[pool].rated:
            args += ["" if now_us is None else int(now_us), RANGE_START, RANGE_STEP, RANGE_STEP_S * 1_000_000,
                     RANGE_MAX]
        else:
            args += ["", "", "", "", ""]
        for pairing in pairings:
            args += [pairing.black.id, pairing.white.id]
        reply = await self._run(self._claim, pool, args)
        return [pairings[int(n) - 1] for n in reply[1:]], int(reply[0])

    async def settle(self, pool: str, rng: random.Random,
                     now_us: int | None = None) -> tuple[list[Pairing], int]:
        """Pair whatever can be paired in ``pool`` now: read it, decide, claim; again while races were lost.

        A casual pool decides with :func:`game.lobby.pairing.pair_seeks`, a
        rated one with :func:`game.lobby.pairing.pair_rated` at ``now_us``
        (µs on the Redis clock of the seeks' ``since``; None: the Redis
        server's clock at each read; tests pass a later time to see the
        ranges widen).  Returns the pairings this call took (its caller
        creates the games and tells the players) and how many seeks wait
        afterwards.  A pairing proposed here but taken by another process
        meanwhile is simply not returned; each lost race means another
        process made progress, and the round count is bounded by
        :data:`SETTLE_ROUNDS`.
        """
        taken: list[Pairing] = []
        waiting = None
        rated = pool in POOLS and POOLS[pool].rated
        for _ in range(SETTLE_ROUNDS):
            redis_now, seeks = await self.snapshot_at(pool)
            at = redis_now if now_us is None else now_us
            proposal = pair_rated(seeks, at, rng) if rated else pair_seeks(seeks, rng)
            if not proposal:
                break
            # The claim checks the ranges at the time the proposal was made: the Redis clock of the
            # read (a later one only widens them), or the caller's.
            won, waiting = await self.claim(pool, proposal, now_us=at)
            taken += won
            if len(won) == len(proposal):
                break
        if waiting is None:
            waiting = await self.waiting(pool)
        return taken, waiting


# One matchmaker per event loop and configuration: a redis.asyncio client belongs to the loop
# that opened its connections.
_per_loop: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def from_settings() -> Matchmaker:
    """The matchmaker configured by Django settings, shared by the sockets of this event loop.

    Settings: ``MATCHMAKING_REDIS_URL``, ``MATCHMAKING_PREFIX``,
    ``MATCHMAKING_SEEK_TTL`` (seconds).  Read at each call, so a test may
    change them.  Must be called from a running event loop.
    """
    from django.conf import settings

    key = (settings.MATCHMAKING_REDIS_URL, settings.MATCHMAKING_PREFIX, float(settings.MATCHMAKING_SEEK_TTL))
    instances = _per_loop.setdefault(asyncio.get_running_loop(), {})
    matchmaker = instances.get(key)
    if matchmaker is None:
        url, prefix, ttl = key
        matchmaker = instances[key] = Matchmaker.from_url(url, prefix=prefix, seek_ttl_s=ttl)
    return matchmaker


async def close_all() -> None:
    """Close the matchmakers of the running event loop (tests call this before their loop ends)."""
    instances = _per_loop.pop(asyncio.get_running_loop(), {})
    for matchmaker in instances.values():
        await matchmaker.close()
