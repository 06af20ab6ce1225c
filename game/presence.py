"""Who is looking at a game: the players' sockets and the spectators', kept in Redis.

Each open game socket is a member of the sorted set ``<prefix>:viewers:<game id>``,
named ``<role>:<channel name>`` (role ``B``, ``W`` or ``S`` for a spectator) and
scored with the time (Unix seconds) at which it expires.  A socket refreshes its
entry whenever the browser pings (every 20 s) and removes it when it closes; the
entry of a socket whose server process died expires after :data:`VIEWER_TTL_S`.
Every Daphne process shares the counts through Redis.

Presence is a convenience: when Redis fails, the functions log and return
empty counts, and games go on.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref

import redis
import redis.asyncio
from django.conf import settings

log = logging.getLogger(__name__)

#: Seconds an entry lives without a refresh.
VIEWER_TTL_S = 60

_async_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_sync_client: redis.Redis | None = None


def _key(game_id: str) -> str:
    return f"{settings.CHANNEL_LAYERS['default']['CONFIG']['prefix']}:viewers:{game_id}"


def _client() -> redis.asyncio.Redis:
    """The client of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    client = _async_clients.get(loop)
    if client is None:
        client = _async_clients[loop] = redis.asyncio.Redis.from_url(
            settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
    return client


def _counts(members: list[bytes]) -> dict:
    roles = [m.split(b":", 1)[0] for m in members]
    return {"spectators": roles.count(b"S"), "online": {"B": b"B" in roles, "W": b"W" in roles}}


EMPTY = {"spectators": 0, "online": {"B": False, "W": False}}


async def enter(game_id: str, channel_name: str, role: str) -> dict:
    """Add (or refresh) one socket; return the game's audience.

    ``role`` is ``'B'``, ``'W'`` or ``'S'``.  Returns ``{"spectators": int,
    "online": {"B": bool, "W": bool}}``; :data:`EMPTY` when Redis fails.
    """
    now = time.time()
    try:
        pipe = _client().pipeline(transaction=True)
        pipe.zadd(_key(game_id), {f"{role}:{channel_name}": now + VIEWER_TTL_S})
        pipe.zremrangebyscore(_key(game_id), "-inf", now)
        pipe.expire(_key(game_id), VIEWER_TTL_S * 2)
        pipe.zrange(_key(game_id), 0, -1)
        members = (await pipe.execute())[-1]
    except (redis.RedisError, OSError) as exc:
        log.warning("presence unavailable: %s", exc)
        return EMPTY
    return _counts(members)


async def leave(game_id: str, channel_name: str, role: str) -> dict:
    """Remove one socket; return the game's audience as :func:`enter` does."""
    try:
        pipe = _client().pipeline(transaction=True)
        pipe.zrem(_key(game_id), f"{role}:{channel_name}")
        pipe.zrangebyscore(_key(game_id), time.time(), "+inf")
        members = (await pipe.execute())[-1]
    except (redis.RedisError, OSError) as exc:
        log.warning("presence unavailable: %s", exc)
        return EMPTY
    return _counts(members)


def spectator_counts(game_ids: list[str]) -> dict[str, int]:
    """Spectators now watching each game, for pages (synchronous); 0 for all when Redis fails."""
    global _sync_client
    if not game_ids:
        return {}
    if _sync_client is None:
        _sync_client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2,
                                            socket_connect_timeout=2)
    now = time.time()
    try:
        pipe = _sync_client.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.zrangebyscore(_key(game_id), now, "+inf")
        results = pipe.execute()
    except (redis.RedisError, OSError) as exc:
        log.warning("presence unavailable: %s", exc)
        return {game_id: 0 for game_id in game_ids}
    return {game_id: _counts(members)["spectators"] for game_id, members in zip(game_ids, results)}
