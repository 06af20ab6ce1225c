"""Arena scoring, pure: points for one game, the streak, berserk, the arena draw rule, and the
performance rating that breaks ties (docs/tournaments.md, "Arena").

- A win is worth :data:`WIN` points, a draw :data:`DRAW`, a loss nothing.
- Two wins in a row put a player on fire: from the next game on, points are doubled until a game
  that is not a win (that game itself is still doubled when it is a draw, as on lichess).
- A draw within the first :data:`DRAW_RULE_MOVES` moves scores nothing (the arena draw rule).
- A player who went berserk and won a game that lasted at least :data:`BERSERK_MOVES` moves gets
  :data:`BERSERK_BONUS` more (never doubled).

A game's *moves* are full moves of the players: their plies (a 3-move ballot's are the site's)
halved, rounded down.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

WIN = 2
DRAW = 1
BERSERK_BONUS = 1
#: A draw that lasted fewer full moves than this scores nothing.
DRAW_RULE_MOVES = 10
#: A berserk win earns its bonus from this many full moves on.
BERSERK_MOVES = 7
#: Wins in a row that put a player on fire.
FIRE_STREAK = 2


class Result(enum.Enum):
    """A game's result for one player."""

    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"


@dataclass(frozen=True)
class Scored:
    """One player's points for one game and their streak afterwards (wins in a row)."""

    points: int
    streak: int


def on_fire(streak: int) -> bool:
    """Whether a player with ``streak`` wins in a row scores double in their next game."""
    return streak >= FIRE_STREAK


def score(result: Result, streak: int, berserk: bool, moves: int) -> Scored:
    """The points of one game for a player who had won their last ``streak`` games in a row, went
    ``berserk`` or not, in a game of ``moves`` full moves; and their streak after it.

    >>> score(Result.WIN, 2, True, 30)
    Scored(points=5, streak=3)
    """
    fire = on_fire(streak)
    if result is Result.WIN:
        points = WIN * (2 if fire else 1)
        if berserk and moves >= BERSERK_MOVES:
            points += BERSERK_BONUS
        return Scored(points, streak + 1)
    if result is Result.DRAW and moves >= DRAW_RULE_MOVES:
        return Scored(DRAW * (2 if fire else 1), 0)
    return Scored(0, 0)


def performance(opponents_rating: int, games: int, wins: int, draws: int) -> int:
    """The performance rating of ``games`` games (``wins`` and ``draws`` among them) against
    opponents whose ratings add up to ``opponents_rating``: their mean plus 500 points per net win
    a game (0 for no game).  It breaks ties of score in the standings."""
    if games <= 0:
        return 0
    losses = games - wins - draws
    return round((opponents_rating + 500 * (wins - losses)) / games)
