"""Who is looking at a game: the players' sockets and the spectators', kept in Redis.

Each open game socket is a member of the sorted set ``<prefix>:viewers:<game id>``,
named ``<role>:<channel name>`` (role ``B``, ``W`` or ``S`` for a spectator) and
scored with the time (Unix seconds) at which it expires.  A socket writes its
entry when it opens (:func:`refresh`) and removes it when it closes, or when the
page has been silent for 10 s (a network gone without a close frame:
``game.round.socket.SILENT_AFTER_S``: a socket's entry stands for a page that is
heard); in between, its process renews the entries of all its sockets about
every :data:`RENEW_EVERY_S` seconds (:class:`Keeper`: a slice of them at a time,
in few round trips, where one per socket's ping cost a tenth of a busy
process's time), and the entry of a
socket whose server process died expires after :data:`VIEWER_TTL_S`.
Every Daphne process shares the counts through Redis.

Presence is a convenience: when Redis fails, the functions log and return
empty counts, and games go on.  No result may rest on what a Redis restart or
failover erases: each game's hash of last sightings also holds ``epoch``, the
time from which this Redis has known who is on that game (set by the first
socket that refreshes after the data was lost).  Absence is measured from no
earlier than that, and without it presence is unknown and nobody is absent
(:func:`offline_s`).  The hash expires a day after its last write for a live
game (:data:`SEEN_LIVE_TTL_S`), 30 days after it for an untimed or a
correspondence one (:data:`SEEN_TTL_S`): a game whose hash expired is known
again from its next socket on, as after a loss.
"""

from __future__ import annotations

import asyncio
import contextvars
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
from game.clock import TimeControl
from game.round.rotation import Rotation

log = logging.getLogger(__name__)

#: Seconds an entry lives without a refresh.
VIEWER_TTL_S = 60
#: Seconds between two renewals of this process's sockets' entries (:class:`Keeper`).
RENEW_EVERY_S = 15.0
#: The renewals of a period are spread over this many turns, one slice of the sockets a turn
#: (:class:`game.round.rotation.Rotation`): never one burst of all of them.
RENEW_SLICES = 15
#: Sockets renewed per round trip at most (a slice of many sockets goes in several pipelines).
RENEW_BATCH = 500
#: Seconds the last sightings of a game without a running clock of its own (untimed, or
#: correspondence) are kept after the last write: ``manage.py housekeeping`` reads an untimed
#: game's after it has been left alone for ``--deserted-after`` (a day by default; any length up to
#: this one), and a correspondence game lives for weeks.
SEEN_TTL_S = 30 * 86400
#: Seconds a live game's sightings are kept after the last write (its last socket's close, or the
#: last renewal while one is open): every reader of them reads a live game while its players
#: play (a claim, an arena's absence) or just after it ends (a rematch's notification).
SEEN_LIVE_TTL_S = 86400
#: The field of a game's sightings hash: since when this Redis has known the game's presence.
EPOCH = "epoch"
#: Redis connections of one process's presence client: what a crowd of sockets connecting needs
#: on a process that reads its replies late (the games' audience reads and the closes are not held
#: by the handshake gate); 64 failed hundreds of commands for want of a connection in a burst of
#: 1,500 sockets on a starved process (docs/performance/16-failover.md).
PRESENCE_MAX_CONNECTIONS = 200
#: The name its connections give themselves (``CLIENT LIST``).
CLIENT_NAME = "checkers-presence"

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
            PRESENCE_MAX_CONNECTIONS, socket_timeout=2, socket_connect_timeout=2, client_name=CLIENT_NAME,
            retry=AsyncRetry(NoBackoff(), 1))
    return client


def _counts(members: list[Any]) -> dict[str, Any]:
    roles = [m.split(b":", 1)[0] for m in members]
    return {"spectators": roles.count(b"S"), "online": {"B": b"B" in roles, "W": b"W" in roles}}


EMPTY = {"spectators": 0, "online": {"B": False, "W": False}}


#: A socket's presence: ``(game id, channel name, role, seconds its game's sightings are kept)``
#: (:data:`SEEN_LIVE_TTL_S` or :data:`SEEN_TTL_S`, :func:`seen_ttl_s`).
Entry = tuple[str, str, str, int]


