"""The learned evaluation: the shipped network file, its integer inference against numpy, its searches.

The reference here is written from the file format (``game/engine/native.py``, ``load_network``),
independently of the core: the network is an integer network, so every code path of the core (AVX2,
SSSE3, plain C, as the machine has them) must give exactly its scores.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest

from game.engine import native
from game.engine.levels import CONFIGURATIONS, choose_move, level
from game.engine.search import WIN
from game.rules import Color, Move, Position

from .budget import within_budget
from .positions import placed_positions, playout_positions

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled core is not built")

SHIPPED = Path(native.__file__).resolve().parent / "network.bin"
RECORD = SHIPPED.with_suffix(".json")


def read_network(path: Path) -> dict:
    """The arrays of a network file, as numpy arrays."""
    data = path.read_bytes()
    assert data[:8] == b"CKNET1\n\0"
    h1, h2, shift = (int(v) for v in np.frombuffer(data, "<i4", 3, 8))
    at = 20
    arrays = {}
    for name, dtype, count in (("w1", "<i2", 128 * h1), ("b1", "<i2", h1), ("w2", "i1", h2 * h1),
                               ("b2", "<i4", h2), ("w3", "<i4", h2), ("b3", "<i4", 1)):
        arrays[name] = np.frombuffer(data, dtype, count, at).astype(np.int64)
        at += np.dtype(dtype).itemsize * count
    assert at == len(data)
    arrays["w1"] = arrays["w1"].reshape(128, h1)
    arrays["w2"] = arrays["w2"].reshape(h2, h1)
    return {**arrays, "shift": shift}


def inputs(positions: list[Position]) -> np.ndarray:
    """(n, 128) of 0/1: own men, own kings, other men, other kings, the board turned for White to move."""
    rows = np.zeros((len(positions), 128), np.int64)
    for r, p in enumerate(positions):
        own, opp = (p.black, p.white) if p.turn is Color.BLACK else (p.white, p.black)
        for square in range(32):
            seen = square if p.turn is Color.BLACK else 31 - square
            bit = 1 << square
            if own & bit:
                rows[r, seen + (32 if p.kings & bit else 0)] = 1
            elif opp & bit:
                rows[r, seen + (96 if p.kings & bit else 64)] = 1
    return rows


def reference(net: dict, x: np.ndarray) -> np.ndarray:
    """The integer network on inputs ``x``, clipped to the core's ±4000."""
    a1 = np.clip(net["b1"] + x @ net["w1"], 0, 127)
    a2 = np.clip((net["b2"] + a1 @ net["w2"].T) // 64, 0, 127)
    out = (net["b3"][0] + a2 @ net["w3"]) // (1 << net["shift"])
    return np.clip(out, -4000, 4000)


@pytest.fixture(scope="module")
def shipped():
    native.load_network(SHIPPED)
    return read_network(SHIPPED)


def simd_paths() -> list[int]:
    return [0, 1, 2][: {"c": 1, "ssse3": 2, "avx2": 3}[native.network_simd()]]


def test_shipped_file_loads_and_reproduces_its_recorded_outputs(shipped):
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    assert native.network_shape() == tuple(record["shape"][1:3])
    assert SHIPPED.stat().st_size == record["bytes"] < 4_000_000
    for fen, score in record["outputs"]:
        position = Position.from_fen(fen)
        for simd in simd_paths():
            assert native.network_evaluate(position, simd=simd) == score, (fen, simd)
        assert native.evaluate(position, network=True) == score


def test_inference_equals_numpy_on_10000_positions(shipped):
    positions = list(playout_positions(5000, seed=11)) + list(placed_positions(5000, seed=12))
    expected = reference(shipped, inputs(positions))
    for simd in simd_paths():
        got = np.array([native.network_evaluate(p, simd=simd) for p in positions])
        assert np.array_equal(got, expected), (simd, int(np.sum(got != expected)))


def walk(rng: random.Random, root: Position, steps: int) -> list[tuple[int, Position, bool, Move | None]]:
    """A path as a search walks it: each step a move made from the deepest position or, one time in three,
    from a random ancestor (the moves below it undone); some steps evaluated. (ply, position, evaluated,
    the move that led there)."""
    path = [root]
    trace: list[tuple[int, Position, bool, Move | None]] = [(0, root, rng.random() < 0.3, None)]
    for _ in range(steps):
        ply = len(path) - 1 if rng.random() < 0.67 else rng.randrange(len(path))
        moves = path[ply].legal_moves()
        while not moves:  # an end: play on from an earlier ply
            ply = rng.randrange(ply) if ply else 0
            moves = path[ply].legal_moves()
            if not moves and ply == 0:
                return trace
        move = rng.choice(moves)
        del path[ply + 1:]
        path.append(path[ply].play(move))
        trace.append((ply + 1, path[-1], rng.random() < 0.3, move))
    return trace


def test_the_searchs_incremental_first_layer_equals_the_sum_from_scratch(shipped):
    rng = random.Random(2026)
    roots = list(placed_positions(40, seed=21)) + list(playout_positions(400, seed=22))[::10]
    traces = [walk(rng, root, 150) for root in roots]
    steps = [step for trace in traces for step in trace]
    evaluated = [p for trace in traces for _, p, wanted, _ in trace if wanted]
    x = inputs(evaluated)
    sums = shipped["b1"] + x @ shipped["w1"]
    scores = reference(shipped, x)
    for simd in simd_paths():
        got = [found for trace in traces
               for found in native.network_trace([(ply, p, wanted) for ply, p, wanted, _ in trace], simd=simd)
               if found is not None]
        assert len(got) == len(evaluated)
        assert np.array_equal(np.array([sums for _, sums in got]), sums), simd
        assert np.array_equal(np.array([score for score, _ in got]), scores), simd
    # the walks went through what changes more than two features, made and undone
    moves = [move for _, _, _, move in steps if move is not None]
    assert sum(len(move.captures) >= 2 for move in moves) > 300
    assert sum(move.crowns for move in moves) > 350
    assert sum(move.crowns and len(move.captures) >= 2 for move in moves) > 40
    undone = sum(b[0] <= a[0] for trace in traces for a, b in itertools.pairwise(trace))
    assert undone > 2000
    assert max(ply for ply, *_ in steps) > 20
    assert {p.turn for p in evaluated} == {Color.BLACK, Color.WHITE}


def quiescence(position: Position, ply: int) -> int:
    """The search's quiescence in plain Python on the network's from-scratch scores (no pruning)."""
    moves = position.legal_moves()
    if not moves:
        return ply - WIN
    if not moves[0].is_capture:
        return native.network_evaluate(position)
    return max(-quiescence(position.play(move), ply + 1) for move in moves)


def test_searches_evaluate_the_network_as_from_scratch(shipped):
    # depth 1: each root move's score is its position's quiescence, the captures that follow played out
    positions = [p for p in list(placed_positions(150, seed=31)) + list(playout_positions(300, seed=32))[::6]
                 if p.legal_moves()]
    chains = 0
    for p in positions:
        scored, _ = native.score_moves(p, 1, endgames=False, network=True)
        assert len(scored) == len({(m.path[0], m.path[-1], frozenset(m.captures)) for m in p.legal_moves()})
        for move, score in scored:
            after = p.play(move)
            chains += bool(after.legal_moves()) and after.legal_moves()[0].is_capture
            assert score == -quiescence(after, 1), (p.fen(), str(move))
    assert chains > 50


def test_a_trace_out_of_place_is_refused(shipped):
    start = Position.initial()
    child = start.play(start.legal_moves()[0])
    with pytest.raises(ValueError, match="ply"):
        native.network_trace([(1, start, True)])
    with pytest.raises(ValueError, match="ply"):
        native.network_trace([(0, start, False), (2, child, True)])
    assert native.network_trace([(0, start, False), (1, child, True), (1, start, False)])[1] == (
        native.network_evaluate(child), tuple(int(v) for v in shipped["b1"] + inputs([child])[0] @ shipped["w1"]))


def test_every_path_equals_numpy_for_a_shape_of_odd_second_layer(tmp_path):
    # 64 then 13 units: the vector paths' blocks of second-layer units (8 and 4) and the units left over
    rng = np.random.default_rng(5)
    h1, h2, shift = 64, 13, 10
    parts = [np.array([h1, h2, shift], "<i4"), rng.integers(-300, 300, (128, h1)).astype("<i2"),
             rng.integers(-300, 300, h1).astype("<i2"), rng.integers(-128, 128, (h2, h1)).astype("i1"),
             rng.integers(-60_000, 60_000, h2).astype("<i4"), rng.integers(-400, 400, h2).astype("<i4"),
             np.array([12_345], "<i4")]
    path = tmp_path / "odd.bin"
    path.write_bytes(b"CKNET1\n\0" + b"".join(part.tobytes() for part in parts))
    try:
        assert native.load_network(path) == (h1, h2)
        net = read_network(path)
        positions = list(placed_positions(1500, seed=41))
        expected = reference(net, inputs(positions))
        assert len(set(expected.tolist())) > 100
        for simd in simd_paths():
            got = np.array([native.network_evaluate(p, simd=simd) for p in positions])
            assert np.array_equal(got, expected), (simd, int(np.sum(got != expected)))
    finally:
        native.load_network(SHIPPED)


def test_score_is_the_same_for_the_colour_mirrored_position(shipped):
    for p in placed_positions(300, seed=5):
        turned = Position(_flip(p.white), _flip(p.black), _flip(p.kings), p.turn.opponent)
        assert native.network_evaluate(p) == native.network_evaluate(turned)


def _flip(bits: int) -> int:
    return int(f"{bits:032b}"[::-1], 2)


def test_a_file_that_is_no_network_is_refused(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"CKNET1\n\0" + b"\0" * 40)
    with pytest.raises(ValueError):
        native.load_network(bad)
    data = bytearray(SHIPPED.read_bytes())
    h1 = int(np.frombuffer(bytes(data), "<i4", 1, 8)[0])
    huge = np.full(h1, 1200, "<i2").tobytes()  # every feature of the first 32 inputs at 1200: past int16
    data[20:20 + len(huge) * 32] = huge * 32
    bad.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="int16"):
        native.load_network(bad)
    native.load_network(SHIPPED)


