"""Settling the pools, and pushing their counts, at most once at a time per pool in a process.

Every seek that enters a pool makes this process *settle* the pool
(:meth:`game.lobby.pools.Matchmaker.settle`: read it, decide with
:func:`game.lobby.pairing.pair_seeks`, claim atomically), in the background and once at a time
per pool and process (:func:`request_settle`: a request that comes while a settling runs makes
it read the pool once more).  Each pairing claimed becomes a game
(:func:`game.lobby.paired.start_paired_game`).

After changes, the number of seeks waiting in a pool goes to every lobby socket, through the
group ``lobby.pools``, and the pool's visible seeks to every page that shows them
(:func:`game.lobby.seeklist.push`), both by :func:`request_count_push`: at most one push per pool
per process every :data:`COUNT_PUSH_DELAY_S` (the first change at once), the changes in between
merged.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
import weakref

from game.lobby import pools, seeklist
from game.lobby.groups import POOLS_GROUP, layer
from game.lobby.paired import start_paired_game
from game.lobby.pools import MatchmakingUnavailable
from game.sockets import in_background

log = logging.getLogger(__name__)

#: Seconds between two pushes of a pool's count by one process (changes in between are merged).
COUNT_PUSH_DELAY_S = 0.25

_rng = random.SystemRandom()

# Per event loop: count pushes waiting to run {pool: task}, when each pool was last pushed
# {pool: monotonic s}, and settlers running {pool: _Settler}.
_pushes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_last_push: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_settlers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def request_count_push(pool: str) -> None:
    """Push the number of seeks waiting in ``pool`` (and its visible seeks) to every lobby socket: at
    once when this process has not pushed that pool in the last :data:`COUNT_PUSH_DELAY_S`, else
    when that time is up, with every request made meanwhile merged into that one push."""
    loop = asyncio.get_running_loop()
    pending = _pushes.setdefault(loop, {})
    if pool not in pending:
        last = _last_push.setdefault(loop, {})
        wait = max(0.0, last.get(pool, 0.0) + COUNT_PUSH_DELAY_S - time.monotonic())
        pending[pool] = in_background(_push_count(pool, pending, last, wait))


async def _push_count(pool: str, pending: dict, last: dict, wait: float) -> None:
    try:
        await asyncio.sleep(wait)
    finally:
        pending.pop(pool, None)
        last[pool] = time.monotonic()
    try:
        waiting = await pools.from_settings().waiting(pool)
        await layer().group_send(
            POOLS_GROUP, {"type": "lobby.count", "pool": pool, "waiting": waiting})
        await seeklist.push(pool)
    except Exception as exc:  # noqa: BLE001 - a count is not worth more than a log line
        log.warning("lobby: could not push the count of pool %s: %s", pool, exc)


async def settle_pool(pool: str) -> int:
    """Pair what can be paired in ``pool`` now, start those games, tell the players.

    Returns how many seeks wait afterwards.  Raises :class:`MatchmakingUnavailable`.
    """
    pairings, waiting = await pools.from_settings().settle(pool, _rng)
    for pairing in pairings:
        await start_paired_game(pairing)
    if pairings:
        request_count_push(pool)
    return waiting


class _Settler:
    """The one settling of a pool running in this process, and whether it must look again."""

    def __init__(self):
        self.again = False
        self.task: asyncio.Task | None = None


def request_settle(pool: str) -> asyncio.Task:
    """Settle ``pool`` in the background: at most one settling per pool runs in a process at a time.

    A request made while one runs makes it read the pool once more when it
    ends, so a seek added meanwhile is always seen by a later read.  Returns
    the running task (awaiting it is optional; it never raises).
    """
    loop = asyncio.get_running_loop()
    settlers = _settlers.setdefault(loop, {})
    settler = settlers.get(pool)
    if settler is not None:
        settler.again = True
        return settler.task
    settler = settlers[pool] = _Settler()
    settler.task = in_background(_settle_while_asked(pool, settlers, settler))
    return settler.task


async def _settle_while_asked(pool: str, settlers: dict, settler: _Settler) -> None:
    try:
        while True:
            settler.again = False
            try:
                await settle_pool(pool)
            except MatchmakingUnavailable as exc:
                # The seeks' heartbeats settle again, or tell their players Redis is gone.
                log.warning("lobby: could not settle pool %s: %s", pool, exc)
                return
            except Exception:  # a bug here must not stop later settlings
                log.exception("lobby: settling pool %s failed", pool)
                return
            if not settler.again:
                return
    finally:
        settlers.pop(pool, None)