def seen_ttl_s(control: TimeControl) -> int:
    """Seconds the sightings of a game with time control ``control`` are kept after their last write."""
    return SEEN_LIVE_TTL_S if control.live else SEEN_TTL_S


def _write(pipe: Any, entries: list[Entry], now: float, renew: bool = False) -> None:
    """Queue on ``pipe`` the writes of ``entries`` (:data:`Entry`): each socket's entry, and per
    game its expired entries swept, its players' last sighting and its ``epoch`` (set once), and
    both keys' lifetimes.  With ``renew`` an entry is only renewed, never added: a renewal that
    reaches Redis after the socket's :func:`leave` does not bring the entry back (after a Redis
    restart the sockets write theirs again, ``Member.resync``)."""
    by_game: dict[str, list[tuple[str, str]]] = {}
    kept: dict[str, int] = {}
    for game_id, channel_name, role, kept_s in entries:
        by_game.setdefault(game_id, []).append((channel_name, role))
        kept[game_id] = max(kept.get(game_id, 0), kept_s)
    for game_id, sockets in by_game.items():
        pipe.zadd(_key(game_id), {f"{role}:{channel_name}": now + VIEWER_TTL_S for channel_name, role in sockets},
                  xx=renew)
        pipe.zremrangebyscore(_key(game_id), "-inf", now)
        pipe.expire(_key(game_id), VIEWER_TTL_S * 2)
        seats = {role: now for _, role in sockets if role in ("B", "W")}
        if seats:
            pipe.hset(_seen_key(game_id), mapping=seats)
        pipe.hsetnx(_seen_key(game_id), EPOCH, now)
        pipe.expire(_seen_key(game_id), kept[game_id])


class Keeper:
    """The entries of this process's open sockets (of one event loop: a server has one), each
    renewed about every :data:`RENEW_EVERY_S` seconds (at most twice that) by a task that runs
    while there are any: a :data:`RENEW_SLICES`-th of them every ``RENEW_EVERY_S / RENEW_SLICES``
    seconds."""

    def __init__(self) -> None:
        #: channel name -> its :data:`Entry`
        self.entries: dict[str, Entry] = {}
        self.task: asyncio.Task[None] | None = None

    def keep(self, game_id: str, channel_name: str, role: str, kept_s: int) -> None:
        """Renew the entry of socket ``channel_name`` (of ``game_id``, as ``role``; its game's
        sightings kept ``kept_s`` seconds after each write) from now on."""
        self.entries[channel_name] = (game_id, channel_name, role, kept_s)
        if self.task is None or self.task.done():
            # A context of its own: its log lines are the process's, not the first socket's.
            self.task = asyncio.get_running_loop().create_task(self._renew(), context=contextvars.Context())

    def drop(self, channel_name: str) -> None:
        """Renew the entry of socket ``channel_name`` no more (no error if it was not kept)."""
        self.entries.pop(channel_name, None)
        if not self.entries and self.task is not None:
            self.task.cancel()
            self.task = None

    async def _renew(self) -> None:
        rotation: Rotation[str] = Rotation(RENEW_SLICES)
        while self.entries:
            await asyncio.sleep(RENEW_EVERY_S / RENEW_SLICES)
            entries = [self.entries[name] for name in rotation.next(self.entries) if name in self.entries]
            for start in range(0, len(entries), RENEW_BATCH):
                batch = [entry for entry in entries[start:start + RENEW_BATCH] if entry[1] in self.entries]
                try:
                    pipe = _client().pipeline(transaction=False)
                    _write(pipe, batch, time.time(), renew=True)
                    await pipe.execute()
                except redis_cluster.ERRORS_OR_VALUE as exc:  # ValueError: a socket closed under redis-py
                    metrics.presence_failures.labels("refresh").inc()
                    log.warning("presence unavailable: %s", exc)
                    break
                except Exception:   # never the end of the renewals: every socket would look gone
                    log.exception("could not renew the presence entries")
                    break


