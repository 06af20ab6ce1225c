"""Settling the pools, at most once at a time per pool in a process.

Every seek that enters a pool makes this process *settle* the pool
(:meth:`game.lobby.pools.Matchmaker.settle`: read it, decide with
:func:`game.lobby.pairing.pair_seeks`, claim atomically), in the background and once at a time
per pool and process (:func:`request_settle`: a request that comes while a settling runs makes
it read the pool once more).  Each pairing claimed becomes a game
(:func:`game.lobby.paired.start_paired_game`).

Each pairing changes its pool: every process hears of it (:func:`game.lobby.fanout.changed`) and
sends its pages the pool's count and seeks.
"""

from __future__ import annotations

import asyncio
import logging
import random
import weakref

from game.lobby import fanout, pools
from game.lobby.paired import start_paired_game
from game.lobby.pools import MatchmakingUnavailable
from game.sockets import in_background

log = logging.getLogger(__name__)

_rng = random.SystemRandom()

# Per event loop: settlers running {pool: _Settler}.
_settlers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


async def settle_pool(pool: str) -> int:
    """Pair what can be paired in ``pool`` now, start those games, tell the players.

    Returns how many seeks wait afterwards.  Raises :class:`MatchmakingUnavailable`.
    """
    pairings, waiting = await pools.from_settings().settle(pool, _rng)
    for pairing in pairings:
        await start_paired_game(pairing)
    if pairings:
        fanout.changed(pool)
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

