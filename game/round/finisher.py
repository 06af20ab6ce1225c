"""What a game's start and end bring with them, added where they are decided.

An action decides that a game starts (its second seat is taken) or ends (a move that ends it, a
resignation, an agreed draw, a flag, a claim, an abort); :func:`complete` adds to its changes
what follows from that, before they are stored:

- an end: ``finished_at`` (the same instant as the row's ``updated_at``) and, for a rated game
  that finished (not aborted), both players' new ratings, settled in the action's transaction
  under the game's row lock (:func:`game.ratings.games.settle`), with the game's rating diffs;
- a rated game's start: both players' ratings of its category and whether each was provisional
  (:func:`game.ratings.games.start_fields`), kept on the row so that every state of the game
  shows them without reading the ratings again;
- a rated game ended before each side made :data:`EARNED_MOVES` moves of its own is aborted
  instead (lichess's rule: a result must be played for, a resignation at the first move included,
  :func:`earned`), and whoever left a rated game unplayed is noted for the playban
  (:mod:`game.ratings.playban`).

Once an end has committed, :data:`game.round.signals.game_ended` tells the rooms above (a
tournament's standings, a review).  The storage (:mod:`game.round.store`) only writes what it is
given.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import transaction
from django.utils import timezone

from game import rules
from game.models import Game
from game.ratings import games as ratings
from game.ratings import playban
from game.round import signals
from game.rules import Color, ballots

ENDED = (Game.Status.FINISHED, Game.Status.ABORTED)
#: Moves of its own each side must have made for a rated game's result to count.
EARNED_MOVES = 2


def earned(game: Game) -> bool:
    """Whether each side of ``game`` has made :data:`EARNED_MOVES` moves of its own (the plies of a
    3-move ballot are the site's, not the players')."""
    return game.ply - ballots.opening_plies(game.ballot) >= 2 * EARNED_MOVES


def unearned(game: Game, changes: dict[str, Any]) -> bool:
    """Whether ``changes`` finish the rated ``game`` before its result is earned (:func:`earned`):
    the game is then aborted instead."""
    return (game.rated and changes.get("status") == Game.Status.FINISHED and not game.is_over
            and not earned(game))


def aborted_instead(changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` with the game aborted instead of finished (no result, no rating)."""
    return {**changes, "status": Game.Status.ABORTED, "result": rules.Outcome(rules.Termination.ABORTED, None).result,
            "termination": rules.Termination.ABORTED.value}


def complete(game: Game, changes: dict[str, Any], by: Color | None = None,
             decided: dict[str, Any] | None = None) -> dict[str, Any]:
    """Add to ``changes`` (stored field → value, about to be written to ``game``, the row as
    loaded or kept) what the start or end they make brings with it (see the module docstring);
    returns ``changes``.  ``by``: the seat whose action ends the game (None: the rules, the
    clock, the site); ``decided``: the end as the action decided it, when it was aborted instead
    (:func:`aborted_instead`).  A rated game's end reads and writes the players' ratings: call it
    in the transaction that holds the game's row lock."""
    status = changes.get("status")
    if status is None or status == game.status:
        return changes
    if status in ENDED and not game.is_over:
        now = changes.setdefault("updated_at", timezone.now())
        changes.setdefault("finished_at", now)
        transaction.on_commit(functools.partial(signals.game_ended.send, sender=Game, game=game))
        if game.rated:
            _note_departure(game, changes, decided or changes, by, now)
        if game.rated and status == Game.Status.FINISHED:
            changes.update(ratings.settle(game, changes.get("result", game.result)))
    elif status == Game.Status.ACTIVE and game.rated and game.black_rating is None:
        changes.update(ratings.start_fields(changes.get("black_player", game.black_player),
                                            changes.get("white_player", game.white_player), game.time_control))
    return changes


def ends(game: Game, changes: dict[str, Any]) -> bool:
    """Whether ``changes`` end ``game`` (finished or aborted), which :func:`complete` then announces
    once the transaction that stores them commits."""
    return changes.get("status") in ENDED and not game.is_over


def ends_rated_game(game: Game, changes: dict[str, Any]) -> bool:
    """Whether ``changes`` end the rated ``game`` with a result to rate (its end settles the
    ratings, which needs the row locked)."""
    return game.rated and changes.get("status") == Game.Status.FINISHED and not game.is_over


def _note_departure(game: Game, changes: dict[str, Any], decided: dict[str, Any], by: Color | None,
                    now: Any) -> None:
    """Note for the playban the player who left the rated ``game`` unplayed, if its end says one
    did: a claim against an absent player; an abort by a seat; a resignation, a flag or a first
    move's time run out before the result was earned.  ``changes``: the end as stored; ``decided``:
    as the action decided it."""
    if game.status != Game.Status.ACTIVE:
        return      # never started: nobody left it
    termination = decided.get("termination")
    winner = {"1-0": Color.BLACK, "0-1": Color.WHITE}.get(decided.get("result", ""))
    aborted = changes.get("status") == Game.Status.ABORTED
    if termination == rules.Termination.ABANDONED.value:
        leaver, kind = (winner.opponent if winner else game.turn), playban.ABANDONED
    elif aborted and termination == rules.Termination.RESIGNATION.value and winner is not None:
        leaver, kind = winner.opponent, playban.ABORTED
    elif aborted and (termination == rules.Termination.TIME_FORFEIT.value or by is None):
        leaver, kind = game.turn, playban.NO_MOVE
    elif aborted and by is not None:
        leaver, kind = by, playban.ABORTED
    else:
        return
    if game.player(leaver):
        playban.record(game.player(leaver), game, kind, now)
