"""A puzzle's themes, found by rules on its position and solution (pure: the rules only).

The rules, applied to the position ``fen`` (solver to move) and the ``line`` (solver's move first,
then replies and moves in turn):

- ``shot``: the solver's first move is not a capture and the opponent must capture in reply: a
  piece given to win more (the checkers "shot").
- ``stroke``: a solver's capture takes two pieces or more in one move (a multi-jump).
- ``king_row``: a solver's man is crowned during the solution.
- ``capture_choice``: the first move is a capture and the solver could capture otherwise too.
- ``endgame``: eight pieces or fewer on the board.
- ``first_position``: two kings against a king and a man, the material of First Position.
- ``long``: three solver moves or more.
- ``database``: the result is the endgame database's (a forced win, not material).

>>> sorted(themes_of("W:W27,32:B3,15,23", ["27x18x11"], "material"))
['endgame', 'stroke']
"""

from __future__ import annotations

from game.rules import Color, Position

#: Every theme, in the order the puzzle page lists them.
THEMES = ("shot", "stroke", "king_row", "capture_choice", "endgame", "first_position", "long", "database")


def _material(position: Position, side: Color) -> tuple[int, int]:
    """(men, kings) of ``side``."""
    own = position.pieces(side)
    kings = own & position.kings
    return bin(own & ~kings).count("1"), bin(kings).count("1")


def themes_of(fen: str, line: list[str], gain: str) -> list[str]:
    """The themes of the puzzle ``fen`` + ``line`` (full notation) whose solution wins ``gain``
    (``"material"`` or ``"win"``), in :data:`THEMES` order. Raises the rules' errors for a FEN or
    a move that is not legal."""
    position = Position.from_fen(fen)
    solver = position.turn
    found: set[str] = set()
    pieces = bin(position.black | position.white).count("1")
    if pieces <= 8:
        found.add("endgame")
    if sorted([_material(position, solver), _material(position, solver.opponent)]) == [(0, 2), (1, 1)]:
        found.add("first_position")
    if gain == "win":
        found.add("database")
    first_captures = [m for m in position.legal_moves() if m.is_capture]
    current = position
    for index, text in enumerate(line):
        move = current.parse_move(text)
        mine = index % 2 == 0
        if mine and len(move.captures) >= 2:
            found.add("stroke")
        if mine and move.crowns:
            found.add("king_row")
        if index == 0 and move.is_capture and len(first_captures) > 1:
            found.add("capture_choice")
        if index == 1 and move.is_capture and not position.parse_move(line[0]).is_capture:
            found.add("shot")
        current = current.play(move)
    if (len(line) + 1) // 2 >= 3:
        found.add("long")
    return [theme for theme in THEMES if theme in found]
