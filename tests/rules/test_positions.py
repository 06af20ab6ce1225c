"""Legal moves and perft against the checked positions file (tests/data/positions.json)."""

import pytest

from game.rules import Color, Position, divide, perft

from .helpers import POSITIONS, move_strings

CASES = POSITIONS["cases"]
PERFT = {int(depth): count for depth, count in POSITIONS["perft_initial"].items()}


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_legal_moves_match_positions_file(case):
    position = Position.from_fen(case["fen"])
    assert move_strings(position) == set(case["legal"]), case["tests"]


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_every_listed_move_parses_and_plays(case):
    position = Position.from_fen(case["fen"])
    for text in case["legal"]:
        move = position.parse_move(text)
        assert str(move) == text
        after = position.play(move)
        assert after.turn is position.turn.opponent


@pytest.mark.parametrize("depth", range(9))
def test_perft_from_start_matches_positions_file(depth):
    expected = 1 if depth == 0 else PERFT[depth]
    assert perft(Position.initial(), depth) == expected


def test_perft_depth_9_matches_positions_file():
    assert perft(Position.initial(), 9) == PERFT[9] == 3963680


def test_divide_sums_to_perft():
    position = Position.initial()
    counts = divide(position, 4)
    assert [str(move) for move, _ in counts] == [str(m) for m in position.legal_moves()]
    assert sum(count for _, count in counts) == PERFT[4]


def test_perft_counts_capture_orders_separately():
    # The king on 7 takes the four men around 15 clockwise or anticlockwise:
    # the same pieces in a different order, two moves.
    position = Position.from_fen("B:W10,11,18,19:BK7")
    assert move_strings(position) == {"7x14x23x16x7", "7x16x23x14x7"}
    assert perft(position, 1) == 2


def test_no_legal_move_gives_empty_list():
    position = Position.from_fen("B:WK23,27:B28,K32")
    assert position.legal_moves() == []
    assert not position.has_legal_move()
    assert perft(position, 3) == 0
    assert position.turn is Color.BLACK
