"""Move generation for the search: the legal moves of a bitboard position as child positions.

The search works on plain integers, as :mod:`game.rules.bitboard` does: ``own``
and ``opp`` are the pieces of the side to move and of the other side (bit
``n - 1`` for square ``n``), ``kings`` the kings of both sides and ``black``
tells whether the side to move is Black. The legality of every move comes
from :mod:`game.rules.bitboard` (the same code behind
:meth:`game.rules.Position.legal_moves`: its capture results and its quiet moves,
in the rules' order); this module only turns the moves into the positions after them.

A move here is a *move key*, an ``int``: ``from index | to index << 5 | captured
mask << 10`` (indices 0-31). Capture routes that take the same pieces and end
on the same square lead to the same position, so they share one key;
:func:`to_rules_move` picks the first such route of
:meth:`~game.rules.Position.legal_moves` when a key has to become a real move.
"""

from __future__ import annotations

from typing import TypeAlias

from game.rules import Color, Move, Position
from game.rules import bitboard as bb

__all__ = ["ChildMove", "children", "move_key", "to_rules_move", "state_of", "position_key"]

#: One legal move as :func:`children` gives it: (move key, mover's pieces after it, other side's pieces
#: after it, kings after it, irreversible (a capture or a man move), number of pieces captured).
ChildMove: TypeAlias = tuple[int, int, int, int, bool, int]

_CROWN_BLACK = bb.ROW_BOTTOM
_CROWN_WHITE = bb.ROW_TOP
_jumpers = bb.jumpers
_capture_results = bb.capture_results
_quiet_moves = bb.quiet_moves


def state_of(position: Position) -> tuple[int, int, int, bool]:
    """``(own, opp, kings, black)`` of a :class:`~game.rules.Position` (own = the side to move)."""
    if position.turn is Color.BLACK:
        return position.black, position.white, position.kings, True
    return position.white, position.black, position.kings, False


def position_key(own: int, opp: int, kings: int, black: bool) -> int:
    """One integer that identifies a position (pieces, kings and side to move), for tables and repetitions."""
    return own | opp << 32 | kings << 64 | black << 96


def children(own: int, opp: int, kings: int, black: bool) -> tuple[list[ChildMove], bool]:
    """The legal moves as ``(moves, captures)``.

    ``moves`` is a list of ``(key, own', opp', kings', irreversible, taken)``:
    the move key, the mover's pieces and the other side's pieces after the move,
    the kings after it, whether the move resets the forty-move count (a capture
    or a man move) and the number of pieces captured. ``captures`` is True when
    the moves are captures (capture is compulsory, so then all of them are).
    Empty when the side to move has no legal move.
    """
    starts = _jumpers(own, opp, kings, black)
    out: list[ChildMove] = []
    append = out.append
    if starts:
        seen = set()
        for from_bit, to_bit, taken, crowned in _capture_results(own, opp, kings, black, starts):
            key = (from_bit.bit_length() - 1) | (to_bit.bit_length() - 1) << 5 | taken << 10
            if key in seen:
                continue
            seen.add(key)
            new_kings = kings & ~taken
            if new_kings & from_bit:
                new_kings = (new_kings & ~from_bit) | to_bit
            elif crowned:
                new_kings |= to_bit
            append((key, (own & ~from_bit) | to_bit, opp & ~taken, new_kings, True, taken.bit_count()))
        return out, True
    crown_row = _CROWN_BLACK if black else _CROWN_WHITE
    for start, to in _quiet_moves(own, opp, kings, black):
        from_bit, to_bit = 1 << start, 1 << to
        moved = from_bit | to_bit
        key = start | to << 5
        if kings & from_bit:
            append((key, own ^ moved, opp, kings ^ moved, False, 0))
        elif to_bit & crown_row:
            append((key, own ^ moved, opp, kings | to_bit, True, 0))
        else:
            append((key, own ^ moved, opp, kings, True, 0))
    return out, False


def move_key(move: Move) -> int:
    """The move key of a :class:`~game.rules.Move` (see the module docstring)."""
    taken = 0
    for square in move.captures:
        taken |= 1 << (square - 1)
    return (move.start - 1) | (move.end - 1) << 5 | taken << 10


def to_rules_move(position: Position, key: int) -> Move:
    """The first legal :class:`~game.rules.Move` of ``position`` with move key ``key``.

    Raises ValueError when no legal move has that key.
    """
    for move in position.legal_moves():
        if move_key(move) == key:
            return move
    raise ValueError(f"no legal move with key {key} in {position.fen()}")
