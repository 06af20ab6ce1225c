"""The row and the rules' record of each game this process played a move of, kept for its next move.

Before a move, :func:`game.round.store.current_record` rebuilds the record from the last capture
or man move on: it reads those plies and replays them, each checked by the rules.  In an
endgame of kings that is up to 79 plies read and replayed for every move, the same ones again
and again.  A game's sockets are served by one process (the site's routing), so the process
that played a game's last move is nearly always the one that plays its next: it keeps the
record it played that move on, under the version the move gave the game, and uses it for the
next move when the game still has that version.

The version (``Game.version``) goes up with every change of the game, whichever process makes
it, so a record kept under an older version is never used: a takeback, a draw offer or a move
played elsewhere in between, and the record is rebuilt.  A record is kept only once its move's
transaction has committed (:func:`keep_after_commit`), and taken out while a move is played on
it, so a move that fails leaves nothing behind.  At most :data:`KEPT` games, the least recently
moved dropped first; a finished game's record is not kept.

The game's row as the move stored it is kept with the record: on PostgreSQL the next move is
checked on that copy and written only if the stored version is still the copy's
(:func:`game.round.store.move_if_unchanged`), without reading and locking the row first.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from typing import NamedTuple

from django.db import transaction

from game import rules
from game.models import Game
from game.round import store

#: Games whose record a process keeps at most (each a few kilobytes: up to 80 positions).
KEPT = 2048

class Kept(NamedTuple):
    """What a process kept after a game's move: the game's row as stored then (a copy of its own)
    and the rules' record at that row's version."""

    game: Game
    record: rules.Game


_kept: OrderedDict[str, Kept] = OrderedDict()
_lock = threading.Lock()


def to_play(game: Game) -> rules.Game:
    """The record of ``game`` (a row just loaded for a move) to play its next move on: the one
    kept after its last move here, if the game's version is still the one that move gave it,
    else :func:`game.round.store.current_record` (which reads the database).  Either way the
    record is the caller's to change; nothing is kept until :func:`keep_after_commit`."""
    with _lock:
        kept = _kept.pop(game.pk, None)
    if kept is not None and kept.game.version == game.version:
        return kept.record
    return store.current_record(game)


def take(game_id: object) -> Kept | None:
    """What was kept after the last move of the game ``game_id`` here, taken out (None if
    nothing): the game's row as that move stored it and its record, both the caller's to change.
    The row may be out of date: any change made since, here or elsewhere, advanced the stored
    version past ``Kept.game.version``."""
    with _lock:
        return _kept.pop(game_id, None) if isinstance(game_id, str) else None


def keep_after_commit(game: Game, record: rules.Game) -> None:
    """Keep ``record`` for the next move of ``game`` once the current transaction commits, under
    the game's version now (after the move's update).  Nothing is kept if it rolls back, or if
    the game is over.  After a capture or a man move the record kept starts from its position,
    as :func:`game.round.store.current_record` would start it."""
    kept = _kept_of(game, record)
    if kept is not None:
        transaction.on_commit(lambda: _keep(kept))


def keep(game: Game, record: rules.Game) -> None:
    """:func:`keep_after_commit` for a move already stored (its statement committed on its own)."""
    kept = _kept_of(game, record)
    if kept is not None:
        _keep(kept)


def _kept_of(game: Game, record: rules.Game) -> Kept | None:
    if record.is_over:
        return None
    if record.no_progress_plies == 0 and record.ply:
        record = rules.Game(record.position)
    return Kept(copy.copy(game), record)


def _keep(kept: Kept) -> None:
    game_id = kept.game.pk
    with _lock:
        _kept[game_id] = kept
        _kept.move_to_end(game_id)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)


def forget() -> None:
    """Drop every kept record (as a process that starts has none): for tests and benchmarks."""
    with _lock:
        _kept.clear()
