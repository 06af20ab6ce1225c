"""Seeded test positions for the engine's differential tests: random playouts and random placements."""

from __future__ import annotations

import random
from collections.abc import Iterator

from game.rules import Color, Position
from game.rules import bitboard as bb


def playout_positions(count: int, seed: int) -> Iterator[Position]:
    """``count`` positions met along random games from the start (every position of each game, the last too)."""
    rng = random.Random(seed)
    made = 0
    while made < count:
        position = Position.initial()
        for _ in range(rng.randint(20, 160)):
            yield position
            made += 1
            if made >= count:
                return
            moves = position.legal_moves()
            if not moves:
                break
            position = position.play(rng.choice(moves))


def placed_positions(count: int, seed: int) -> Iterator[Position]:
    """``count`` random legal placements: 1-12 pieces a side, some of them kings, either side to move.

    Men never stand on their own crowning row (the rules refuse such a position); a third of the
    positions are crowded (many pieces, many captures), a third sparse with mostly kings (long
    king multi-jumps with several routes).
    """
    rng = random.Random(seed)
    for index in range(count):
        style = index % 3
        while True:
            squares = list(range(32))
            rng.shuffle(squares)
            if style == 0:
                n_black, n_white, king_share = rng.randint(6, 12), rng.randint(6, 12), 0.15
            elif style == 1:
                n_black, n_white, king_share = rng.randint(1, 5), rng.randint(1, 8), 0.7
            else:
                n_black, n_white, king_share = rng.randint(1, 12), rng.randint(1, 12), 0.35
            black = white = kings = 0
            for square in squares[:n_black]:
                black |= 1 << square
            for square in squares[n_black:n_black + n_white]:
                white |= 1 << square
            for square in squares[:n_black + n_white]:
                if rng.random() < king_share:
                    kings |= 1 << square
            # a man on its crowning row becomes a king (the rules allow no man there)
            kings |= black & bb.ROW_BOTTOM
            kings |= white & bb.ROW_TOP
            turn = Color.BLACK if rng.random() < 0.5 else Color.WHITE
            yield Position(black, white, kings, turn)
            break
