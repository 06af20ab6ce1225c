"""What a game's start and end bring with them, added where they are decided.

An action decides that a game starts (its second seat is taken) or ends (a move that ends it, a
resignation, an agreed draw, a flag, a claim, an abort); :func:`complete` adds to its changes
what follows from that, before they are stored:

- an end: ``finished_at`` (the same instant as the row's ``updated_at``) and, for a rated game
  that finished (not aborted), both players' new ratings, settled in the action's transaction
  under the game's row lock (:func:`game.ratings.games.settle`), with the game's rating diffs;
- a rated game's start: both players' ratings of its category and whether each was provisional
  (:func:`game.ratings.games.start_fields`), kept on the row so that every state of the game
  shows them without reading the ratings again.

The storage (:mod:`game.round.store`) only writes what it is given.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from game.models import Game
from game.ratings import games as ratings

ENDED = (Game.Status.FINISHED, Game.Status.ABORTED)


def complete(game: Game, changes: dict[str, Any]) -> dict[str, Any]:
    """Add to ``changes`` (stored field → value, about to be written to ``game``, the row as
    loaded or kept) what the start or end they make brings with it (see the module docstring);
    returns ``changes``.  A rated game's end reads and writes the players' ratings: call it in the
    transaction that holds the game's row lock."""
    status = changes.get("status")
    if status is None or status == game.status:
        return changes
    if status in ENDED and not game.is_over:
        now = changes.setdefault("updated_at", timezone.now())
        changes.setdefault("finished_at", now)
        if game.rated and status == Game.Status.FINISHED:
            changes.update(ratings.settle(game, changes.get("result", game.result)))
    elif status == Game.Status.ACTIVE and game.rated and game.black_rating is None:
        changes.update(ratings.start_fields(changes.get("black_player", game.black_player),
                                            changes.get("white_player", game.white_player), game.time_control))
    return changes


def ends_rated_game(game: Game, changes: dict[str, Any]) -> bool:
    """Whether ``changes`` end the rated ``game`` with a result to rate (its end settles the
    ratings, which needs the row locked)."""
    return game.rated and changes.get("status") == Game.Status.FINISHED and not game.is_over
