"""Who is looking at a game: the players' sockets and the spectators', kept in Redis.

Each open game socket is a member of the sorted set ``<prefix>:viewers:<game id>``,
named ``<role>:<channel name>`` (role ``B``, ``W`` or ``S`` for a spectator) and
scored with the time (Unix seconds) at which it expires.  A socket refreshes its
entry on the browser's pings (at most every 15 s; the page pings every 3 s) and removes
it when it closes, or when the page has been silent for 10 s (a network gone without a
close frame: ``game.round.socket.SILENT_AFTER_S``); the entry of a socket whose server
process died expires after :data:`VIEWER_TTL_S`.
Every Daphne process shares the counts through Redis.

Presence is a convenience: when Redis fails, the functions log and return
empty counts, and games go on.  No result may rest on what a Redis restart or
failover erases: each game's hash of last sightings also holds ``epoch``, the
time from which this Redis has known who is on that game (set by the first
socket that refreshes after the data was lost).  Absence is measured from no
earlier than that, and without it presence is unknown and nobody is absent
(:func:`offline_s`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any

import redis
import redis.asyncio
from django.conf import settings
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from checkers_site import redis_cluster
from checkers_site.ops import metrics

log = logging.getLogger(__name__)

#: Seconds an entry lives without a refresh.
VIEWER_TTL_S = 60
#: Seconds a game's last sightings are kept after the last refresh.
SEEN_TTL_S = 30 * 86400
#: The field of a game's sightings hash: since when this Redis has known the game's presence.
EPOCH = "epoch"
#: Redis connections of one process's presence client (50 ran dry when 1,500 sockets of a
#: process connected within seconds, docs/performance.md).
PRESENCE_MAX_CONNECTIONS = 200

_async_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_sync_client: Any = None  # redis.Redis or redis.cluster.RedisCluster


def _key(game_id: str) -> str:
    """Sorted set: ``<role>:<socket>`` -> Unix seconds at which the entry expires.  The game id is
    the key's hash tag, so a game's two keys share one slot of a Redis Cluster (``leave`` changes
    both in one transaction)."""
    return f"{settings.REDIS_PREFIX}:viewers:{{{game_id}}}"


def _seen_key(game_id: str) -> str:
    """Hash: seat -> Unix seconds at which a socket of that seat was last known to be open."""
    return f"{settings.REDIS_PREFIX}:seen:{{{game_id}}}"


class PresenceUnavailable(Exception):
    """Redis could not be asked who is connected."""


def _client() -> Any:
    """The client of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        # A burst of sockets connecting together waits for a free connection (up to 2 s)
        # instead of failing beyond the pool's size.
        # After a Redis restart a pooled connection fails its next command once: retried at once
        # on a new connection (every presence command is safe to run twice).
        client = _async_clients[loop] = redis_cluster.site_async_client(
            PRESENCE_MAX_CONNECTIONS, socket_timeout=2, socket_connect_timeout=2,
            retry=AsyncRetry(NoBackoff(), 1))
    return client


def _counts(members: list[Any]) -> dict[str, Any]:
    roles = [m.split(b":", 1)[0] for m in members]
    return {"spectators": roles.count(b"S"), "online": {"B": b"B" in roles, "W": b"W" in roles}}


EMPTY = {"spectators": 0, "online": {"B": False, "W": False}}


async def refresh(game_id: str, channel_name: str, role: str) -> None:
    """Add or refresh one socket (``role`` ``'B'``, ``'W'`` or ``'S'``) and, for a player, the
    time its seat was last seen, without reading the audience back: one round trip with no
    transaction, for sockets connecting and pinging (every 15 s each).  Logs when Redis fails."""
    now = time.time()
    try:
        pipe = _client().pipeline(transaction=False)
        pipe.zadd(_key(game_id), {f"{role}:{channel_name}": now + VIEWER_TTL_S})
        pipe.zremrangebyscore(_key(game_id), "-inf", now)
        pipe.expire(_key(game_id), VIEWER_TTL_S * 2)
        if role in ("B", "W"):
            pipe.hset(_seen_key(game_id), role, now)
        pipe.hsetnx(_seen_key(game_id), EPOCH, now)
        pipe.expire(_seen_key(game_id), SEEN_TTL_S)
        await pipe.execute()
    except redis_cluster.ERRORS as exc:
        metrics.presence_failures.labels("refresh").inc()
        log.warning("presence unavailable: %s", exc)


