"""How many game sockets one session and one client address may hold open, counted in Redis.

A session's sockets (and an address's) may land on different server
processes, so the count lives in Redis: each open game socket is a member of
the sorted sets ``<prefix>:sockets:session:<player id>`` and
``<prefix>:sockets:address:<address>``, named by its socket id and scored with
the time (Unix seconds) at which it expires.  :func:`admit` adds it when the
socket opens, unless the session already holds ``GAME_SOCKETS_PER_SESSION``
sockets or the address ``GAME_SOCKETS_PER_ADDRESS`` (one atomic script);
:func:`refresh` renews the entries on every ping (every 20 s) and
:func:`release` removes them when the socket closes; the entries of a socket
whose server process died expire after :data:`SOCKET_TTL_S`, as presence's
do (:mod:`game.round.presence`).

A limit of 0 counts nothing.  When Redis cannot answer, the socket is let in
(and a warning logged): honest players are never refused for a failure of
ours.

:class:`SessionRates` is the other half: a moving-window limit on the
messages of all of a session's sockets in this process, shared by them.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from dataclasses import dataclass

import redis
import redis.asyncio
from django.conf import settings

from game.sockets import SocketRateLimit

log = logging.getLogger(__name__)

#: Seconds a socket's entry lives without a refresh (the page pings every 20 s).
SOCKET_TTL_S = 60

#: Why a socket was refused, by what :func:`admit` returns.
OVER_SESSION = "sockets_per_session"
OVER_ADDRESS = "sockets_per_address"

# KEYS[1] the session's set, KEYS[2] the address's set; ARGV: socket id, now, expiry,
# session limit, address limit (0: not counted), key lifetime.
# Returns 0 when admitted (and added to each counted set), 1 over the session's limit, 2 over the address's.
_ADMIT = """
local now = tonumber(ARGV[2])
local limits = {tonumber(ARGV[4]), tonumber(ARGV[5])}
for i = 1, 2 do
  if limits[i] > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
    if redis.call('ZCARD', KEYS[i]) >= limits[i] then
      return i
    end
  end
end
for i = 1, 2 do
  if limits[i] > 0 then
    redis.call('ZADD', KEYS[i], ARGV[3], ARGV[1])
    redis.call('EXPIRE', KEYS[i], ARGV[6])
  end
end
return 0
"""

_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _client() -> redis.asyncio.Redis:
    """The client of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            settings.REDIS_URL, max_connections=100, timeout=2, socket_timeout=2,
            socket_connect_timeout=2)
        client = _clients[loop] = redis.asyncio.Redis(connection_pool=pool)
    return client


@dataclass(frozen=True)
class Ticket:
    """One admitted socket: its id and the keys of the sets it was added to."""

    socket_id: str
    keys: tuple[str, ...]


def _keys(player_id: str | None, address: str | None, kind: str) -> tuple[str | None, str | None]:
    prefix = f"{settings.REDIS_PREFIX}:sockets" + ("" if kind == "game" else f":{kind}")
    return (f"{prefix}:session:{player_id}" if player_id else None,
            f"{prefix}:address:{address}" if address else None)


def limits_of(kind: str) -> tuple[int, int]:
    """``(per session, per address)`` for sockets of ``kind``: ``"game"`` (``GAME_SOCKETS_PER_*``)
    or ``"lobby"`` (``LOBBY_SOCKETS_PER_*``)."""
    if kind == "lobby":
        return settings.LOBBY_SOCKETS_PER_SESSION, settings.LOBBY_SOCKETS_PER_ADDRESS
    return settings.GAME_SOCKETS_PER_SESSION, settings.GAME_SOCKETS_PER_ADDRESS


async def admit(socket_id: str, player_id: str | None, address: str | None,
                kind: str = "game") -> tuple[Ticket | None, str | None]:
    """Count a new socket of ``kind`` (``"game"`` or ``"lobby"``, counted apart) of ``player_id``'s
    session from ``address`` (either may be None: not counted).

    Returns ``(ticket, None)`` when admitted (the ticket for :func:`refresh` and :func:`release`)
    and ``(None, OVER_SESSION or OVER_ADDRESS)`` when a limit is reached.  When Redis fails:
    ``(None, None)``, admitted without being counted.
    """
    session_key, address_key = _keys(player_id, address, kind)
    per_session, per_address = limits_of(kind)
    session_limit = per_session if session_key else 0
    address_limit = per_address if address_key else 0
    if session_limit <= 0 and address_limit <= 0:
        return None, None
    now = time.time()
    keys = (session_key or "-", address_key or "-")
    try:
        over = await _client().eval(_ADMIT, 2, *keys, socket_id, now, now + SOCKET_TTL_S,
                                    max(session_limit, 0), max(address_limit, 0), SOCKET_TTL_S * 2)
    except (redis.RedisError, OSError) as exc:
        log.warning("socket limits unavailable, socket admitted uncounted: %s", exc)
        return None, None
    if over == 1:
        return None, OVER_SESSION
    if over == 2:
        return None, OVER_ADDRESS
    counted = tuple(key for key, limit in zip(keys, (session_limit, address_limit), strict=True) if limit > 0)
    return Ticket(socket_id, counted), None


async def refresh(ticket: Ticket) -> None:
    """Renew the socket's entries (on each ping); logs when Redis fails."""
    expires = time.time() + SOCKET_TTL_S
    try:
        pipe = _client().pipeline(transaction=False)
        for key in ticket.keys:
            pipe.zadd(key, {ticket.socket_id: expires}, xx=True)
            pipe.expire(key, SOCKET_TTL_S * 2)
        await pipe.execute()
    except (redis.RedisError, OSError) as exc:
        log.warning("socket limits unavailable: %s", exc)


async def release(ticket: Ticket) -> None:
    """Remove the socket's entries (when it closes); logs when Redis fails (they expire)."""
    try:
        pipe = _client().pipeline(transaction=False)
        for key in ticket.keys:
            pipe.zrem(key, ticket.socket_id)
        await pipe.execute()
    except (redis.RedisError, OSError) as exc:
        log.warning("socket limits unavailable: %s", exc)


class SessionRates:
    """The moving-window limit (``GAME_SESSION_RATE_LIMIT``) on the messages of every socket of one
    session in this process, shared by those sockets: one session's many sockets cannot send more
    than one session may.  A session's limiter lives while it has a socket here.
    """

    def __init__(self) -> None:
        self.limits: dict[str, tuple[SocketRateLimit, set[object]]] = {}

    def enter(self, player_id: str, socket: object) -> SocketRateLimit:
        """The shared limiter of ``player_id``'s session, for its socket ``socket``."""
        found = self.limits.get(player_id)
        if found is None:
            found = self.limits[player_id] = (SocketRateLimit.parse(settings.GAME_SESSION_RATE_LIMIT), set())
        found[1].add(socket)
        return found[0]

    def leave(self, player_id: str, socket: object) -> None:
        """``socket`` closed: forget the session's limiter once none of its sockets is left."""
        found = self.limits.get(player_id)
        if found is not None:
            found[1].discard(socket)
            if not found[1]:
                del self.limits[player_id]


#: The sessions of this process.
session_rates = SessionRates()
