"""The seeks everyone can see, and the lobby's counters: players online, games in play.

A lobby socket that sends ``watch`` (every home page does) is sent every pool's waiting seeks at
once (``seeks``), then each pool's again whenever it changes (:mod:`game.lobby.fanout`: one read
and one frame a page per process for the changes of a 50-ms window), and all of them with the
counters every 10 s (the seeks of a dead process expire silently).  Only what a page shows leaves the server: the seek's
id (to play it), name, rating and how long it has waited; never a player id or a channel name.

Blocks hide seeks both ways (docs/people.md, "Blocks"): a page does not see the seek of a player
its player blocks or is blocked by.  A read of the lists (:func:`lists`) names the player of each
seek whose player blocks or is blocked by anyone (``owners``: its ``Seek.avoid`` is not empty), and
each watching page is sent the lists without the seeks of the players in its own set
(:func:`visible`), read when it starts watching; the page gets neither.  With no such seek in a
read, which is the common case, every page is sent the same text.

The counters: games in play (:func:`game.round.reads.seated_in_play`: any activity in the last 15
minutes, correspondence within its days) and players online, the people seated in those games and
those with a home page open (each lobby socket marks its player in a Redis sorted set every 10 s,
for :data:`ONLINE_TTL_S`).  Both are read at most once every :data:`COUNTERS_TTL_S` per process
and shared by its sockets.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref

from django.conf import settings

from game.lobby import pools
from game.lobby.pairing import POOLS, Seek
from game.round import reads
from game.sockets import in_db_thread

log = logging.getLogger(__name__)

#: Seeks shown of one pool at most, oldest first.
LIST_LIMIT = 30
#: Seconds a player counts as online after their home page last said so.
ONLINE_TTL_S = 30
#: Seconds the counters read by one process are reused.
COUNTERS_TTL_S = 5.0

#: Seconds the seeks of every pool read by one process for its sockets' refreshes are reused (a change
#: to a pool reaches the pages at once by :mod:`game.lobby.fanout` all the same).
LISTS_TTL_S = 2.0

_shared_reads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def public(seek: Seek, now_us: int) -> dict:
    """What pages see of ``seek`` at ``now_us`` (µs, the Redis clock of its ``since``):
    ``{"id": str, "name": str, "rating": int | None, "waited_ms": int}``."""
    return {"id": seek.id, "name": seek.name, "rating": seek.rating,
            "waited_ms": max(0, (now_us - seek.since) // 1000)}


async def lists(pool_ids) -> dict:
    """The visible seeks of each of ``pool_ids``, oldest first, at most :data:`LIST_LIMIT` each, and
    how many wait in each, in two pipelined reads side by side: ``{"pools": {pool id: [public seek,
    ...]}, "waiting": {pool id: int}}``, with ``"owners": {seek id: player id}`` for the seeks whose
    player blocks or is blocked by anyone (none: no ``owners``), for :func:`visible`, never for a
    page.  Raises :class:`game.lobby.pools.MatchmakingUnavailable`."""
    matchmaker = pools.from_settings()
    read, waiting = await asyncio.gather(matchmaker.listing(pool_ids, LIST_LIMIT), matchmaker.counts(pool_ids))
    listed: dict = {"pools": {pool: [public(seek, now_us) for seek in seeks] for pool, (now_us, seeks) in read.items()},
                    "waiting": waiting}
    owners = {seek.id: seek.player for _now, seeks in read.values() for seek in seeks if seek.avoid}
    if owners:
        listed["owners"] = owners
    return listed


def visible(listed: dict, hidden: frozenset[str]) -> dict:
    """The ``seeks`` message for a page whose player blocks or is blocked by the players ``hidden``
    (player ids), from ``listed`` (:func:`lists`): ``{"type": "seeks", "pools": {pool id: [public
    seek]}, "waiting": {pool id: int}}`` without the seeks of those players, and without ``owners``.
    Every pool of ``listed`` stays (a pool left empty tells the page that its seeks are gone); the
    counts stay as they are (a hidden seek still waits in its pool)."""
    owners = listed.get("owners")
    if owners and hidden:
        gone = {seek for seek, player in owners.items() if player in hidden}
        if gone:
            return {"type": "seeks", "pools": {pool: [s for s in seeks if s["id"] not in gone]
                                               for pool, seeks in listed["pools"].items()},
                    "waiting": listed["waiting"]}
    return {"type": "seeks", "pools": listed["pools"], "waiting": listed["waiting"]}


def _online_key() -> str:
    return f"{{{settings.MATCHMAKING_PREFIX}:online}}:players"


async def mark_online(player_id: str) -> None:
    """Count ``player_id`` as online for :data:`ONLINE_TTL_S` seconds.  A Redis failure is logged."""
    client = pools.from_settings().client
    try:
        key = _online_key()
        await client.zadd(key, {player_id: time.time() + ONLINE_TTL_S})
        await client.expire(key, ONLINE_TTL_S * 2)
    except Exception as exc:  # noqa: BLE001 - a counter is not worth more than a log line
        log.warning("lobby: could not mark %s online: %s", player_id, exc)


async def read_counters() -> dict:
    """The counters read now (:func:`counters` reuses them a while)."""
    client = pools.from_settings().client
    now = time.time()
    try:
        await client.zremrangebyscore(_online_key(), "-inf", now)
        on_home = {p.decode() if isinstance(p, bytes) else str(p)
                   for p in await client.zrangebyscore(_online_key(), now, "+inf")}
    except Exception as exc:  # noqa: BLE001 - the page then shows the games only
        log.warning("lobby: could not read who is online: %s", exc)
        on_home = set()
    games, seated = await in_db_thread(reads.seated_in_play)()
    return {"type": "counters", "online": len(on_home | seated), "playing": games}


async def _shared(name: str, ttl_s: float, read, fresh_after: float = 0.0) -> dict:
    """``await read()``, reused by this process's sockets (its event loop) for ``ttl_s`` seconds, and
    only when that read began at or after ``fresh_after`` (``time.monotonic()``)."""
    loop = asyncio.get_running_loop()
    state = _shared_reads.setdefault(loop, {}).setdefault(
        name, {"at": 0.0, "started": 0.0, "value": None, "lock": asyncio.Lock()})
    async with state["lock"]:
        if (state["value"] is None or time.monotonic() - state["at"] > ttl_s
                or state["started"] < fresh_after):
            started = time.monotonic()
            state["value"] = await read()
            state["at"], state["started"] = time.monotonic(), started
        return dict(state["value"])


async def counters() -> dict:
    """``{"type": "counters", "online": int, "playing": int}``: players online and games in play,
    read at most once every :data:`COUNTERS_TTL_S` seconds by this process (its event loop)."""
    return await _shared("counters", COUNTERS_TTL_S, read_counters)


async def every_pool(fresh_after: float) -> dict:
    """:func:`lists` of every pool of :data:`game.lobby.pairing.POOLS`, read at most once every
    :data:`LISTS_TTL_S` seconds by this process (its event loop), so that its sockets' refreshes cost
    one read, not one each; a read begun before ``fresh_after`` (``time.monotonic()``) is not
    reused.  Raises :class:`game.lobby.pools.MatchmakingUnavailable`."""
    return await _shared("lists", LISTS_TTL_S, lambda: lists(POOLS), fresh_after=fresh_after)


async def everything(joined_at: float = 0.0, hidden: frozenset[str] = frozenset()) -> list[dict]:
    """The messages a watching page is sent on ``watch`` and every 10 s: ``seeks`` of every pool, with
    every pool's count (:func:`every_pool`), without the seeks of the players ``hidden``
    (:func:`visible`), then ``counters``.
    ``joined_at`` (``time.monotonic()``): when the socket started watching (:mod:`game.lobby.fanout`
    sends it the changes from then on); a read begun before it is not reused, since a change sent
    between that read and then would reach the page only at its next refresh.  Raises
    :class:`game.lobby.pools.MatchmakingUnavailable`."""
    return [visible(await every_pool(joined_at), hidden), await counters()]
