"""A small board drawn on the server as SVG (the home page's puzzle of the day): squares and pieces
of a position, White at the bottom as the square numbers are counted (docs/rules.md)."""

from __future__ import annotations

from typing import Any

from game.rules import Color, Position


def mini_board(fen: str, flip: bool = False) -> dict[str, Any]:
    """``{"squares": [{"x", "y", "cx", "cy" (the centre), "dark", "color": "black"|"white"|None,
    "king"}], "turn": "B"|"W"}`` for ``fen``, turned around when ``flip`` (Black at the bottom).
    Raises the rules' InvalidFenError."""
    position = Position.from_fen(fen)
    board = position.board()
    squares = []
    for row in range(8):
        for col in range(8):
            dark = (row + col) % 2 == 1
            number = row * 4 + col // 2 + 1 if dark else None
            piece = board.get(number) if number else None
            x, y = (7 - col, 7 - row) if flip else (col, row)
            squares.append({"x": x, "y": y, "cx": x + 0.5, "cy": y + 0.5, "dark": dark,
                            "color": None if piece is None else ("black" if piece.lower() == "b" else "white"),
                            "king": piece is not None and piece.isupper()})
    return {"squares": squares, "turn": "B" if position.turn is Color.BLACK else "W"}
