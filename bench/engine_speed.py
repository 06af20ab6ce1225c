"""Search speed: the compiled core against the pure-Python search, nodes per second on the same positions.

Run from the repository root (after ``make install``, which builds the core)::

    .venv/bin/python bench/engine_speed.py
    .venv/bin/python bench/engine_speed.py --python-depth 8 --core-depth 16
    .venv/bin/python bench/engine_speed.py --timed-only --time-ms 1000     # the core's two evaluations at 1 s

For each position both engines search to the same fixed depth, each repeating its search until a
second of CPU time has passed (so that the core's few milliseconds are measured well and a
descheduled moment weighs little), and the core once more to a deeper depth. Nodes count every
position visited, quiescence included, the same way in both.
Times are the process's CPU time (time.process_time), so other load on the machine disturbs them
less than wall time would; the load average is printed before and after. Single process, one core.

Then the core searches the same positions and the ten first approved ballots with a time budget
(``--time-ms``, wall time, as level 9 does), once with the hand-written evaluation and once with the
learned network (the endgame database as loaded by default, a table emptied for each search), and
prints each search's depth, nodes and nodes per CPU second, then the mean depth and nodes of each.
"""

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from game.engine import native  # noqa: E402
from game.engine.search import search  # noqa: E402
from game.rules import Position, ballots  # noqa: E402

POSITIONS = [
    ("start", Position.initial().fen()),
    ("middle game", "B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14"),
    ("captures", "B:W17,19,21,24,25,26,27,29,31:B3,4,5,6,8,10,13,16,20"),
    ("kings and men", "B:W14,18,19,25,27,28,29,30,32:B1,3,4,5,6,7,8,10,12,16,K31"),
    ("kings ending", "W:WK3,K12,K28,20:BK10,K19,K23,5"),
]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min; {os.cpu_count()} cores)"


def cpu_timed(function, minimum=0.0):
    """(last result, total nodes, CPU seconds), calling ``function`` until ``minimum`` CPU seconds have passed."""
    calls, nodes = 0, 0
    started = time.process_time()
    while True:
        result = function()
        calls += 1
        nodes += result.nodes
        elapsed = time.process_time() - started
        if elapsed >= minimum:
            return result, nodes, elapsed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-depth", type=int, default=8, help="depth of both engines' common search (8)")
    parser.add_argument("--core-depth", type=int, default=16, help="depth of the core's deeper search (16)")
    parser.add_argument("--time-ms", type=float, default=1000, help="budget of the timed searches (ms, 1000)")
    parser.add_argument("--timed-only", action="store_true", help="only the timed searches of the two evaluations")
    args = parser.parse_args(argv)
    if not native.available():
        print("the compiled core is not built: run `make install`")
        return 1
    if not args.timed_only:
        fixed_depth(args)
    timed(args.time_ms)
    return 0


def timed(time_ms: float) -> None:
    """Each evaluation's searches at ``time_ms`` on the same positions: depth, nodes, nodes per CPU second."""
    positions = POSITIONS + [(f"ballot {b.number}", b.record().position.fen()) for b in ballots.approved()[:10]]
    with_network = hasattr(native, "load_network")  # a core of before the network: the hand-written one only
    if with_network:
        native.load_network()
    native.load_endgames()
    shape = f"network {native.network_shape()}, {native.network_simd()}" if with_network else "no network"
    print(f"\ntimed searches, {time_ms:.0f} ms each (wall); {shape}; endgame database "
          f"{native.endgame_pieces() or 'no'} pieces; load average {load()}")
    print(f"{'position':<14} {'hand: depth':>11} {'nodes':>11} {'n/cpu s':>11}   "
          f"{'network: depth':>14} {'nodes':>11} {'n/cpu s':>11}")
    totals = {False: [0, 0, 0.0], True: [0, 0, 0.0]}
    for name, fen in positions:
        position = Position.from_fen(fen)
        cells = []
        for network in (False, True):
            if network and not with_network:
                cells.append(f"{'-':>14} {'-':>11} {'-':>11}")
                continue
            options = {"network": True} if network else {}
            started = time.process_time()
            result = native.search(position, time_ms=time_ms, **options)
            cpu = max(time.process_time() - started, 1e-6)
            totals[network][0] += result.depth
            totals[network][1] += result.nodes
            totals[network][2] += cpu
            cells.append(f"{result.depth:>{14 if network else 11}} {result.nodes:>11,} {result.nodes / cpu:>11,.0f}")
        print(f"{name:<14} {cells[0]}   {cells[1]}")
    count = len(positions)
    for network in (False, True) if with_network else (False,):
        depth, nodes, cpu = totals[network]
        print(f"{'network' if network else 'hand':<8} mean depth {depth / count:.2f}, mean nodes {nodes / count:,.0f}, "
              f"{nodes / cpu:,.0f} nodes per CPU second")
    print(f"load average after: {load()}")


def fixed_depth(args: argparse.Namespace) -> None:
    """Both engines to the same depth on :data:`POSITIONS`, and the core deeper (the first table)."""
    print(f"Python {platform.python_version()} on {platform.machine()}; load average {load()}")
    print(f"{'position':<14} {'depth':>5} {'python nodes':>12} {'python n/s':>11} "
          f"{'core nodes':>11} {'core n/s':>11} {'ratio':>6}   core deeper: depth, nodes, cpu s, n/s")
    ratios = []
    for name, fen in POSITIONS:
        position = Position.from_fen(fen)
        depth = args.python_depth
        py_result, py_nodes, py_cpu = cpu_timed(lambda p=position, d=depth: search(p, depth=d), minimum=1.0)
        core_result, core_nodes, core_cpu = cpu_timed(lambda p=position, d=depth: native.search(p, depth=d),
                                                      minimum=1.0)
        py_rate, core_rate = py_nodes / py_cpu, core_nodes / core_cpu
        ratio = core_rate / py_rate
        ratios.append(ratio)
        deep, deep_nodes, deep_cpu = cpu_timed(lambda p=position: native.search(p, depth=args.core_depth))
        print(f"{name:<14} {depth:>5} {py_result.nodes:>12,} {py_rate:>11,.0f} {core_result.nodes:>11,} "
              f"{core_rate:>11,.0f} {ratio:>5.0f}x   {deep.depth}, {deep_nodes:,}, {deep_cpu:.2f}, "
              f"{deep_nodes / deep_cpu:,.0f}")
    ratios.sort()
    print(f"ratio of nodes/s, core / python: smallest {ratios[0]:.0f}x, median {ratios[len(ratios) // 2]:.0f}x, "
          f"largest {ratios[-1]:.0f}x")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    sys.exit(main())
