"""How many game sockets one session and one client address may hold open, counted in Redis.

A session's sockets (and an address's) may land on different server
processes, so the count lives in Redis: each open game socket is a member of
the sorted sets ``<prefix>:sockets:session:<player id>`` and
``<prefix>:sockets:address:<address>``, named ``<instance>:<socket id>`` (the
instance: the server process's run, :data:`INSTANCE`) and scored with the time
(Unix seconds) at which it expires.  :func:`admit` adds it when the socket
opens, unless the session already holds ``GAME_SOCKETS_PER_SESSION`` sockets
or the address ``GAME_SOCKETS_PER_ADDRESS`` (one atomic script per set, both
at once; a socket refused by one set is taken out of the other);
:func:`release` removes them when the socket closes.  The keys have no hash
tag: on a Redis Cluster each session's and each address's set sits in a slot
of its own, so the counts spread over every shard instead of one.

The server keeps its own sockets' entries, whatever the page sends: each
process renews every entry of its open sockets about every :data:`RENEW_EVERY_S`
seconds, a slice with each heartbeat (they live :data:`SOCKET_TTL_S`), so a page that stops its pings
still counts for every socket it holds.  And each process says it is alive
in ``<prefix>:sockets:instances`` (its instance scored with the time its
heartbeat expires, renewed every :data:`HEARTBEAT_S` seconds, living
:data:`INSTANCE_TTL_S`; written before its first socket is counted): the
entries of an instance whose heartbeat expired (a server process killed, or
frozen) no longer count, and :func:`admit` removes them when it finds a set
full (reading the live instances then, and only then), so a dead process's
sockets stop counting within seconds instead of holding the client's places
for a minute.

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

#: Redis connections of one process's client: two for each socket admitted at once (the session's
#: and the address's scripts go together), ``WEBSOCKET_HANDSHAKES_AT_ONCE`` (32) at a time, and the
#: releases of closing sockets, which no gate holds; 64 failed a thousand counts for want of a
#: connection in a burst of 1,500 sockets on a starved process (docs/performance/16-failover.md).
MAX_CONNECTIONS = 100
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

# KEYS[1] one set (a session's or an address's); ARGV: the entry (instance:socket id), now,
# expiry, limit, key lifetime, then the entries to remove first (those of dead instances).
# Returns nil when admitted (the entry added), else every entry of the full set (the caller looks
# for dead instances among them: the usual admission costs no scan and reads no other key).
_ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]))
for i = 6, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return redis.call('ZRANGE', KEYS[1], 0, -1)
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return false
"""

