"""Move-generator benchmark: our perft and legal_moves() against pydraughts.

Run from the repository root::

    .venv/bin/python bench/perft.py              # perft 1-9, legal_moves(), comparison at depth 5
    .venv/bin/python bench/perft.py --deep       # also perft 10, and 10-12 with a transposition table

The engine's compiled core (game/engine/core/core.c, built by ``make install``) is counted too,
perft 1-9 from the start (1-11 with --deep), against the same known counts.

All figures are single-process CPython. Times are the process's CPU time
(time.process_time), so other load on the machine disturbs them less than wall
time would; perft rows also show wall time. Leaves/s is perft's leaf count divided by that time; both programs
count the last ply in bulk (moves at the last ply are counted, not played), so
the ratio compares the same work.
"""

import argparse
import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from game.engine import native  # noqa: E402
from game.rules import Position, perft  # noqa: E402

EXPECTED = {int(k): v for k, v in json.loads((ROOT / "tests/data/positions.json").read_text())["perft_initial"].items()}

# The same positions for both programs: the start, a middle game from the Open Checkers
# Archive (tests/data/OCA_2.0.pdn: Moorhead-Wyllie 1841 after 18 plies), and a position with kings.
COMPARED = [
    ("start", Position.initial().fen()),
    ("midgame", "B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14"),
    ("kings", "B:W14,18,19,25,27,28,29,30,32:B1,3,4,5,6,7,8,10,12,16,K31"),
]
LEGAL_MOVES_POSITIONS = [
    ("midgame quiet", "B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14"),
    ("captures", "B:W17,19,21,24,25,26,27,29,31:B3,4,5,6,8,10,13,16,20"),
    ("kings multi-jump", "B:W14,18,19,25,27,28,29,30,32:B1,3,4,5,6,7,8,10,12,16,K31"),
]


def timed(function, *args, minimum=0.5):
    """(result, seconds per call), repeating calls until ``minimum`` seconds have passed."""
    calls = 0
    started = time.process_time()
    while True:
        result = function(*args)
        calls += 1
        elapsed = time.process_time() - started
        if elapsed >= minimum:
            return result, elapsed / calls


def report(depth, function, position, argument):
    """Run ``function(position, argument)`` once and print one perft table row."""
    began, wall = time.process_time(), time.perf_counter()
    count = function(position, argument)
    elapsed, wall = time.process_time() - began, time.perf_counter() - wall
    ok = "ok" if count == EXPECTED[depth] else f"WRONG, expected {EXPECTED[depth]}"
    print(f"{depth:>5} {count:>12,} {elapsed:>9.3f} {wall:>9.3f} {count / max(elapsed, 1e-9):>12,.0f}  {ok}")


def pydraughts_perft(board, depth):
    """pydraughts perft with bulk counting at the last ply, like ours."""
    moves = board.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += pydraughts_perft(board, depth - 1)
        board.pop()
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=9, help="deepest plain perft from the start (default 9)")
    parser.add_argument("--deep", action="store_true", help="also perft 10, and 10-12 with a transposition table")
    parser.add_argument("--compare-depth", type=int, default=5, help="depth of the pydraughts comparison (default 5)")
    parser.add_argument("--no-pydraughts", action="store_true", help="skip the comparison")
    args = parser.parse_args(argv)

    print(f"Python {platform.python_version()} ({platform.python_implementation()}), {platform.machine()}")
    print()
    print("perft from the start (bulk counting at the last ply)")
    print(f"{'depth':>5} {'leaves':>12} {'cpu s':>9} {'wall s':>9} {'leaves/s':>12}  check")
    start = Position.initial()
    for depth in range(1, args.depth + 1):
        report(depth, perft, start, depth)
    if args.deep:
        report(10, perft, start, 10)
        print()
        print("perft from the start with a transposition table")
        for depth in range(10, 13):
            report(depth, lambda p, d: perft(p, d, transpositions=True), start, depth)

    print()
    if native.available():
        print("perft from the start, the engine's compiled core")
        print(f"{'depth':>5} {'leaves':>12} {'cpu s':>9} {'wall s':>9} {'leaves/s':>12}  check")
        for depth in range(1, (11 if args.deep else args.depth) + 1):
            report(depth, native.perft, start, depth)
    else:
        print("the engine's compiled core is not built (make install): its perft is skipped")
    print()
    print("Position.legal_moves() on a fresh position (moves not yet cached), mean of 20,000 calls")
    for name, fen in LEGAL_MOVES_POSITIONS:
        positions = [Position.from_fen(fen) for _ in range(20000)]
        count = len(positions[0].legal_moves())
        began = time.process_time()
        for position in positions[1:]:
            position.legal_moves()
        each = (time.process_time() - began) / (len(positions) - 1)
        print(f"  {name:<18} {count:>2} moves {each * 1e6:7.1f} µs   {fen}")
    print()

    if args.no_pydraughts:
        return 0
    try:
        import draughts
    except ImportError:
        print("\npydraughts is not installed (pip install pydraughts); comparison skipped")
        return 0
    depth = args.compare_depth
    print()
    print(f"perft({depth}) leaves/s, ours against pydraughts {draughts.__version__} (variant 'english')")
    print(f"  {'position':<9} {'leaves':>9} {'ours/s':>12} {'pydraughts/s':>13} {'ratio':>8}")
    ratios = []
    for name, fen in COMPARED:
        position = Position.from_fen(fen)
        ours, ours_seconds = timed(perft, position, depth)
        board = draughts.Board(variant="english", fen=fen)
        began = time.process_time()
        theirs = pydraughts_perft(board, depth)
        their_seconds = time.process_time() - began
        if theirs != ours:
            print(f"  {name:<9} counts differ: ours {ours}, pydraughts {theirs}")
            continue
        ratio = (ours / ours_seconds) / (theirs / their_seconds)
        ratios.append(ratio)
        print(f"  {name:<9} {ours:>9,} {ours / ours_seconds:>12,.0f} {theirs / their_seconds:>13,.0f} {ratio:>7,.0f}x")
    if ratios:
        print(f"  smallest ratio {min(ratios):,.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
