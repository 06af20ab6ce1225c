"""The compiled core's moves against the rules (game/rules is the single truth for legality).

Full move lists are compared: every route's path (start and every landing square), its captured
squares in jump order, and whether it crowns. The quick part runs with every test run; the heavy
part (``-m heavy``, a step of its own in .ci/run) walks the whole perft tree to depth 8 and
compares over 100,000 seeded random positions.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from game.engine import native
from game.engine.evaluate import evaluate
from game.engine.movegen import state_of
from game.rules import Position, perft

from .positions import placed_positions, playout_positions

ROOT = Path(__file__).resolve().parents[2]
KNOWN_PERFT = {int(depth): count for depth, count in
               json.loads((ROOT / "tests/data/positions.json").read_text())["perft_initial"].items()}


def core_moves(position: Position) -> list[tuple[tuple[int, ...], tuple[int, ...], bool]]:
    return sorted(native.legal_moves(position))


def rules_moves(position: Position) -> list[tuple[tuple[int, ...], tuple[int, ...], bool]]:
    return sorted((move.path, move.captures, move.crowns) for move in position.legal_moves())


def assert_same_moves(positions) -> int:
    """Compare every position's move lists; return how many positions were compared."""
    compared = 0
    for position in positions:
        moves = rules_moves(position)
        assert core_moves(position) == moves, position.fen()
        # the search keeps one move per resulting position, room for 96 (core.c, MAX_MOVES)
        assert len({(path[0], path[-1], frozenset(captured)) for path, captured, _ in moves}) <= 96
        compared += 1
    return compared


def tree(depth: int) -> list[Position]:
    """Every distinct position of the game tree from the start to ``depth`` plies."""
    level = {Position.initial()}
    seen = set(level)
    for _ in range(depth):
        level = {position.play(move) for position in level for move in position.legal_moves()} - seen
        seen |= level
    return list(seen)


def test_the_core_is_built():
    assert native.available(), "the engine's compiled core is missing: run `make install`"


@pytest.mark.parametrize("depth", range(1, 10))
def test_core_perft_from_the_start_matches_the_known_counts(depth):
    assert native.perft(Position.initial(), depth) == KNOWN_PERFT[depth]


@pytest.mark.parametrize("depth", range(1, 6))
def test_core_perft_matches_the_rules_perft(depth):
    for fen in ["B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14",
                "B:W14,18,19,25,27,28,29,30,32:B1,3,4,5,6,7,8,10,12,16,K31",
                "W:WK3,K12,K28,20:BK10,K19,K23,5"]:
        position = Position.from_fen(fen)
        assert native.perft(position, depth) == perft(position, depth), fen


def test_core_moves_match_the_rules_over_the_tree_to_depth_6():
    assert assert_same_moves(tree(6)) == 12_916  # distinct positions within 6 plies of the start


def test_core_moves_match_the_rules_over_random_positions():
    positions = itertools.chain(playout_positions(3_000, seed=1), placed_positions(3_000, seed=2))
    assert assert_same_moves(positions) == 6_000


@pytest.mark.parametrize("fen", [
    "B:W10,11,18,19:BK15",   # a king's routes over the same pieces in another order are separate moves
    "B:W23,27,28:B19",       # a man reaching the crowning row stops there
    "W:W18:B14,K22,23",      # men capture forward only; kings both ways
    "B:W6,7,14,15,22,23:BK1",  # long king multi-jumps
])
def test_core_moves_on_the_rules_cases(fen):
    position = Position.from_fen(fen)
    assert core_moves(position) == rules_moves(position) != []


def test_core_evaluation_equals_the_python_evaluation():
    positions = itertools.chain(playout_positions(4_000, seed=3), placed_positions(4_000, seed=4))
    for position in positions:
        assert native.evaluate(position) == evaluate(*state_of(position)), position.fen()


@pytest.mark.heavy
def test_heavy_core_moves_match_the_rules_over_the_tree_to_depth_8():
    """Every distinct position within 8 plies of the start: their moves are perft 9's last ply."""
    assert assert_same_moves(tree(8)) == 126_377


@pytest.mark.heavy
def test_heavy_core_moves_match_the_rules_over_100000_random_positions():
    positions = itertools.chain(playout_positions(50_000, seed=101), placed_positions(50_000, seed=102))
    assert assert_same_moves(positions) == 100_000