def test_network_search_finds_the_forced_win_and_plays_legal_moves(shipped):
    result = native.search(Position.from_fen("B:W18,27:B14,K22"), depth=4, network=True)
    assert (str(result.move), result.mate) == ("14x23x32", 1)
    for p in list(playout_positions(40, seed=3))[1:]:
        if p.legal_moves():
            found = native.search(p, depth=5, network=True, endgames=False)
            assert found.move in p.legal_moves()


def test_level_9_move_stays_within_its_budget(shipped):
    position = Position.from_fen("B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14")
    chosen = dataclasses.replace(level(9), time_ms=400)
    choice = within_budget(lambda: choose_move(position, chosen), 400)
    assert position.parse_move(choice["move"]) in position.legal_moves()


def test_a_search_that_reuses_the_table_starts_from_the_earlier_searches(shipped):
    position = Position.from_fen("W:W17,19,21,24,25,26,27,29,31:B3,4,5,6,8,10,13,16,20")
    first = native.search(position, depth=9, network=True, endgames=False)
    again = native.search(position, depth=9, network=True, endgames=False)
    reused = native.search(position, depth=9, network=True, endgames=False, reuse_table=True)
    assert again.nodes == first.nodes  # without reuse a search is reproducible
    assert reused.nodes < first.nodes
    assert reused.move in position.legal_moves()


def test_level_9_uses_the_network_and_the_former_level_9_is_kept_by_name():
    assert level(9).network and level(9).reuse_table and level(9).book
    former = CONFIGURATIONS["9-hand"]
    assert (former.number, former.network, former.reuse_table, former.book) == (9, False, False, True)
    assert not any(level(n).network for n in range(1, 9))
