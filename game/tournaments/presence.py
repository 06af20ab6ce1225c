"""Who has a tournament open: its entrants' sockets on its page, in Redis, and whether a player is
gone when their arena game ends.

Each open tournament socket of an entrant (the tournament's page, or an arena game's page, which
follows the same socket) is a member ``<instance>:<channel name>`` of the set
``<prefix>:tournaments:here:<tournament id>:<player id>``, added when it opens (:func:`enter`) and
removed when it closes (:func:`leave`).  A member counts while its server process lives: the
process's heartbeat in :mod:`game.round.admission` (:func:`~game.round.admission.instances_key`,
written every couple of seconds while the process holds a counted socket, as each tournament
socket is), so the members of a process that died stop counting within
:data:`~game.round.admission.INSTANCE_TTL_S` seconds.  A set lives a day after its last write.

:func:`gone` is what an arena asks when a game ends: a player with neither a socket on the game
(:mod:`game.round.presence`) nor one on the tournament is gone, and paused until a page of the
tournament opens again.  It answers False whenever it cannot tell (no record of the game's
presence, Redis failing): only a player known to have left is paused.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from typing import Any

from django.conf import settings

from checkers_site import redis_cluster
from game.round import admission
from game.round import presence as game_presence
from game.rules import Color

log = logging.getLogger(__name__)

#: Seconds a tournament's set of one player's sockets lives after its last write.
HERE_TTL_S = 86400

#: What leaves a player's presence unknown: the game's presence or Redis failing.
_UNKNOWN: tuple[type[Exception], ...] = (game_presence.PresenceUnavailable, *redis_cluster.ERRORS_OR_VALUE)

_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_sync_client: Any = None


def _key(tournament_id: str, player_id: str) -> str:
    return f"{settings.REDIS_PREFIX}:tournaments:here:{tournament_id}:{player_id}"


def _member(channel_name: str) -> str:
    return f"{admission.INSTANCE}:{channel_name}"


def _client() -> Any:
    """The client of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = _clients[loop] = redis_cluster.site_async_client(50, socket_timeout=2, socket_connect_timeout=2,
                                                                  client_name="checkers-arena")
    return client


def _sync() -> Any:
    global _sync_client
    if _sync_client is None:
        _sync_client = redis_cluster.site_sync_client(socket_timeout=2, socket_connect_timeout=2)
    return _sync_client


async def enter(tournament_id: str, player_id: str, channel_name: str) -> None:
    """An entrant's socket ``channel_name`` is open on the tournament; logs when Redis fails."""
    key = _key(tournament_id, player_id)
    try:
        pipe = _client().pipeline(transaction=False)
        pipe.zadd(key, {_member(channel_name): time.time()})
        pipe.expire(key, HERE_TTL_S)
        await pipe.execute()
    except redis_cluster.ERRORS as exc:
        log.warning("tournaments: presence unavailable: %s", exc)


async def leave(tournament_id: str, player_id: str, channel_name: str) -> None:
    """The socket :func:`enter` wrote closed; logs when Redis fails (its process's end stops it
    counting)."""
    try:
        await _client().zrem(_key(tournament_id, player_id), _member(channel_name))
    except redis_cluster.ERRORS as exc:
        log.warning("tournaments: presence unavailable: %s", exc)


def here(tournament_id: str, player_id: str) -> bool:
    """Whether ``player_id`` has a socket open on the tournament now (of a live server process).
    Raises ``redis_cluster.ERRORS`` when Redis fails."""
    members = _sync().zrange(_key(tournament_id, player_id), 0, -1)
    if not members:
        return False
    alive = {_text(i) for i in _sync().zrangebyscore(admission.instances_key(), time.time(), "+inf")}
    return any(_text(m).split(":", 1)[0] in alive for m in members)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def gone(tournament_id: str, player_id: str, game_id: str, side: Color, since: float) -> bool:
    """Whether the player of ``side`` in the arena game ``game_id`` has left: no socket on the game
    (measured from ``since``, Unix seconds, for a seat never seen there) and none on the
    tournament.  False when that cannot be told: the game's presence unknown to this Redis
    (:func:`game.round.presence.offline_s`) or Redis failing."""
    try:
        if game_presence.offline_s(game_id, side.value, since) <= 0:
            return False
        return not here(tournament_id, player_id)
    except _UNKNOWN as exc:
        log.warning("tournaments: presence unavailable, %s taken as present: %s", player_id, exc)
        return False
