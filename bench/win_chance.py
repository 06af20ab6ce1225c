"""Fit the reviews' win-chance curve (game/learning/curve.py) on the results of real games.

Run from the repository root::

    nice -n 10 .venv/bin/python bench/win_chance.py                 # the archives of tests/data/
    nice -n 10 .venv/bin/python bench/win_chance.py --pdn a.pdn b.pdn --hold-out 5

Every position of every game record that plays through the rules and has a result (``1-0``,
``0-1``, ``1/2-1/2``) is scored as a review scores it (:func:`game.learning.judge.score_position`:
the compiled core at the review's node budget, the endgame database it loads, the game's history
for repetitions), and labelled with the game's result from Black's point of view (1, ½, 0).
Positions whose result the search proved are left out (a review uses the proof, not the curve).
``K`` of ``1 / (1 + exp(-K * score))`` is fitted by golden-section search on the mean squared
error (:func:`game.learning.curve.fit`); one game in ``--hold-out`` (by its order) is left out of
the fit and its error printed as a check. Prints the load (os.getloadavg()) with every run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from game import rules  # noqa: E402
from game.learning import curve, judge  # noqa: E402

RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def games(paths: list[Path]):
    """(file name, index, result for Black, rules.Game) for every game that plays through and has a result."""
    for path in paths:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for index, record in enumerate(rules.read_games(handle)):
                if record.result not in RESULTS:
                    continue
                try:
                    game = rules.Game(rules.Position.from_fen(record.start_fen or rules.INITIAL_FEN),
                                      automatic_draws=False)
                    for token in record.moves:
                        game.play(token)
                except (rules.RulesError, ValueError):
                    continue
                yield path.name, index, RESULTS[record.result], game


def samples_of(game: rules.Game, result: float) -> list[tuple[float, float]]:
    """(score for Black, Black's result) for every position of ``game`` not proved by the search."""
    found = []
    since = 0
    positions, moves = game.positions, game.moves
    for index, position in enumerate(positions):
        if index and (moves[index - 1].is_capture or positions[index - 1].is_man_move(moves[index - 1])):
            since = index
        entry = judge.score_position(position, positions[since:index], index - since)
        if entry["exact"] is not None:
            continue
        score = entry["score"] if position.turn is rules.Color.BLACK else -entry["score"]
        found.append((float(score), result))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdn", nargs="*", type=Path, default=sorted((ROOT / "tests" / "data").glob("*.pdn")))
    parser.add_argument("--hold-out", type=int, default=10, help="one game in N is held out of the fit")
    args = parser.parse_args()
    started, cpu = time.time(), time.process_time()
    print(f"load before: {os.getloadavg()}; effort {judge.effort()}")
    fitted: list[tuple[float, float]] = []
    held: list[tuple[float, float]] = []
    count = 0
    for _name, _index, result, game in games(args.pdn):
        (held if count % args.hold_out == args.hold_out - 1 else fitted).extend(samples_of(game, result))
        count += 1
    k = curve.fit(fitted)
    print(f"{count} games, {len(fitted)} positions fitted, {len(held)} held out")
    print(f"K = {k:.5f} per hundredth of a man (shipped: {curve.K})")
    for label, rows in (("fitted", fitted), ("held out", held)):
        if rows:
            print(f"  error on {label}: {curve.squared_error(k, rows):.5f} "
                  f"(shipped K {curve.squared_error(curve.K, rows):.5f}, K=0 {curve.squared_error(0.0, rows):.5f})")
    print(f"{time.time() - started:.1f} s wall, {time.process_time() - cpu:.1f} s CPU; load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
