"""One game's actions take turns: a slow game keeps its slowness to itself.

Every action that writes a game locks its row (:func:`game.round.store.load_for_update`).
Waiting for that lock inside a database thread would let a few games whose rows are held (a
long transaction, a stuck process, a flood of one game's messages) take every thread of the
process while every other game waits for one.  So the row is locked with ``NOWAIT``, and
:func:`run` does the waiting on the event loop instead: the actions of one game in one process
run one at a time (later ones wait their turn without a thread), and one that finds the row
held by another process's transaction gives its thread back and tries again shortly, for as
long as the database's ``lock_timeout`` would have waited.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from django.conf import settings
from django.utils.translation import gettext_lazy as _

from game.round.errors import ActionError
from game.round.store import RowBusy, without_waiting
from game.sockets import in_db_thread

R = TypeVar("R")

#: Seconds between two tries of an action whose game row was held, doubling up to the last.
RETRY_S = (0.01, 0.02, 0.05, 0.1, 0.2)

_turns: dict[str, asyncio.Lock] = {}
_waiting: dict[str, int] = {}


async def run(game_id: str, action: Callable[..., R], *args: Any,
              on_loop: Callable[..., Awaitable[R | None]] | None = None, **kwargs: Any) -> R:
    """Run ``action(game_id, *args, **kwargs)`` in a database thread, after the actions of the
    same game that this process started before it, trying again while the game's row is held
    elsewhere.  With ``on_loop``, ``await on_loop(game_id, *args, **kwargs)`` is tried first, in
    the game's turn, on the event loop: its result when not None, else ``action`` runs as above.
    Raises what the action raises, and :class:`ActionError` ``busy`` when the row was still held
    after ``DATABASE_LOCK_TIMEOUT_MS``.
    """
    lock = _turns.get(game_id)
    if lock is None:
        lock = _turns[game_id] = asyncio.Lock()
    _waiting[game_id] = _waiting.get(game_id, 0) + 1
    try:
        async with lock:
            if on_loop is not None:
                done = await on_loop(game_id, *args, **kwargs)
                if done is not None:
                    return done
            return await _tries(game_id, action, *args, **kwargs)
    finally:
        _waiting[game_id] -= 1
        if not _waiting[game_id]:
            del _waiting[game_id]
            del _turns[game_id]


async def _tries(game_id: str, action: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.DATABASE_LOCK_TIMEOUT_MS / 1000
    attempt = 0
    while True:
        try:
            return await in_db_thread(without_waiting(action))(game_id, *args, **kwargs)
        except RowBusy:
            if loop.time() >= deadline:
                raise ActionError("busy", _("The game is busy right now; nothing was changed. "
                                            "Try again in a moment.")) from None
            await asyncio.sleep(RETRY_S[min(attempt, len(RETRY_S) - 1)])
            attempt += 1