async def audience(game_id: str) -> dict:
    """The game's audience now: ``{"spectators": int, "online": {"B": bool, "W": bool}}``;
    :data:`EMPTY` when Redis fails."""
    try:
        members = await _client().zrangebyscore(_key(game_id), time.time(), "+inf")
    except redis_cluster.ERRORS as exc:
        metrics.presence_failures.labels("audience").inc()
        log.warning("presence unavailable: %s", exc)
        return EMPTY
    return _counts(members)


async def leave(game_id: str, channel_name: str, role: str) -> dict:
    """Remove one socket; return the game's audience as :func:`audience` does."""
    try:
        pipe = _client().pipeline(transaction=True)
        if role in ("B", "W"):
            pipe.hset(_seen_key(game_id), role, time.time())
        pipe.hsetnx(_seen_key(game_id), EPOCH, time.time())
        pipe.expire(_seen_key(game_id), SEEN_TTL_S)
        pipe.zrem(_key(game_id), f"{role}:{channel_name}")
        pipe.zrangebyscore(_key(game_id), time.time(), "+inf")
        members = (await pipe.execute())[-1]
    except redis_cluster.ERRORS as exc:
        metrics.presence_failures.labels("leave").inc()
        log.warning("presence unavailable: %s", exc)
        return EMPTY
    return _counts(members)


def _sync() -> Any:
    global _sync_client
    if _sync_client is None:
        try:
            _sync_client = redis_cluster.site_sync_client(socket_timeout=2, socket_connect_timeout=2,
                                                          retry=Retry(NoBackoff(), 1))
        except redis_cluster.ERRORS as exc:
            raise redis.ConnectionError(str(exc)) from exc
    return _sync_client


def offline_s(game_id: str, seat: str, since: float) -> float:
    """Seconds the player of ``seat`` has had no socket open on the game (0 while one is open).

    Measured from the last time a socket of that seat was seen (opened,
    pinged or closed); a seat never seen is measured from ``since`` (Unix
    seconds, e.g. the start of the turn); and never from before the game's
    presence ``epoch`` (see the module docstring): 0 when this Redis has no
    record of the game's presence at all (restarted, failed over, flushed:
    unknown, so nobody is absent).  A socket whose server died counts as open
    until its entry expires (:data:`VIEWER_TTL_S`), and is measured from its
    last ping.  Synchronous, for the actions (claims).  Raises
    :class:`PresenceUnavailable` when Redis fails.
    """
    now = time.time()
    try:
        pipe = _sync().pipeline(transaction=False)
        pipe.zrangebyscore(_key(game_id), now, "+inf")
        pipe.hmget(_seen_key(game_id), [seat, EPOCH])
        members, (seen, epoch) = pipe.execute()
    except redis_cluster.ERRORS_OR_VALUE as exc:  # ValueError: a socket closed under redis-py
        metrics.presence_failures.labels("offline").inc()
        raise PresenceUnavailable(str(exc)) from None
    if epoch is None or _counts(members)["online"][seat]:
        return 0.0
    last = float(seen) if seen is not None else since
    return max(0.0, now - max(last, since, float(epoch)))


def sweep(dry_run: bool = False) -> int:
    """Remove the expired entries of every game's set of open sockets (those of sockets whose
    server process died; a set left alone expires by itself too), for ``manage.py housekeeping``.
    Returns how many entries were removed (with ``dry_run``: how many would be, removing none);
    raises :class:`PresenceUnavailable` when Redis fails."""
    now = time.time()
    removed = 0
    try:
        client = _sync()
        for key in client.scan_iter(match=_key("*"), count=500):
            if dry_run:
                removed += int(client.zcount(key, "-inf", now))
            else:
                removed += int(client.zremrangebyscore(key, "-inf", now))
    except redis_cluster.ERRORS as exc:
        raise PresenceUnavailable(str(exc)) from None
    return removed


def spectator_counts(game_ids: list[str]) -> dict[str, int]:
    """Spectators now watching each game, for pages (synchronous); 0 for all when Redis fails."""
    if not game_ids:
        return {}
    now = time.time()
    try:
        pipe = _sync().pipeline(transaction=False)
        for game_id in game_ids:
            pipe.zrangebyscore(_key(game_id), now, "+inf")
        results = pipe.execute()
    except redis_cluster.ERRORS_OR_VALUE as exc:  # ValueError: a socket closed under redis-py
        log.warning("presence unavailable: %s", exc)
        return dict.fromkeys(game_ids, 0)
    return {game_id: _counts(members)["spectators"] for game_id, members in zip(game_ids, results, strict=True)}
