"""Perft: counting the move paths of a given depth, the standard test of a move generator.

Capture routes that take the same pieces in a different order count
separately (docs/rules.md, "Multi-jumps"; the convention of Aart Bik's perft tables and
OEIS A133046).
"""

from __future__ import annotations

from . import bitboard
from .position import Color, Move, Position

__all__ = ["perft", "divide"]


def _state(position: Position) -> tuple[int, int, int, bool]:
    if not isinstance(position, Position):
        raise TypeError(f"position must be a Position, not {type(position).__name__}")
    if position.turn is Color.BLACK:
        return position.black, position.white, position.kings, True
    return position.white, position.black, position.kings, False


def perft(position: Position, depth: int, *, transpositions: bool = False) -> int:
    """Number of leaf positions reached by all move sequences of ``depth`` plies (an int).

    ``depth`` 0 counts the position itself. A side with no legal move ends its
    branch early (it contributes nothing at greater depths). The last ply is
    counted in bulk (moves are counted, not played). With
    ``transpositions=True`` subtrees reached again by another move order are
    looked up instead of searched (same result, much faster at depth 10 and
    more, and more memory). Raises ValueError for a negative depth.

    >>> [perft(Position.initial(), depth) for depth in range(5)]
    [1, 7, 49, 302, 1469]
    """
    if depth < 0:
        raise ValueError(f"depth must be at least 0, not {depth}")
    own, opp, kings, black = _state(position)
    if transpositions:
        return bitboard.perft_cached(own, opp, kings, black, depth, {})
    return bitboard.perft(own, opp, kings, black, depth)


def divide(position: Position, depth: int) -> list[tuple[Move, int]]:
    """Perft split by first move: a list of ``(Move, count)`` in :meth:`Position.legal_moves` order.

    ``depth`` must be at least 1; the counts add up to ``perft(position, depth)``.

    >>> [(str(m), n) for m, n in divide(Position.initial(), 2)][:2]
    [('9-13', 7), ('9-14', 7)]
    """
    if depth < 1:
        raise ValueError(f"divide needs a depth of at least 1, not {depth}")
    return [(move, perft(position.play(move), depth - 1)) for move in position.legal_moves()]