_keepers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def keeper() -> Keeper:
    """The :class:`Keeper` of the running event loop."""
    loop = asyncio.get_running_loop()
    found = _keepers.get(loop)
    if found is None:
        found = _keepers[loop] = Keeper()
    return found


async def refresh(game_id: str, channel_name: str, role: str, kept_s: int) -> None:
    """Add or refresh one socket (``role`` ``'B'``, ``'W'`` or ``'S'``) and, for a player, the
    time its seat was last seen (the game's sightings then kept ``kept_s`` seconds,
    :func:`seen_ttl_s`), without reading the audience back; returns once Redis has it.
    The socket's process renews it afterwards when the socket asked its :func:`keeper` to
    (:meth:`Keeper.keep`, until :func:`leave` or :meth:`Keeper.drop`).  The writes of the sockets
    that open together go in one round trip (:class:`Writer`).  Logs when Redis fails."""
    await writer().write((game_id, channel_name, role, kept_s))


class Writer:
    """The first writes of this process's sockets (of one event loop), sent together: while one
    round trip is under way the next sockets' entries wait, then go in the next one (up to
    :data:`RENEW_BATCH` entries a pipeline).  A burst of sockets opening together costs a few
    round trips, not one each."""

    def __init__(self) -> None:
        self.waiting: list[tuple[Entry, asyncio.Future[None]]] = []
        self.task: asyncio.Task[None] | None = None

    async def write(self, entry: Entry) -> None:
        """Write ``entry`` (:data:`Entry`) with the next round trip; returns once
        it is done (or failed, logged).  Cancelling the caller does not take the entry back."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self.waiting.append((entry, done))
        if self.task is None or self.task.done():
            # A context of its own: its log lines are the process's, not the first socket's.
            self.task = loop.create_task(self._send(), context=contextvars.Context())
        await asyncio.shield(done)

    async def _send(self) -> None:
        try:
            await self._send_all()
        finally:     # cancelled (the loop closing): nobody is left waiting
            waiting, self.waiting = self.waiting, []
            for _, done in waiting:
                if not done.done():
                    done.set_result(None)

    async def _send_all(self) -> None:
        while self.waiting:
            batch, self.waiting = self.waiting[:RENEW_BATCH], self.waiting[RENEW_BATCH:]
            try:
                pipe = _client().pipeline(transaction=False)
                _write(pipe, [entry for entry, _ in batch], time.time())
                await pipe.execute()
            except redis_cluster.ERRORS_OR_VALUE as exc:  # ValueError: a socket closed under redis-py
                metrics.presence_failures.labels("refresh").inc()
                log.warning("presence unavailable: %s", exc)
            except Exception:   # never left waiting: the sockets' closes wait for their entries
                log.exception("could not write the presence entries")
            finally:
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)


_writers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def writer() -> Writer:
    """The :class:`Writer` of the running event loop."""
    loop = asyncio.get_running_loop()
    found = _writers.get(loop)
    if found is None:
        found = _writers[loop] = Writer()
    return found


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


async def leave(game_id: str, channel_name: str, role: str, kept_s: int) -> dict:
    """Remove one socket (its process no longer renews it), a player's last sighting written (the
    game's sightings then kept ``kept_s`` seconds, :func:`seen_ttl_s`); return the game's audience
    as :func:`audience` does."""
    found = keeper().entries.get(channel_name)
    if found is not None and found[0] == game_id and found[2] == role:
        keeper().drop(channel_name)
    try:
        pipe = _client().pipeline(transaction=True)
        if role in ("B", "W"):
            pipe.hset(_seen_key(game_id), role, time.time())
        pipe.hsetnx(_seen_key(game_id), EPOCH, time.time())
        pipe.expire(_seen_key(game_id), kept_s)
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
    return {game_id: audience["spectators"] for game_id, audience in audiences(game_ids).items()}


def audiences(game_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Who has each game open now, for pages (synchronous): ``{game id: {"spectators": int, "online":
    {"B": bool, "W": bool}}}`` in one round trip; :data:`EMPTY` for all when Redis fails."""
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
        return dict.fromkeys(game_ids, EMPTY)
    return {game_id: _counts(members) for game_id, members in zip(game_ids, results, strict=True)}
