"""The compiled core's search: shots, legal lines, limits (time, depth, nodes), draw rules, weights, levels."""

from __future__ import annotations

import dataclasses
import random
import time

import pytest

from game.engine import LEVELS, WIN, choose_move, native
from game.engine import levels as worker
from game.engine.evaluate import WEIGHTS, evaluate
from game.engine.movegen import state_of
from game.engine.search import _Searcher
from game.rules import INITIAL_FEN, Position

from .budget import within_budget
from .positions import placed_positions, playout_positions
from .test_search import all_shots

MIDDLE = "B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14"
KINGS = "W:WK3,K12,K28,20:BK10,K19,K23,5"


def playable(positions):
    return [p for p in positions if p.legal_moves()]


@pytest.mark.parametrize(("fen", "solution"), list(all_shots()))
def test_core_finds_the_shot_and_announces_the_win(fen, solution):
    result = native.search(Position.from_fen(fen), depth=8)
    assert str(result.move) == solution
    assert result.mate is not None and 0 < result.mate <= 7
    assert result.score == WIN - result.mate
    assert str(result.pv[0]) == solution


def test_core_search_returns_legal_moves_and_lines():
    positions = playable(list(playout_positions(150, seed=21)) + list(placed_positions(150, seed=22)))[::3]
    for position in positions:
        result = native.search(position, time_ms=10)
        assert result.move in position.legal_moves()
        assert result.depth >= 1 and result.nodes >= 1
        replay = position
        for move in result.pv:
            replay = replay.play(move)  # IllegalMoveError for an illegal line
        assert result.pv[0] == result.move


def test_core_scores_root_moves_exactly_as_the_python_search():
    """Full-window scores to a fixed depth do not depend on move order or the table: they must agree."""
    positions = playable(list(playout_positions(300, seed=23)) + list(placed_positions(60, seed=24)))[::12]
    for position in positions:
        for depth in (1, 2, 3):
            scored, _nodes = native.score_moves(position, depth, endgames=False)
            searcher = _Searcher(None, [])
            expected = {}
            for move in position.legal_moves():
                after = position.play(move)
                a_own, a_opp, a_kings, a_black = state_of(after)
                expected[move] = -searcher.node(a_own, a_opp, a_kings, a_black, depth - 1, -WIN - 1, WIN + 1, 1, 0)
            got = dict(scored)
            # capture routes that reach the same position share one score; each is scored once
            assert set(got) <= set(expected) and got
            assert {m: expected[m] for m in got} == got, (position.fen(), depth)


@pytest.mark.parametrize("budget_ms", [20, 100, 300])
@pytest.mark.parametrize("fen", [INITIAL_FEN, MIDDLE, KINGS])
def test_core_respects_its_time_budget(fen, budget_ms):
    """The work (this thread's CPU time) stays within the budget plus a small margin, the wall time too with
    room for being scheduled out (see tests/engine/budget.py: a noisy machine gets three tries)."""
    native.search(Position.initial(), depth=1)  # loads the endgame database: not the budgeted work
    result = within_budget(lambda: native.search(Position.from_fen(fen), time_ms=budget_ms), budget_ms)
    assert result.move is not None and result.depth >= 1


@pytest.mark.parametrize("limit", [500, 20_000, 300_000])
def test_core_respects_its_node_budget(limit):
    result = native.search(Position.from_fen(MIDDLE), nodes=limit)
    assert limit // 4 <= result.nodes <= limit
    assert result.move in Position.from_fen(MIDDLE).legal_moves()


def test_core_stops_at_the_requested_depth_and_searches_deep():
    assert native.search(Position.initial(), depth=3).depth == 3
    assert native.search(Position.initial(), depth=14).depth == 14


@pytest.mark.parametrize("fen", ["B:W9,14:B5", "W:W:B1,2", "B:W21:B"])
def test_core_without_a_legal_move_returns_no_move(fen):
    result = native.search(Position.from_fen(fen), time_ms=50)
    assert result.move is None and result.pv == () and result.score == -WIN


def test_core_search_refuses_bad_limits():
    with pytest.raises(ValueError, match="time budget"):
        native.search(Position.initial())
    for bad in ({"time_ms": 0}, {"depth": 0}, {"nodes": 0}, {"time_ms": -5}):
        with pytest.raises(ValueError):
            native.search(Position.initial(), **bad)
    with pytest.raises(TypeError):
        native.search(INITIAL_FEN, depth=2)


def test_core_counts_the_forty_move_rule_and_repetitions():
    position = Position.from_fen("B:WK32:BK1,K5")
    assert native.search(position, depth=5).score > 0
    assert native.search(position, depth=5, no_progress=79).score == 0
    # Black's king on 24 can only step to a square it came from: every move repeats the game
    blocked = Position.from_fen("B:W28,K32:BK24")
    after = [blocked.play(m) for m in blocked.legal_moves()]
    result = native.search(blocked, depth=2, history=after, no_progress=len(after))
    assert result.move in blocked.legal_moves()
    assert result.score == 0


