"""The "How to play" page: its diagrams and the boards drawn from them.

Each diagram is a position (a FEN) and the moves the page says are legal there: exactly the legal
moves of :mod:`game.rules` (``tests/web/test_how_to_play.py`` checks every one).  The arrows show
some of those moves.  The prose around the diagrams, their captions included, is in
``templates/how_to_play.html``; here are only the positions and the drawing, an SVG board per
diagram built on the server, with White at the bottom as the square numbers are counted
(docs/rules.md, "Board and numbering").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from game.rules import Color, Move, Position


@dataclass(frozen=True)
class Diagram:
    """One diagram of the page: ``key`` names it in the template (``diagrams.<key>``)."""

    key: str
    fen: str
    #: Every legal move of the position, in full notation, as the page lists them.
    legal: frozenset[str]
    #: The moves drawn as arrows (some of ``legal``).
    arrows: tuple[str, ...] = ()
    #: Square numbers on this board even when the reader turned them off.
    numbers: bool = False


DIAGRAMS: tuple[Diagram, ...] = (
    Diagram("start", "B:W21-32:B1-12",
            frozenset({"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}),
            arrows=("11-15",)),
    Diagram("pieces", "B:W32:B14,K23",
            frozenset({"14-17", "14-18", "23-18", "23-19", "23-26", "23-27"}),
            arrows=("14-17", "14-18", "23-18", "23-19", "23-26", "23-27")),
    Diagram("capture", "B:W18,30:B11,14", frozenset({"14x23"}), arrows=("14x23",)),
    Diagram("choice", "B:W14,15,22,32:B3,10", frozenset({"10x17x26", "10x19"}),
            arrows=("10x17x26", "10x19")),
    Diagram("multi_jump", "B:W14,23,32:B9", frozenset({"9x18x27"}), arrows=("9x18x27",)),
    Diagram("crowning", "B:W5,26,27:B3,22", frozenset({"22x31"}), arrows=("22x31",)),
    Diagram("blocked", "W:W5,13:B1,6,9", frozenset()),
    Diagram("draw", "B:WK27:BK10", frozenset({"10-6", "10-7", "10-14", "10-15"})),
    Diagram("notation", "W:W27,32:B3,15,23", frozenset({"27x18x11"}), arrows=("27x18x11",),
            numbers=True),
)


#: How far from the centre of its first square an arrow starts (a square is 1).
ARROW_GAP = 0.3


def square_xy(square: int) -> tuple[int, int]:
    """Column and row (0 to 7, from the top left, White at the bottom) of a dark square."""
    row, i = divmod(square - 1, 4)
    return (2 * i + 1 if row % 2 == 0 else 2 * i), row


def move_order(text: str) -> tuple[int, ...]:
    """Sort key of a move in full notation: its squares as numbers (9-14 before 10-14)."""
    return tuple(int(n) for n in re.split(r"[-x]", text))


def _arrow_points(path: tuple[int, ...]) -> str:
    """The polyline of a move's arrow through the centres of its squares, its first point moved
    toward the second so that the piece that moves stays visible."""
    points = [(x + 0.5, y + 0.5) for x, y in map(square_xy, path)]
    (x0, y0), (x1, y1) = points[0], points[1]
    length = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
    points[0] = (x0 + (x1 - x0) * ARROW_GAP / length, y0 + (y1 - y0) * ARROW_GAP / length)
    return " ".join(f"{x:.3g},{y:.3g}" for x, y in points)


def _description(position: Position) -> str:
    """The pieces in words, for readers who do not see the board."""
    board = position.board()
    groups = (("b", _("Black men: %(squares)s")), ("B", _("Black kings: %(squares)s")),
              ("w", _("White men: %(squares)s")), ("W", _("White kings: %(squares)s")))
    parts = []
    for letter, text in groups:
        squares = sorted(s for s, piece in board.items() if piece == letter)
        if squares:
            parts.append(text % {"squares": ", ".join(map(str, squares))})
    return "; ".join(parts) + "."


def board_of(diagram: Diagram) -> dict:
    """What the board template draws for ``diagram``: squares, pieces, arrows, the moves listed."""
    position = Position.from_fen(diagram.fen)
    board = position.board()
    moves: dict[str, Move] = {str(m): m for m in position.legal_moves()}
    squares = []
    for row in range(8):
        for col in range(8):
            dark = (row + col) % 2 == 1
            number = row * 4 + col // 2 + 1 if dark else None
            piece = board.get(number) if number else None
            squares.append({
                "x": col, "y": row, "dark": dark, "number": number,
                "color": None if piece is None else ("black" if piece.lower() == "b" else "white"),
                "king": piece is not None and piece.isupper(),
            })
    arrows = []
    for text in diagram.arrows:
        move = moves[text]  # KeyError: an arrow the rules do not allow (the tests catch it)
        arrows.append({
            "move": text,
            "points": _arrow_points(move.path),
            "captures": [dict(zip(("x", "y"), square_xy(s), strict=True)) for s in move.captures],
        })
    return {
        "key": diagram.key,
        "fen": position.fen(),
        "turn": "B" if position.turn is Color.BLACK else "W",
        "legal": sorted(diagram.legal, key=move_order),
        "squares": squares,
        "arrows": arrows,
        "numbers": diagram.numbers,
        "description": _description(position),
    }


@require_safe
def how_to_play(request):
    """The rules for players, with a board for every rule."""
    return render(request, "how_to_play.html", {"diagrams": {d.key: board_of(d) for d in DIAGRAMS}})
