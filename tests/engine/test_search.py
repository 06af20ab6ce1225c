"""The engine: shots found and proved, legal answers, time budgets, the end of the game, the draw rules."""

from __future__ import annotations

import random

import pytest

from game.engine import WIN, evaluate, search
from game.engine.movegen import children, state_of
from game.rules import Position

from .budget import within_budget

#: Shots: White gives material (the only move that wins) and a multi-capture follows.
#: Found by exhaustive search over random positions (no win within 3 plies, a win within 7).
SHOTS = [
    ("W:WK3,6,K26:B1,4,19,27", "26-31"),           # 1x10, then 31x24x15x6
    ("W:W18,K25,30,32:B10,K11,17,K19", "25-22"),   # 17x26, then 30x23x16x7
    ("W:WK12,20,24,32:B4,10,11,18", "20-16"),      # 11x20x27, then 32x23x14x7
    ("W:WK3,8,10,K17:B1,K6,K7,K23", "17-14"),      # 6x15, then 3x10x19x26
    ("W:W6,23,25:B1,3,17", "25-21"),               # 1x10, then 21x14x7
    ("W:W27,30,32:B2,K15,22", "30-26"),            # 22x31, 32-28 31x24, then 28x19x10
]


def mirrored(position: Position) -> Position:
    """The same position seen from the other side: square n becomes 33 - n, colours swapped."""
    swap = {"b": "w", "B": "W", "w": "b", "W": "B"}
    board = {33 - square: swap[piece] for square, piece in position.board().items()}
    return Position.from_board(board, turn=position.turn.opponent)


def mirrored_move(move: str) -> str:
    separator = "x" if "x" in move else "-"
    return separator.join(str(33 - int(square)) for square in move.split(separator))


def wins_within(position: Position, plies: int, cache: dict) -> bool:
    """True when the side to move can force a win within ``plies`` plies, by visiting every line."""
    key = (position, plies)
    if key not in cache:
        cache[key] = plies >= 1 and any(loses_within(position.play(m), plies - 1, cache)
                                        for m in position.legal_moves())
    return cache[key]


def loses_within(position: Position, plies: int, cache: dict) -> bool:
    """True when the side to move loses within ``plies`` plies whatever it plays."""
    key = (position, -plies - 1)
    if key not in cache:
        moves = position.legal_moves()
        cache[key] = not moves or (plies >= 2 and all(wins_within(position.play(m), plies - 1, cache)
                                                      for m in moves))
    return cache[key]


def all_shots():
    for fen, move in SHOTS:
        yield fen, move
        yield mirrored(Position.from_fen(fen)).fen(), mirrored_move(move)


@pytest.mark.parametrize(("fen", "solution"), list(all_shots()))
def test_shot_solution_forces_a_win_by_exhaustive_search(fen, solution):
    position = Position.from_fen(fen)
    assert not position.is_capture_required()
    cache = {}
    assert not wins_within(position, 3, cache)
    winning = [str(m) for m in position.legal_moves() if loses_within(position.play(m), 6, cache)]
    assert winning == [solution]
    reply = position.play(position.parse_move(solution))
    assert reply.is_capture_required()  # the give-away: the opponent must take


@pytest.mark.parametrize(("fen", "solution"), list(all_shots()))
def test_search_finds_the_shot_and_announces_the_win(fen, solution):
    result = search(Position.from_fen(fen), depth=8)
    assert str(result.move) == solution
    assert result.mate is not None and 0 < result.mate <= 7
    assert result.score == WIN - result.mate
    assert [str(m) for m in result.pv][:1] == [solution]


def random_positions(count: int, seed: int) -> list[Position]:
    """Positions reached by random legal moves from the start (10 to 60 plies), with a move to play."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        position = Position.initial()
        for _ in range(rng.randint(10, 60)):
            moves = position.legal_moves()
            if not moves:
                break
            position = position.play(rng.choice(moves))
        if position.legal_moves():
            found.append(position)
    return found


@pytest.mark.parametrize("position", random_positions(30, seed=11), ids=lambda p: p.fen())
def test_search_always_returns_a_legal_move_and_line(position):
    result = search(position, time_ms=15)
    assert result.move in position.legal_moves()
    assert result.depth >= 1
    replay = position
    for move in result.pv:
        replay = replay.play(move)  # raises IllegalMoveError for an illegal line
    assert result.pv[0] == result.move


@pytest.mark.parametrize("budget_ms", [30, 150, 400])
@pytest.mark.parametrize("fen", [
    "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12",
    "B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14",
    "W:WK3,K12,K28,20:BK10,K19,K23,5",
])
def test_search_respects_its_time_budget(fen, budget_ms):
    """The work done stays within the budget plus a small margin; the wall time too, with room for being
    scheduled out (see tests/engine/budget.py: a noisy machine gets three tries). A first search beforehand
    loads the endgame database, which is not the budgeted search's work."""
    search(Position.initial(), depth=1)
    result = within_budget(lambda: search(Position.from_fen(fen), time_ms=budget_ms), budget_ms)
    assert result.elapsed_ms <= budget_ms * 1.5 + 100
    assert result.move is not None


def test_search_stops_at_the_requested_depth():
    result = search(Position.initial(), depth=3)
    assert result.depth == 3


@pytest.mark.parametrize("fen", ["B:W9,14:B5", "W:W:B1,2", "B:W21:B"])
def test_search_without_a_legal_move_returns_no_move(fen):
    result = search(Position.from_fen(fen), time_ms=50)
    assert result.move is None and result.pv == () and result.score == -WIN


def test_search_without_budget_or_depth_raises():
    with pytest.raises(ValueError, match="time budget"):
        search(Position.initial())
    with pytest.raises(ValueError):
        search(Position.initial(), time_ms=0)
    with pytest.raises(ValueError):
        search(Position.initial(), depth=0)
    with pytest.raises(TypeError):
        search(Position.initial().fen(), depth=2)


def test_search_counts_the_forty_move_rule():
    # Two kings against one: winning, unless the forty-move rule ends the game first.
    position = Position.from_fen("B:WK32:BK1,K5")
    assert search(position, depth=5).score > 0
    assert search(position, depth=5, no_progress=79).score == 0


def test_search_scores_a_repetition_as_a_draw():
    # Black is a king up, but the only way on repeats a position of the game.
    before = Position.from_fen("W:WK32:BK5,K1")
    position = Position.from_fen("B:WK32:BK1,K5")
    assert search(position, depth=3, history=[before]).score > 0
    blocked = Position.from_fen("B:W28,K32:BK24")  # Black king on 24 must stay or come back
    after = [blocked.play(m) for m in blocked.legal_moves()]
    result = search(blocked, depth=2, history=after, no_progress=len(after))
    assert result.move in blocked.legal_moves()


@pytest.mark.parametrize("position", random_positions(40, seed=5), ids=lambda p: p.fen())
def test_evaluate_is_the_same_from_either_side(position):
    assert evaluate(*state_of(position)) == evaluate(*state_of(mirrored(position)))


@pytest.mark.parametrize("position", random_positions(40, seed=9), ids=lambda p: p.fen())
def test_move_generation_matches_the_rules(position):
    moves, captures = children(*state_of(position))
    after = {(p.black, p.white, p.kings) for p in (position.play(m) for m in position.legal_moves())}
    own_is_black = position.turn.value == "B"
    mine = {((o if own_is_black else x), (x if own_is_black else o), k) for _, o, x, k, _, _ in moves}
    assert mine == after
    assert captures == position.is_capture_required()