_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _client() -> Any:
    """The client of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = redis_cluster.site_async_client(
            MAX_CONNECTIONS, socket_timeout=2, socket_connect_timeout=2, client_name="checkers-sockets")
    return client


@dataclass(frozen=True)
class Ticket:
    """One admitted socket: its entry (``<instance>:<socket id>``) and the keys of the sets it was
    added to."""

    socket_id: str
    keys: tuple[str, ...]


def _base() -> str:
    """The start of every key of the socket counts (no hash tag: each key has a slot of its own)."""
    return f"{settings.REDIS_PREFIX}:sockets"


def instances_key() -> str:
    """The sorted set of the server processes alive: :data:`INSTANCE` -> Unix seconds until which
    its last heartbeat says so (written every :data:`HEARTBEAT_S` while it holds a counted socket)."""
    return f"{_base()}:instances"


class Keeper:
    """This process's open sockets' entries (of one event loop: a server has one), kept alive by
    a heartbeat task while there are any: the process's heartbeat every :data:`HEARTBEAT_S`
    seconds, and with each heartbeat a slice of the entries, so that each is renewed about every
    :data:`RENEW_EVERY_S` seconds (at most twice that; :class:`game.round.rotation.Rotation`), and
    all of them at once after Redis failed (it may have lost them)."""

    def __init__(self) -> None:
        self.tickets: set[Ticket] = set()
        self.task: asyncio.Task[None] | None = None
        #: Until when (Unix seconds) the process's last heartbeat written says it is alive.
        self.alive_until = 0.0

    async def register(self) -> None:
        """Write the process's heartbeat now if the last one written is about to expire: before
        a socket of it is counted, so that no other process takes its entries for a dead one's.
        Raises ``redis_cluster.ERRORS``."""
        now = time.time()
        if self.alive_until - now > HEARTBEAT_S:
            return
        await _client().zadd(instances_key(), {INSTANCE: now + INSTANCE_TTL_S})
        self.alive_until = now + INSTANCE_TTL_S

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
                pipe.zadd(instances_key(), {INSTANCE: now + INSTANCE_TTL_S})
                pipe.zremrangebyscore(instances_key(), "-inf", now)
                pipe.expire(instances_key(), 86400)
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
            self.alive_until = now + INSTANCE_TTL_S
            failing = False


_keepers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _keeper() -> Keeper:
    loop = asyncio.get_running_loop()
    found = _keepers.get(loop)
    if found is None:
        found = _keepers[loop] = Keeper()
    return found


def _keys(player_id: str | None, address: str | None, kind: str) -> tuple[str | None, str | None]:
    prefix = _base() + ("" if kind == "game" else f":{kind}")
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
    and ``(None, OVER_SESSION or OVER_ADDRESS)`` when a limit is reached (the session's first).
    When Redis fails: ``(None, None)``, admitted without being counted.
    """
    session_key, address_key = _keys(player_id, address, kind)
    per_session, per_address = limits_of(kind)
    counted = [(key, limit, reason) for key, limit, reason in
               ((session_key, per_session, OVER_SESSION), (address_key, per_address, OVER_ADDRESS))
               if key and limit > 0]
    if not counted:
        return None, None
    # Refused a moment ago here: refused again without a round trip to Redis.
    for key, _limit, reason in counted:
        if refusals.holds(key):
            return None, reason
    entry = f"{INSTANCE}:{socket_id}"
    try:
        await _keeper().register()
        answers = await asyncio.gather(*(_admit_one(key, entry, limit) for key, limit, _ in counted),
                                       return_exceptions=True)
    except redis_cluster.ERRORS as exc:
        answers = [exc]
    failed = next((a for a in answers if isinstance(a, BaseException)), None)
    if failed is not None and not isinstance(failed, redis_cluster.ERRORS):
        raise failed
    admitted = tuple(key for (key, _, _), answer in zip(counted, answers, strict=False) if answer is True)
    refused = next((reason for (key, _, reason), answer in zip(counted, answers, strict=False)
                    if answer is False), None)
    if failed is not None or refused is not None:
        await _remove(entry, admitted)        # counted in one set only: taken out again
        if failed is not None:
            log.warning("socket limits unavailable, socket admitted uncounted: %s", failed)
            return None, None
        for key, _, reason in counted:
            if reason == refused:
                refusals.note(key)
        return None, refused
    ticket = Ticket(entry, admitted)
    _keeper().add(ticket)
    return ticket, None


async def _admit_one(key: str, entry: str, limit: int) -> bool:
    """Add ``entry`` to the set ``key`` unless it holds ``limit`` live entries: whether it did.  A
    full set is looked at once more without the entries of instances whose heartbeat expired.
    Raises ``redis_cluster.ERRORS``."""
    now = time.time()
    args = (entry, now, now + SOCKET_TTL_S, limit, SOCKET_TTL_S * 2)
    full = await _client().eval(_ADMIT, 1, key, *args)
    if full is None:
        return True
    live = {_text(i) for i in await _client().zrangebyscore(instances_key(), now, "+inf")} | {INSTANCE}
    dead = [e for e in map(_text, full) if e.split(":", 1)[0] not in live]
    if not dead:
        return False
    return await _client().eval(_ADMIT, 1, key, *args, *dead) is None


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def _remove(entry: str, keys: tuple[str, ...]) -> None:
    """Take ``entry`` out of the sets ``keys`` (logs when Redis fails: it expires)."""
    if not keys:
        return
    try:
        pipe = _client().pipeline(transaction=False)
        for key in keys:
            pipe.zrem(key, entry)
        await pipe.execute()
    except redis_cluster.ERRORS as exc:
        log.warning("socket limits unavailable: %s", exc)


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
    await _remove(ticket.socket_id, ticket.keys)


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
