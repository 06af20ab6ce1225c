"""Errors raised by the rules, split by cause (and :class:`~game.rules.position.AmbiguousMoveError`,
which carries the moves it could be, beside them in :mod:`game.rules.position`).

Every error is a :class:`RulesError`, which is a :class:`ValueError`, so a
caller may catch them all at once or map each cause to its own error code.
"""

from __future__ import annotations

__all__ = [
    "RulesError",
    "InvalidFenError",
    "MalformedMoveError",
    "IllegalMoveError",
    "GameOverError",
]


class RulesError(ValueError):
    """Base class of every error raised by :mod:`game.rules`."""


class InvalidFenError(RulesError):
    """A position string is not valid PDN FEN (docs/rules.md, "FEN").

    The message names what is wrong: repeated square, square outside 1-32,
    square held by both sides, stray characters, a man on its crowning row,
    or a bad side to move.
    """


class MalformedMoveError(RulesError):
    """Text is not move notation at all (for example ``"e2e4"`` or ``"11-"``)."""


class IllegalMoveError(RulesError):
    """A well-formed move that is not legal in the position it was played in."""


class GameOverError(RulesError):
    """A move or an ending was applied to a game that is already decided."""
