"""Errors raised by the rules, split by cause.

Every error is a :class:`RulesError`, which is a :class:`ValueError`, so a
caller may catch them all at once or map each cause to its own error code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .position import Move

__all__ = [
    "RulesError",
    "InvalidFenError",
    "MalformedMoveError",
    "IllegalMoveError",
    "AmbiguousMoveError",
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


class AmbiguousMoveError(RulesError):
    """A short-form move such as ``"27x11"`` that matches several legal moves.

    :attr:`candidates` is the list of matching :class:`~game.rules.Move`
    values; the message lists them in full form.
    """

    def __init__(self, message: str, candidates: Iterable[Move] = ()) -> None:
        super().__init__(message)
        self.candidates: list[Move] = list(candidates)


class GameOverError(RulesError):
    """A move or an ending was applied to a game that is already decided."""
