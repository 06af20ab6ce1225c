"""Berserk: a seat of a live game gives up half its time and its increment before its first move.

Only the arenas offer it (:mod:`game.tournaments.arena`, which records the bonus it may earn); the
game's side of it is here, one action like the others: the seat's stored time halved and the seat
marked (``Game.black_berserk``/``white_berserk``: :class:`game.clock.Clock` then adds no increment
to its moves, as on lichess) under the row lock, and an ``update`` ``berserk`` event for every
viewer, whose clocks then show it.
"""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.models import Game
from game.round.progress import Change, Progress, act, seat_in_play
from game.rules import Color, ballots


def first_move_ply(game: Game, seat: Color) -> int:
    """The ply count at which ``seat`` has made a move of its own in ``game`` (a 3-move ballot's
    plies are the site's): the side that moves first after the opening has moved from the first
    such ply on, the other from the second."""
    opening = ballots.opening_plies(game.ballot)
    first = Color.BLACK if opening % 2 == 0 else Color.WHITE
    return opening + (1 if seat is first else 2)


def has_moved(game: Game, seat: Color) -> bool:
    """Whether ``seat`` has made a move of its own in ``game`` (:func:`first_move_ply`)."""
    return game.ply >= first_move_ply(game, seat)


def possible(game: Game, seat: Color | None) -> bool:
    """Whether :func:`berserk` would accept ``seat`` now: a seat of an active live game that has
    neither moved nor gone berserk yet (the game's side; the arena checks its own)."""
    start_ms = game.control.start_ms()
    return (seat is not None and game.status == Game.Status.ACTIVE and game.control.live
            and start_ms is not None and not has_moved(game, seat)
            and getattr(game, Game.ms_field(seat)) == start_ms)


def berserk(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """Halve the time of ``player_id``'s seat in a live game in which it has not moved yet, and
    take its increment away (the seat marked berserk).

    Returns the ``update`` ``berserk`` event.  Raises :class:`ActionError`: ``no_such_game``,
    ``not_seated``, ``game_over``, ``not_started``, ``berserk_no_clock`` (an untimed or correspondence
    game), ``berserk_too_late`` (the seat has moved), ``berserk_twice`` (its time is halved already).
    """
    def decide(game: Game, seat: Color | None) -> Change:
        side = seat_in_play(game, player_id)
        control = game.control
        start_ms = control.start_ms()
        if not control.live or start_ms is None:
            raise ActionError("berserk_no_clock", _("Berserk needs a game with a clock."))
        if has_moved(game, side):
            raise ActionError("berserk_too_late", _("Berserk is only possible before your first move."))
        field = Game.ms_field(side)
        if getattr(game, field) < start_ms or getattr(game, Game.berserk_field(side)):
            raise ActionError("berserk_twice", _("You have gone berserk already in this game."))
        return Change("berserk", {field: start_ms // 2, Game.berserk_field(side): True})

    return act(game_id, player_id, decide, now)
