"""Texel tuning of the compiled core's evaluation weights on positions with known results.

Run from the repository root::

    .venv/bin/python bench/texel.py generate --seed 1 --games 600 --nodes 3000   # var/texel/data-1.json
    .venv/bin/python bench/texel.py tune --data var/texel/data-1.json           # var/texel/weights-1.json

``generate`` plays self-play games with the compiled core at a fixed node budget per move
(``--nodes``; no time limit and no endgame database, so the games depend only on the seed and the
weights they search with, ``--weights``, by default the core's, recorded in the file), each
from one of the ACF's approved 3-move ballots (``game/rules/ballots.py``, taken in turn from a
seeded shuffle), with a random legal move instead of the search's one ``--random`` of the time
in the first ``--random-plies`` plies after the ballot, for variety. Games end by the rules or
are adjudicated a draw after ``--max-plies``. It adds every position of the game records of
``tests/data/*.pdn`` that play through the rules and have a result (``1-0``, ``0-1``,
``1/2-1/2``). Each position is labelled with its game's result **from Black's point of view**
(1 Black won, 0.5 draw, 0 White won). Only quiet positions are kept, as Texel tuning does: the
side to move has a legal move and no capture (a capture pending, the static score means little).
The file holds the seed, the settings, the counts and ``[fen, result, game]`` for each position.

``tune`` fits the evaluation's weights (``native.WEIGHT_NAMES``) to those labels: the predicted
score of a position is ``1 / (1 + exp(-K * eval))``, ``eval`` the core's static evaluation in
hundredths of a man from Black's point of view, and the error is the mean of the squared
differences with the results. First ``K`` is fitted with the default weights (golden-section
search), then K stays fixed and each weight in turn is moved by a step up or down while that
lowers the error (coordinate descent over integers, steps 8, 4, 2, 1 until a round improves
nothing). ``man`` stays 100, since scores are hundredths of a man. One game in ten (by its
position in the file) is held out: the error on those games is printed too, as a check that the
fit is not only learning its own games. The weights are written as a JSON object of name -> int,
which ``bench/engine_match.py`` takes as a player (``5+weights=var/texel/weights-1.json``) and
``native.set_weights`` takes as they are.

The compiled core must be built (``make install``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from game.engine import native  # noqa: E402
from game.rules import Color, Game, Position, ballots  # noqa: E402
from game.rules.errors import RulesError  # noqa: E402
from game.rules.pdn import read_games, replay  # noqa: E402

FORMAT = "texel-positions"
VERSION = 1
RECORDS = ROOT / "tests" / "data"
OUT = ROOT / "var" / "texel"
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
#: The weight that sets the scale (scores are hundredths of a man): never tuned.
FIXED = ("man",)
STEPS = (8, 4, 2, 1)


class DataError(ValueError):
    """A positions or weights file that is not what this script writes: the message says what is wrong."""


def is_quiet(position: Position) -> bool:
    """True when the side to move has a legal move and none of its moves is a capture."""
    moves = native.legal_moves(position)
    return bool(moves) and not moves[0][1]


def self_play_game(index: int, opening: tuple[str, ...], seed: int, nodes: int, random_rate: float,
                   random_plies: int, max_plies: int, weights: dict[str, int]) -> tuple[float, list[str], int]:
    """One self-play game from ``opening`` (the ballot's three plies), both sides searching with
    ``weights``: ``(result from Black's view, FENs of its quiet positions, plies)``. The same
    arguments give the same game."""
    rng = random.Random(seed * 1_000_003 + index)
    game = Game.from_moves(opening)
    fens = []
    while game.outcome is None and game.ply < max_plies:
        position = game.position
        if is_quiet(position):
            fens.append(position.fen())
        if game.ply < len(opening) + random_plies and rng.random() < random_rate:
            move = rng.choice(position.legal_moves())
        else:
            kept = game.no_progress_plies
            history = game.positions[-1 - kept:-1] if kept else []
            found = native.search(position, nodes=nodes, history=history, no_progress=kept, weights=weights,
                                  endgames=False).move
            assert found is not None  # the game is not over, so there is a legal move
            move = found
        game.play(move)
    result = 0.5 if game.outcome is None else RESULTS[game.outcome.result]
    return result, fens, game.ply


def record_positions(directory: Path = RECORDS) -> tuple[list[list[Any]], int]:
    """The quiet positions of every game of ``directory/*.pdn`` that plays through the rules and has a
    result: ``([[fen, result from Black's view, game name]], games used)``."""
    rows: list[list[Any]] = []
    used = 0
    for path in sorted(directory.glob("*.pdn")):
        with path.open("rb") as handle:
            for number, pdn_game in enumerate(read_games(handle), 1):
                if pdn_game.result not in RESULTS:
                    continue
                done = replay(pdn_game)
                if not done.ok or done.record is None:
                    continue
                used += 1
                name = f"{path.name}#{number}"
                for position in done.record.positions:
                    if is_quiet(position):
                        rows.append([position.fen(), RESULTS[pdn_game.result], name])
    return rows, used


def generate(seed: int, games: int, nodes: int, random_rate: float = 0.1, random_plies: int = 10,
             max_plies: int = 200, workers: int = 2, records: bool = True,
             weights: dict[str, int] | None = None) -> dict[str, Any]:
    """The positions file's content (see the module's text): ``games`` self-play games at ``nodes``
    per move, searched with ``weights`` (the core's defaults for those not given; the file records
    them all), then the game records' positions. The same arguments give the same content whatever
    ``workers`` is. Raises ValueError for a negative count or a budget below 1, CoreMissing."""
    if games < 0 or nodes < 1 or max_plies < 1 or not 0 <= random_rate <= 1 or random_plies < 0:
        raise ValueError("games and random_plies must be >= 0, nodes and max_plies >= 1, random_rate within 0..1")
    played_with = {**native.default_weights(), **(weights or {})}  # CoreMissing now rather than in a worker
    deck = [tuple(b.moves) for b in ballots.approved()]
    random.Random(seed).shuffle(deck)
    jobs = [(i, deck[i % len(deck)], seed, nodes, random_rate, random_plies, max_plies, played_with)
            for i in range(games)]
    if workers > 1 and games > 1:
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            played = list(pool.map(self_play_game, *zip(*jobs, strict=True)))
    else:
        played = [self_play_game(*job) for job in jobs]
    rows: list[list[Any]] = []
    outcomes = {"1-0": 0, "0-1": 0, "1/2-1/2": 0}
    plies = 0
    for index, (result, fens, length) in enumerate(played):
        outcomes[{1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}[result]] += 1
        plies += length
        rows.extend([fen, result, f"self#{index + 1}"] for fen in fens)
    self_rows = len(rows)
    used = 0
    if records:
        record_rows, used = record_positions()
        rows.extend(record_rows)
    return {"format": FORMAT, "version": VERSION, "seed": seed,
            "settings": {"games": games, "nodes": nodes, "random_rate": random_rate, "random_plies": random_plies,
                         "max_plies": max_plies, "records": records, "weights": played_with},
            "counts": {"self_play_games": games, "self_play_results": outcomes, "self_play_plies": plies,
                       "self_play_positions": self_rows, "record_games": used,
                       "record_positions": len(rows) - self_rows, "positions": len(rows)},
            "positions": rows}


def load_positions(path: Path) -> tuple[list[tuple[int, int, int, bool]], list[float], list[str]]:
    """Read a positions file written by ``generate``: ``(states, results, games)``, each state the
    core's ``(black, white, kings, black_to_move)``. Raises :class:`DataError` naming the file and
    what is wrong (not JSON, another format, a bad row, FEN or result)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: cannot read a positions file: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise DataError(f"{path}: not a positions file of {FORMAT!r} version {VERSION} (write one with `generate`)")
    rows = data.get("positions")
    if not isinstance(rows, list) or not rows:
        raise DataError(f"{path}: 'positions' must be a non-empty list")
    states, results, games = [], [], []
    for number, row in enumerate(rows, 1):
        if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and isinstance(row[2], str)):
            raise DataError(f"{path}: position {number}: expected [fen, result, game], got {row!r}")
        fen, result, game = row
        if result not in (0, 0.5, 1) or isinstance(result, bool):
            raise DataError(f"{path}: position {number}: result must be 1, 0.5 or 0 (Black's view), not {result!r}")
        try:
            position = Position.from_fen(fen)
        except RulesError as exc:
            raise DataError(f"{path}: position {number}: bad FEN {fen!r}: {exc}") from exc
        states.append((position.black, position.white, position.kings, position.turn is Color.BLACK))
        results.append(float(result))
        games.append(game)
    return states, results, games


def load_weights(path: Path) -> dict[str, int]:
    """A weights file (a JSON object of weight name -> int, or ``{"weights": {...}}`` as ``tune`` writes).
    Raises :class:`DataError` for anything else: unreadable, unknown names, values that are no ints."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: cannot read a weights file: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("weights"), dict):
        data = data["weights"]
    if not isinstance(data, dict) or not data:
        raise DataError(f"{path}: a weights file is a JSON object of weight names to ints")
    unknown = sorted(set(data) - set(native.WEIGHT_NAMES))
    if unknown:
        raise DataError(f"{path}: unknown weights {', '.join(unknown)} (known: {', '.join(native.WEIGHT_NAMES)})")
    bad = sorted(name for name, value in data.items()
                 if not isinstance(value, int) or isinstance(value, bool) or not -10_000 <= value <= 10_000)
    if bad:
        raise DataError(f"{path}: weights must be ints within -10000..10000: {', '.join(bad)}")
    return dict(data)


def black_evals(states: Sequence[tuple[int, int, int, bool]], weights: dict[str, int]) -> list[int]:
    """The core's static evaluation of each state with ``weights``, from Black's point of view."""
    evaluate = native._module().evaluate
    native.set_weights(weights)
    try:
        return [evaluate(b, w, k, t) if t else -evaluate(b, w, k, t) for b, w, k, t in states]
    finally:
        native.reset_weights()


def mean_squared_error(evals: Iterable[int], results: Sequence[float], k: float) -> float:
    """Mean of ``(result - 1 / (1 + exp(-k * eval)))²`` over the positions."""
    total = 0.0
    count = 0
    for value, result in zip(evals, results, strict=True):
        x = -k * value
        predicted = 0.0 if x > 700 else 1 / (1 + math.exp(x))
        total += (result - predicted) ** 2
        count += 1
    return total / count


def fit_k(evals: Sequence[int], results: Sequence[float], low: float = 1e-4, high: float = 0.1) -> float:
    """The ``k`` (per hundredth of a man) that minimises :func:`mean_squared_error`: golden-section search."""
    ratio = (math.sqrt(5) - 1) / 2
    a, b = low, high
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = mean_squared_error(evals, results, c), mean_squared_error(evals, results, d)
    for _ in range(60):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = mean_squared_error(evals, results, c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = mean_squared_error(evals, results, d)
    return (a + b) / 2


def tune(states: Sequence[tuple[int, int, int, bool]], results: Sequence[float], start: dict[str, int], k: float,
         steps: Sequence[int] = STEPS, max_rounds: int = 50, seconds: float = math.inf,
         report: Callable[[str], None] | None = None) -> tuple[dict[str, int], float]:
    """Coordinate descent from ``start`` at fixed ``k``: each weight but ``man`` moves by ``step`` up or
    down while the error falls; for each step in turn until a round improves nothing (or ``max_rounds``
    rounds, or ``seconds`` of wall time). Returns ``(weights, error)``."""
    current = dict(start)
    best = mean_squared_error(black_evals(states, current), results, k)
    deadline = time.monotonic() + seconds
    for step in steps:
        for round_number in range(1, max_rounds + 1):
            improved = False
            for name in native.WEIGHT_NAMES:
                if name in FIXED:
                    continue
                for delta in (step, -step):
                    trial = dict(current)
                    trial[name] = max(-10_000, min(10_000, trial[name] + delta))
                    if trial[name] == current[name]:
                        continue
                    error = mean_squared_error(black_evals(states, trial), results, k)
                    if error < best:
                        best, current, improved = error, trial, True
                        break
                if time.monotonic() > deadline:
                    return current, best
            if report:
                report(f"  step {step}, round {round_number}: error {best:.6f}")
            if not improved:
                break
    return current, best


def split(games: Sequence[str]) -> list[bool]:
    """For each position, True when its game is held out: one game in ten, by order of first appearance."""
    order: dict[str, int] = {}
    for game in games:
        order.setdefault(game, len(order))
    return [order[game] % 10 == 9 for game in games]


def command_generate(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    weights = load_weights(args.weights) if args.weights else None
    data = generate(args.seed, args.games, args.nodes, args.random, args.random_plies, args.max_plies, args.workers,
                    weights=weights)
    out = args.out or OUT / f"data-{args.seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    data["counts"]["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps({"seed": data["seed"], "settings": data["settings"], "counts": data["counts"]}, indent=1))
    print(f"wrote {out}")


def command_tune(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    states, results, games = load_positions(args.data)
    held = split(games)
    train = [(s, r) for s, r, h in zip(states, results, held, strict=True) if not h]
    test = [(s, r) for s, r, h in zip(states, results, held, strict=True) if h]
    train_states, train_results = [s for s, _ in train], [r for _, r in train]
    test_states, test_results = [s for s, _ in test], [r for _, r in test]
    defaults = native.default_weights()
    k = fit_k(black_evals(train_states, defaults), train_results)
    before = mean_squared_error(black_evals(train_states, defaults), train_results, k)
    before_test = mean_squared_error(black_evals(test_states, defaults), test_results, k) if test else math.nan
    print(f"{len(states)} positions of {len(set(games))} games ({len(train)} to fit, {len(test)} held out)")
    print(f"K = {k:.6f} per hundredth of a man; error with the default weights {before:.6f} "
          f"(held out {before_test:.6f})", flush=True)
    tuned, after = tune(train_states, train_results, defaults, k, max_rounds=args.rounds, seconds=args.seconds,
                        report=lambda line: print(line, flush=True))
    after_test = mean_squared_error(black_evals(test_states, tuned), test_results, k) if test else math.nan
    print(f"error after tuning {after:.6f} (held out {after_test:.6f}); {time.perf_counter() - started:.0f} s")
    changed = {name: (defaults[name], tuned[name]) for name in native.WEIGHT_NAMES if tuned[name] != defaults[name]}
    print("weights:", json.dumps(tuned))
    print("changed:", ", ".join(f"{name} {a} -> {b}" for name, (a, b) in changed.items()) or "none")
    out = args.out or OUT / f"weights-{args.data.stem.removeprefix('data-')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"weights": tuned, "data": str(args.data), "positions": len(states),
                               "fitted": len(train), "held_out": len(test), "k": k,
                               "error_before": before, "error_after": after,
                               "held_out_before": before_test, "held_out_after": after_test}, indent=1) + "\n",
                   encoding="utf-8")
    print(f"wrote {out}")


def main(argv: Sequence[str] | None = None) -> None:
    """The command line (see the module's text)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    gen = commands.add_parser("generate", help="play self-play games and collect labelled quiet positions")
    gen.add_argument("--seed", type=int, default=1)
    gen.add_argument("--games", type=int, default=600, help="self-play games")
    gen.add_argument("--nodes", type=int, default=3000, help="node budget per move")
    gen.add_argument("--random", type=float, default=0.1, help="chance of a random move in the first plies")
    gen.add_argument("--random-plies", type=int, default=10, help="plies after the ballot where random moves may come")
    gen.add_argument("--max-plies", type=int, default=200, help="adjudicate a draw after this many plies")
    gen.add_argument("--workers", type=int, default=2, help="games played at once (does not change the data)")
    gen.add_argument("--weights", type=Path, help="the self-play searches' weights (a weights file; default: the "
                     "core's), part of what the data depend on")
    gen.add_argument("--out", type=Path, help="default var/texel/data-<seed>.json")
    fit = commands.add_parser("tune", help="fit the weights to a positions file")
    fit.add_argument("--data", type=Path, default=OUT / "data-1.json")
    fit.add_argument("--rounds", type=int, default=50, help="most rounds per step")
    fit.add_argument("--seconds", type=float, default=600, help="stop tuning after this much wall time")
    fit.add_argument("--out", type=Path, help="default var/texel/weights-<seed>.json")
    args = parser.parse_args(argv)
    try:
        if args.command == "generate":
            command_generate(args)
        else:
            command_tune(args)
    except DataError as exc:
        parser.exit(2, f"texel: error: {exc}\n")


if __name__ == "__main__":
    main()
