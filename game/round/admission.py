"""How many game sockets one session and one client address may hold open, counted in Redis.

A session's sockets (and an address's) may land on different server
processes, so the count lives in Redis: each open game socket is a member of
the sorted sets ``{<prefix>:sockets}:session:<player id>`` and
``{<prefix>:sockets}:address:<address>``, named ``<instance>:<socket id>`` (the
instance: the server process's run, :data:`INSTANCE`) and scored with the time
(Unix seconds) at which it expires.  :func:`admit` adds it when the socket
opens, unless the session already holds ``GAME_SOCKETS_PER_SESSION`` sockets
or the address ``GAME_SOCKETS_PER_ADDRESS`` (one atomic script);
:func:`release` removes them when the socket closes.

The server keeps its own sockets' entries, whatever the page sends: each
process renews every entry of its open sockets about every :data:`RENEW_EVERY_S`
seconds, a slice with each heartbeat (they live :data:`SOCKET_TTL_S`), so a page that stops its pings
still counts for every socket it holds.  And each process says it is alive
in ``{<prefix>:sockets}:instances`` (its instance scored with the time its
heartbeat expires, renewed every :data:`HEARTBEAT_S` seconds, living
:data:`INSTANCE_TTL_S`): the entries of an instance whose heartbeat expired
(a server process killed, or frozen) no longer count, and :func:`admit`
removes them, so a dead process's sockets stop counting within seconds
instead of holding the client's places for a minute.

A limit of 0 counts nothing.  When Redis cannot answer, the socket is let in
(and a warning logged): honest players are never refused for a failure of
ours.

:class:`SessionRates` is the other half: a moving-window limit on the
messages of all of a session's sockets in this process, shared by them, and
another on those of all the sockets of one client address (all its sessions).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from checkers_site import redis_cluster
from game.round.rotation import Rotation
from game.sockets import SocketRateLimit

log = logging.getLogger(__name__)

#: Seconds a socket's entry lives without a renewal (its process renews it every RENEW_EVERY_S).
SOCKET_TTL_S = 60
#: Seconds between two renewals of this process's sockets' entries.
RENEW_EVERY_S = 20.0
#: Seconds between two heartbeats of this process, and how long one lives.
HEARTBEAT_S = 2.0
INSTANCE_TTL_S = 6.0
#: This server process's run, naming its sockets' entries.
INSTANCE = uuid.uuid4().hex[:16]

#: Why a socket was refused, by what :func:`admit` returns.
OVER_SESSION = "sockets_per_session"
OVER_ADDRESS = "sockets_per_address"

#: Seconds this process refuses, without asking Redis, more sockets of a session or an address it
#: just refused for being over a limit (a burst of sockets costs one count, not one each); a socket
#: of theirs closing in this process ends it at once.
REFUSED_FOR_S = 2.0


class Refusals:
    """The sets (:func:`_keys`) this process found full, until when (monotonic seconds)."""

    def __init__(self) -> None:
        self.until: dict[str, float] = {}

    def note(self, key: str) -> None:
        if len(self.until) > 10_000:    # throwaway sessions: keep the live ones
            now = time.monotonic()
            self.until = {k: t for k, t in self.until.items() if t > now}
        self.until[key] = time.monotonic() + REFUSED_FOR_S

    def holds(self, key: str) -> bool:
        until = self.until.get(key)
        if until is None:
            return False
        if until <= time.monotonic():
            del self.until[key]
            return False
        return True

    def forget(self, keys: tuple[str, ...]) -> None:
        for key in keys:
            self.until.pop(key, None)


#: This process's recent refusals.
refusals = Refusals()

# KEYS[1] the session's set, KEYS[2] the address's set, KEYS[3] the live instances; ARGV: the
# entry (instance:socket id), now, expiry, session limit, address limit (0: not counted), key
# lifetime, this instance, its heartbeat's expiry.  An entry whose instance has no live heartbeat
# is removed (looked at only when a set is full: the usual admission costs no scan).
# Returns 0 when admitted (and added to each counted set), 1 over the session's limit, 2 over the address's.
_ADMIT = """
local now = tonumber(ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[8], ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('EXPIRE', KEYS[3], 86400)
local limits = {tonumber(ARGV[4]), tonumber(ARGV[5])}
for i = 1, 2 do
  if limits[i] > 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
    if redis.call('ZCARD', KEYS[i]) >= limits[i] then
      for _, entry in ipairs(redis.call('ZRANGE', KEYS[i], 0, -1)) do
        local instance = string.match(entry, '^([^:]+):')
        if instance and not redis.call('ZSCORE', KEYS[3], instance) then
          redis.call('ZREM', KEYS[i], entry)
        end
      end
      if redis.call('ZCARD', KEYS[i]) >= limits[i] then
        return i
      end
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


def _client() -> Any:
    """The client of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = redis_cluster.site_async_client(
            100, socket_timeout=2, socket_connect_timeout=2)
    return client


@dataclass(frozen=True)
class Ticket:
    """One admitted socket: its entry (``<instance>:<socket id>``) and the keys of the sets it was
    added to."""

    socket_id: str
    keys: tuple[str, ...]


def _tag() -> str:
    """The hash tag of every key of the socket counts: one admission's script reads a session's,
    an address's and the instances' keys, which must share one slot of a Redis Cluster."""
    return f"{{{settings.REDIS_PREFIX}:sockets}}"


def _instances_key() -> str:
    return f"{_tag()}:instances"


class Keeper:
    """This process's open sockets' entries (of one event loop: a server has one), kept alive by
    a heartbeat task while there are any: the process's heartbeat every :data:`HEARTBEAT_S`
    seconds, and with each heartbeat a slice of the entries, so that each is renewed about every
    :data:`RENEW_EVERY_S` seconds (at most twice that; :class:`game.round.rotation.Rotation`), and
    all of them at once after Redis failed (it may have lost them)."""

    def __init__(self) -> None:
        self.tickets: set[Ticket] = set()
        self.task: asyncio.Task[None] | None = None

    def add(self, ticket: Ticket) -> None:
        self.tickets.add(ticket)
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._beat())

    def discard(self, ticket: Ticket) -> None:
        self.tickets.discard(ticket)
        if not self.tickets and self.task is not None:
            self.task.cancel()
            self.task = None

    async def _beat(self) -> None:
        rotation: Rotation[Ticket] = Rotation(max(1, round(RENEW_EVERY_S / HEARTBEAT_S)))
        failing = False
        while self.tickets:
            await asyncio.sleep(HEARTBEAT_S)
            now = time.time()
            renewed = (list(self.tickets) if failing
                       else [ticket for ticket in rotation.next(self.tickets) if ticket in self.tickets])
            try:
                pipe = _client().pipeline(transaction=False)
                pipe.zadd(_instances_key(), {INSTANCE: now + INSTANCE_TTL_S})
                for ticket in renewed:
                    for key in ticket.keys:
                        pipe.zadd(key, {ticket.socket_id: now + SOCKET_TTL_S})
                        pipe.expire(key, SOCKET_TTL_S * 2)
                await pipe.execute()
            except redis_cluster.ERRORS as exc:
                if not failing:
                    log.warning("socket limits unavailable: heartbeat failed: %s", exc)
                failing = True
                continue
            failing = False


_keepers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _keeper() -> Keeper:
    loop = asyncio.get_running_loop()
    found = _keepers.get(loop)
    if found is None:
        found = _keepers[loop] = Keeper()
    return found


def _keys(player_id: str | None, address: str | None, kind: str) -> tuple[str | None, str | None]:
    prefix = _tag() + ("" if kind == "game" else f":{kind}")
    return (f"{prefix}:session:{player_id}" if player_id else None,
            f"{prefix}:address:{address}" if address else None)


def limits_of(kind: str) -> tuple[int, int]:
    """``(per session, per address)`` for sockets of ``kind``: ``"lobby"`` (``LOBBY_SOCKETS_PER_*``),
    ``"people"`` (``PEOPLE_SOCKETS_PER_*``), or ``"game"`` and any other kind (``GAME_SOCKETS_PER_*``:
    the tournament page's, counted apart)."""
    if kind == "lobby":
        return settings.LOBBY_SOCKETS_PER_SESSION, settings.LOBBY_SOCKETS_PER_ADDRESS
    if kind == "people":
        return settings.PEOPLE_SOCKETS_PER_SESSION, settings.PEOPLE_SOCKETS_PER_ADDRESS
    return settings.GAME_SOCKETS_PER_SESSION, settings.GAME_SOCKETS_PER_ADDRESS


async def admit(socket_id: str, player_id: str | None, address: str | None,
                kind: str = "game") -> tuple[Ticket | None, str | None]:
    """Count a new socket of ``kind`` (``"game"``, ``"lobby"``, ``"tournament"``: counted apart) of ``player_id``'s
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
    # Refused a moment ago here: refused again without a round trip to Redis.
    if session_key and session_limit > 0 and refusals.holds(session_key):
        return None, OVER_SESSION
    if address_key and address_limit > 0 and refusals.holds(address_key):
        return None, OVER_ADDRESS
    now = time.time()
    keys = (session_key or f"{_tag()}:-", address_key or f"{_tag()}:-")
    entry = f"{INSTANCE}:{socket_id}"
    try:
        over = await _client().eval(_ADMIT, 3, *keys, _instances_key(), entry, now, now + SOCKET_TTL_S,
                                    max(session_limit, 0), max(address_limit, 0), SOCKET_TTL_S * 2,
                                    INSTANCE, now + INSTANCE_TTL_S)
    except redis_cluster.ERRORS as exc:
        log.warning("socket limits unavailable, socket admitted uncounted: %s", exc)
        return None, None
    if over == 1:
        refusals.note(keys[0])
        return None, OVER_SESSION
    if over == 2:
        refusals.note(keys[1])
        return None, OVER_ADDRESS
    counted = tuple(key for key, limit in zip(keys, (session_limit, address_limit), strict=True) if limit > 0)
    ticket = Ticket(entry, counted)
    _keeper().add(ticket)
    return ticket, None


async def refresh(ticket: Ticket) -> None:
    """Renew the socket's entries now (the process renews them by itself too, :class:`Keeper`);
    logs when Redis fails."""
    expires = time.time() + SOCKET_TTL_S
    try:
        pipe = _client().pipeline(transaction=False)
        for key in ticket.keys:
            pipe.zadd(key, {ticket.socket_id: expires}, xx=True)
            pipe.expire(key, SOCKET_TTL_S * 2)
        await pipe.execute()
    except redis_cluster.ERRORS as exc:
        log.warning("socket limits unavailable: %s", exc)


async def release(ticket: Ticket) -> None:
    """Remove the socket's entries (when it closes); logs when Redis fails (they expire).  Its
    session and address are no longer refused without asking Redis (:data:`refusals`)."""
    _keeper().discard(ticket)
    refusals.forget(ticket.keys)
    try:
        pipe = _client().pipeline(transaction=False)
        for key in ticket.keys:
            pipe.zrem(key, ticket.socket_id)
        await pipe.execute()
    except redis_cluster.ERRORS as exc:
        log.warning("socket limits unavailable: %s", exc)


class SessionRates:
    """A moving-window limit on the messages of every socket of one client in this process, shared
    by those sockets; the limit is the setting ``setting`` (limits' notation; empty: none).  A
    client's limiter lives while it has a socket here.

    Two of them: per session (``GAME_SESSION_RATE_LIMIT``: one session's many sockets cannot send
    more than one session may) and per client address (``GAME_ADDRESS_RATE_LIMIT``: nor can many
    throwaway sessions of one address, whatever each of them sends).
    """

    def __init__(self, setting: str = "GAME_SESSION_RATE_LIMIT") -> None:
        self.setting = setting
        self.limits: dict[str, tuple[SocketRateLimit, set[object]]] = {}

    def enter(self, client: str, socket: object) -> SocketRateLimit | None:
        """The shared limiter of ``client`` (a player id, an address), for its socket ``socket``;
        None when the setting is empty (no limit)."""
        spec = getattr(settings, self.setting, "")
        if not spec:
            return None
        found = self.limits.get(client)
        if found is None:
            found = self.limits[client] = (SocketRateLimit.parse(spec), set())
        found[1].add(socket)
        return found[0]

    def leave(self, client: str, socket: object) -> None:
        """``socket`` closed: forget the client's limiter once none of its sockets is left."""
        found = self.limits.get(client)
        if found is not None:
            found[1].discard(socket)
            if not found[1]:
                del self.limits[client]


#: The sessions of this process.
session_rates = SessionRates("GAME_SESSION_RATE_LIMIT")
#: The client addresses of this process.
address_rates = SessionRates("GAME_ADDRESS_RATE_LIMIT")
