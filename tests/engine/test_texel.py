"""bench/texel.py, the tuning of the evaluation's weights: its data are reproducible from a seed, its
fit lowers the error, and it refuses files it did not write with a clear error."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

import pytest

from game.engine import native
from game.rules import Position

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled core is not built")

ROOT = Path(__file__).resolve().parents[2]


# The benchmarks are scripts, not a package: imported by name from their folder, which worker
# processes (spawned) find again in the sys.path they inherit.
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))
texel = importlib.import_module("texel")
engine_match = importlib.import_module("engine_match")


@pytest.fixture(scope="module")
def tiny():
    return texel.generate(seed=7, games=3, nodes=200, max_plies=80, workers=1, records=False)


def test_generated_data_are_reproducible_for_a_seed(tiny):
    again = texel.generate(seed=7, games=3, nodes=200, max_plies=80, workers=2, records=False)
    assert again == tiny
    other = texel.generate(seed=8, games=3, nodes=200, max_plies=80, workers=1, records=False)
    assert other["positions"] != tiny["positions"]
    assert tiny["seed"] == 7 and tiny["counts"]["self_play_games"] == 3
    assert tiny["settings"]["weights"] == native.default_weights()  # what the self-play searched with
    kings = texel.generate(seed=7, games=3, nodes=200, max_plies=80, workers=1, records=False, weights={"king": 400})
    assert kings["settings"]["weights"]["king"] == 400 and kings["positions"] != tiny["positions"]
    assert tiny["counts"]["positions"] == len(tiny["positions"]) > 0


def test_positions_are_quiet_and_labelled_with_their_games_result(tiny):
    by_game: dict[str, set[float]] = {}
    for fen, result, game in tiny["positions"]:
        position = Position.from_fen(fen)
        moves = position.legal_moves()
        assert moves and not any(move.is_capture for move in moves), fen
        by_game.setdefault(game, set()).add(result)
    assert all(len(results) == 1 and results <= {0.0, 0.5, 1.0} for results in by_game.values())


def test_game_records_give_their_result_from_blacks_view():
    rows, used = texel.record_positions()
    assert used > 100 and len(rows) > 3000
    # London 1992: Chinook won game 5 with White (the file's second game), game 8 with Black (its fourth).
    assert {result for _, result, game in rows if game == "london1992.pdn#2"} == {0.0}
    assert {result for _, result, game in rows if game == "london1992.pdn#4"} == {1.0}


def test_the_error_falls_on_a_tiny_fit(tiny, tmp_path):
    path = tmp_path / "data.json"
    path.write_text(json.dumps(tiny))
    states, results, games = texel.load_positions(path)
    assert len(states) == len(results) == len(games) == len(tiny["positions"])
    defaults = native.default_weights()
    k = texel.fit_k(texel.black_evals(states, defaults), results)
    assert 0 < k < 0.1
    before = texel.mean_squared_error(texel.black_evals(states, defaults), results, k)
    tuned, after = texel.tune(states, results, defaults, k, steps=(4,), max_rounds=2)
    assert after < before
    assert after == pytest.approx(texel.mean_squared_error(texel.black_evals(states, tuned), results, k))
    assert tuned["man"] == 100 and tuned != defaults
    assert native.weights() == defaults  # the process's weights are back to the defaults


def test_mean_squared_error_of_known_values():
    assert texel.mean_squared_error([0, 0], [1.0, 0.0], 0.01) == pytest.approx(0.25)
    assert texel.mean_squared_error([100_000], [1.0], 0.01) == pytest.approx(0.0)


@pytest.mark.parametrize(("text", "message"), [
    ("not json", "cannot read a positions file"),
    ('{"format": "other"}', "not a positions file"),
    ('{"format": "texel-positions", "version": 1, "positions": []}', "non-empty list"),
    ('{"format": "texel-positions", "version": 1, "positions": [["B:W21:B1", 2, "g"]]}', "result must be"),
    ('{"format": "texel-positions", "version": 1, "positions": [["X:W21:B1", 1, "g"]]}', "bad FEN"),
    ('{"format": "texel-positions", "version": 1, "positions": [["B:W21:B1", 1]]}', "expected [fen, result, game]"),
])
def test_bad_positions_files_are_refused(tmp_path, capsys, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(texel.DataError, match=message.replace("[", r"\[")):
        texel.load_positions(path)
    with pytest.raises(SystemExit) as exit_info:
        texel.main(["tune", "--data", str(path), "--out", str(tmp_path / "w.json")])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2]", "JSON object of weight names"),
    ('{"kng": 140}', "unknown weights kng"),
    ('{"king": 1.5}', "must be ints"),
    ('{"weights": {"king": 20000}}', "must be ints within"),
])
def test_bad_weights_files_are_refused(tmp_path, text, message):
    path = tmp_path / "w.json"
    path.write_text(text)
    with pytest.raises(texel.DataError, match=message):
        texel.load_weights(path)
    with pytest.raises(argparse.ArgumentTypeError):
        engine_match.parse_player(f"9+weights={path}", 1.0)


def test_a_match_player_with_weights_and_a_node_budget(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"weights": {"king": 150}}))
    assert texel.load_weights(path) == {"king": 150}
    player = engine_match.parse_player(f"9+weights={path}", 1.0, nodes=300)
    assert player.weights == {"king": 150} and player.nodes == 300
    assert "300 nodes" in player.name and "weights w.json" in player.name
    with pytest.raises(argparse.ArgumentTypeError, match="without blunders"):
        engine_match.parse_player(f"1+weights={path}", 1.0)
    outcome = engine_match.play_game(player, engine_match.parse_player("9", 1.0, nodes=300), ("11-15", "23-19", "8-11"),
                                     seed=1, max_plies=40)
    assert outcome["plies"] <= 40 and outcome["result"] in ("1-0", "0-1", "1/2-1/2")