def test_core_evaluation_weights_are_settable():
    position = Position.from_fen("B:W30:BK1,2")  # Black: a king and a man against a man
    default = native.evaluate(position)
    assert default == evaluate(*state_of(position))
    assert native.default_weights() == WEIGHTS and WEIGHTS["man"] == 100  # the same defaults in C and Python
    assert native.evaluate(position, {"king": 235}) > default  # for this call only
    assert native.evaluate(position) == default
    try:
        native.set_weights({"king": 235, "man": 50})
        assert native.weights()["king"] == 235 and native.weights()["man"] == 50
        assert native.evaluate(position) == native.evaluate(position, {"king": 235, "man": 50})
        assert native.evaluate(position) != default
    finally:
        native.reset_weights()
    assert native.weights() == native.default_weights()
    assert native.evaluate(position) == default


def test_core_weights_change_what_the_search_prefers():
    # Black's man on 26 may crown; at the default weights a step of the other man scores better at
    # depth 1, with kings worth four men the search crowns.
    position = Position.from_fen("B:W5,6:B26,12")
    plain = native.search(position, depth=1)
    assert str(plain.move) == "12-16"
    crowning = native.search(position, depth=1, weights={"king": 400})
    assert crowning.move is not None and crowning.move.crowns
    assert crowning.score > plain.score + 200


@pytest.mark.parametrize("bad", [{"queen": 3}, {"man": 10**6}])
def test_unknown_or_out_of_range_weights_are_refused(bad):
    with pytest.raises(ValueError):
        native.set_weights(bad)
    with pytest.raises(ValueError):
        native.evaluate(Position.initial(), bad)
    assert native.weights() == native.default_weights()


@pytest.mark.parametrize("bad", [{"man": "100"}, {"man": 1.5}, {"man": True}])
def test_weights_that_are_no_ints_are_refused(bad):
    with pytest.raises(TypeError):
        native.set_weights(bad)
    assert native.weights() == native.default_weights()


def test_a_move_the_rules_do_not_hold_is_refused():
    with pytest.raises(native.CoreDisagrees):
        native._to_move(Position.initial(), ((9, 18), (), False))


@pytest.mark.parametrize("engine", ["core", "python"])
@pytest.mark.parametrize("chosen", LEVELS, ids=lambda lv: f"level-{lv.number}")
def test_every_level_plays_a_legal_move_with_either_engine(chosen, engine):
    quick = dataclasses.replace(chosen, time_ms=min(chosen.time_ms, 40))
    position = Position.from_fen(MIDDLE)
    rng = random.Random(3)
    for _ in range(3):
        choice = choose_move(position, quick, rng=rng, engine=engine)
        assert position.parse_move(choice["move"]) in position.legal_moves()


def test_levels_use_the_core_when_it_is_built():
    assert worker.engine_in_use() == "core"
    assert worker.engine_in_use("python") == "python"
    with pytest.raises(ValueError, match="unknown engine"):
        worker.engine_in_use("gpu")
    with pytest.raises(ValueError, match="unknown engine"):
        worker.play(INITIAL_FEN, 3, engine="gpu")
    # the core reaches depths the Python search cannot in the same time
    core = worker.analyse(MIDDLE, 200)
    python = worker.analyse(MIDDLE, 200, engine="python")
    assert core["depth"] >= python["depth"] + 2
    assert core["nodes"] > 5 * python["nodes"]


def test_worker_functions_with_the_core_take_and_return_plain_data():
    played = worker.play(INITIAL_FEN, 5, [], 0, seed=5, engine="core")
    assert played["move"] in [str(m) for m in Position.initial().legal_moves()]
    analysed = worker.analyse("B:W18,27:B14,K22", 50, engine="core")
    assert analysed["move"] == "14x23x32" and analysed["mate"] == 1
    assert worker.draw_score("W:WK18,K19,K26:B1", 50, engine="core") > 0


def test_searches_in_threads_at_once_give_the_results_they_give_alone():
    """Each thread has its own table; a search's result depends only on its position and limits."""
    from concurrent.futures import ThreadPoolExecutor

    fens = [INITIAL_FEN, MIDDLE, KINGS, "B:W14,18,19,25,27,28,29,30,32:B1,3,4,5,6,7,8,10,12,16,K31"] * 2

    def run(fen):
        result = native.search(Position.from_fen(fen), depth=9)
        return str(result.move), result.score, result.nodes, [str(m) for m in result.pv]

    alone = [run(fen) for fen in fens]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(run, fens))
    assert together == alone
    assert alone[0] == alone[4]  # the same search again in the same thread: the old table is not reused


def test_the_clock_stops_a_search_in_the_middle_of_its_work():
    """score_moves has its deadline from the first node on: a 5 ms budget cannot score every move to depth 14,
    which takes seconds."""
    position = Position.from_fen(MIDDLE)
    started = time.thread_time()
    scored, _nodes = native.score_moves(position, 14, time_ms=5, endgames=False)
    assert (time.thread_time() - started) * 1000 < 300
    assert len(scored) < len(position.legal_moves())
