"""Build the engine's opening book, ``game/engine/book.txt``, with deep searches of the compiled core.

Run from the repository root::

    .venv/bin/python bench/build_book.py                  # the shipped book (defaults below)
    .venv/bin/python bench/build_book.py --nodes 20000 --plies 2 --ballots 3 --output /tmp/book.txt

What it searches:

- the free start and its main lines: every position within ``--plies`` plies of the start
  (default 6) in which the side to move is the computer's, where the computer's own moves follow
  the book and every reply of the opponent is considered, once with the computer as Black and once
  as White (a position with a single legal move is played through, not searched nor kept);
- the position after each of the ACF's approved 3-move ballots (``game/rules/ballots.py``, 156;
  ``--ballots N`` takes the first N), White to move; when White's reply is forced (a single legal
  move, 29 of them), the first position after it with a choice (its ``from`` names the forced
  moves: ``ballot 58 20x11``).

Each position is searched by the compiled core (``game.engine.native.search``) with the default
evaluation weights (``--network``: with the learned network of ``game/engine/network.bin``, whose
SHA-256 the header names), without an endgame database, up to ``--nodes`` positions visited (default
40,000,000) and ``--depth`` plies (default: no limit but the core's 60). Node and depth budgets, not
wall time: a search's result depends only on its position and budget (the core's table keeps no
entries from one search to the next), so a rebuild with the same arguments writes the same file,
byte for byte, whatever the machine's load and however the searches fall on the workers. The
header names the command, the budget and ``--date`` (default: today, UTC).

The searches run in ``--workers`` processes (default 2). Each finished search prints a progress
line on stderr; the end prints the total wall and CPU time.

This is a developer's script, not a management command: the book is built once and committed with
the code (operators never build it, unlike the endgame database), and the script needs only
``game.engine`` and ``game.rules``, not Django.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import hashlib
import multiprocessing
import os
import resource
import sys
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from game.engine import native  # noqa: E402
from game.engine.book import BOOK_PATH, FORMAT_LINE, PV_PLIES  # noqa: E402
from game.rules import Color, Position, ballots  # noqa: E402

DEFAULT_NODES = 40_000_000
DEFAULT_PLIES = 6

#: One search's answer: (fen, move, score, depth, pv, nodes, cpu seconds).
Found = tuple[str, str, int, int, list[str], int, float]


def search_one(fen: str, nodes: int, depth: int | None, network: bool = False) -> Found:
    """Worker function: the core's search of ``fen`` within ``nodes`` positions and ``depth`` plies.

    Returns ``(fen, move, score, depth reached, pv, nodes visited, CPU seconds)``; moves in full
    notation. Raises ValueError for a position without legal moves (the book has none).
    """
    position = Position.from_fen(fen)
    started = time.process_time()
    result = native.search(position, nodes=nodes, depth=depth, endgames=False, network=network)
    if result.move is None:
        raise ValueError(f"no legal move in {fen}")
    return (fen, str(result.move), result.score, result.depth, [str(m) for m in result.pv[:PV_PLIES]],
            result.nodes, time.process_time() - started)


class Builder:
    """The book under construction: entries by FEN, in the order their positions were found."""

    def __init__(self, pool: concurrent.futures.Executor, nodes: int, depth: int | None,
                 network: bool = False) -> None:
        self.pool = pool
        self.nodes = nodes
        self.depth = depth
        self.network = network
        self.entries: dict[str, Found] = {}
        self.sources: dict[str, str] = {}
        #: Positions with one legal move: not searched, not in the book (there is nothing to choose).
        self.forced: dict[str, str] = {}
        self.started = time.monotonic()
        self.cpu = 0.0
        self.done = 0

    def search(self, wanted: Iterable[tuple[Position, str]], total_hint: str) -> None:
        """Search every position of ``wanted`` (position, where it comes from) not yet in the book."""
        batch = []
        for position, source in wanted:
            fen = position.fen()
            legal = position.legal_moves()
            if len(legal) == 1:
                self.forced[fen] = str(legal[0])
            elif fen not in self.sources:
                self.sources[fen] = source
                batch.append(fen)
        futures = [self.pool.submit(search_one, fen, self.nodes, self.depth, self.network) for fen in batch]
        for future in concurrent.futures.as_completed(futures):
            found = future.result()
            self.entries[found[0]] = found
            self.cpu += found[6]
            self.done += 1
            fen, move, score, depth, _pv, visited, _cpu = found
            print(f"[{self.done:4d}{total_hint}] {time.monotonic() - self.started:7.1f} s  "
                  f"{self.sources[fen]:<32} {move:<8} {score:+5d}  depth {depth:2d}  {visited:>11,} nodes",
                  file=sys.stderr, flush=True)

    def move_of(self, position: Position) -> str:
        fen = position.fen()
        return self.forced[fen] if fen in self.forced else self.entries[fen][1]


def line_text(moves: list[str]) -> str:
    return "start" if not moves else "start " + " ".join(moves)


def build(builder: Builder, plies: int, ballot_count: int) -> None:
    """Search the ballots, then the free start's lines ply by ply (the book's moves decide the next ply)."""
    wanted = []
    for chosen in ballots.approved()[:ballot_count]:
        position, forced = chosen.record().position, []
        while len(legal := position.legal_moves()) == 1:  # a forced reply: the first choice comes after it
            forced.append(str(legal[0]))
            position = position.play(legal[0])
        if legal:
            wanted.append((position, " ".join([f"ballot {chosen.number}", *forced])))
    builder.search(wanted, "")
    # Nodes of the tree: (position, the computer's colour, the line from the start).
    frontier: list[tuple[Position, Color, list[str]]] = [(Position.initial(), Color.BLACK, []),
                                                         (Position.initial(), Color.WHITE, [])]
    for _ply in range(plies):
        builder.search(((p, line_text(line)) for p, computer, line in frontier if p.turn == computer), "")
        following: list[tuple[Position, Color, list[str]]] = []
        seen: set[tuple[str, Color]] = set()
        for position, computer, line in frontier:
            if position.turn == computer:
                replies = [position.parse_move(builder.move_of(position))]
            else:
                replies = position.legal_moves()
            for move in replies:
                after = position.play(move)
                if (after.fen(), computer) not in seen and after.has_legal_move():
                    seen.add((after.fen(), computer))
                    following.append((after, computer, [*line, str(move)]))
        frontier = following


def write(builder: Builder, path: Path, command: str, args: argparse.Namespace) -> int:
    """Write the book to ``path`` (through a temporary file); returns its size in bytes."""
    depth = "no depth limit" if args.depth is None else f"at most {args.depth} plies"
    if args.network:
        digest = hashlib.sha256(native.NETWORK_PATH.read_bytes()).hexdigest()
        evaluation = f"the learned network (network.bin, sha256 {digest})"
    else:
        evaluation = "default evaluation weights"
    lines = [
        FORMAT_LINE,
        f"# built by: {command}",
        f"# date: {args.date}",
        f"# search: the compiled core, {evaluation}, no endgame database; "
        f"{args.nodes:,} nodes per position, {depth}",
        f"# positions: {len(builder.entries)} (the free start and its lines to {args.plies} plies, "
        f"the first {args.ballots} approved ACF ballots, past any forced reply; no position with a single legal move)",
        "# weights: " + " ".join(f"{name}={value}" for name, value in sorted(native.default_weights().items())),
        "# columns: fen, move, score (hundredths of a man, side to move), depth (plies), from, pv",
    ]
    for fen in builder.sources:  # the order the positions were found in
        _fen, move, score, reached, pv, _nodes, _cpu = builder.entries[fen]
        lines.append("\t".join([fen, move, str(score), str(reached), builder.sources[fen], " ".join(pv)]))
    text = "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return len(text.encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES, help="positions each search may visit")
    parser.add_argument("--depth", type=int, default=None, help="deepest iteration (plies); default: none")
    parser.add_argument("--plies", type=int, default=DEFAULT_PLIES, help="plies of the free start's lines")
    parser.add_argument("--ballots", type=int, default=len(ballots.approved()),
                        help="how many approved ballots (in ACF order)")
    parser.add_argument("--workers", type=int, default=2, help="search processes")
    parser.add_argument("--date", default=datetime.datetime.now(datetime.UTC).date().isoformat(),
                        help="the date the header names (default: today, UTC)")
    parser.add_argument("--output", type=Path, default=BOOK_PATH, help="the book file to write")
    parser.add_argument("--network", action="store_true", help="search with the learned network")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.plies < 0 or not 0 <= args.ballots <= len(ballots.approved()) or args.workers < 1:
        parser.error("--nodes and --workers must be positive, --plies at least 0, --ballots 0 to 156")
    if args.depth is not None and not 1 <= args.depth <= 60:
        parser.error("--depth must be 1 to 60")
    if not native.available():
        print("the engine's compiled core is not built: run `make install`", file=sys.stderr)
        return 1
    command = f"bench/build_book.py --nodes {args.nodes} --plies {args.plies} --ballots {args.ballots}"
    if args.depth is not None:
        command += f" --depth {args.depth}"
    if args.network:
        command += " --network"
    command += f" --date {args.date}"
    started = time.monotonic()
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.workers, mp_context=context) as pool:
        builder = Builder(pool, args.nodes, args.depth, args.network)
        build(builder, args.plies, args.ballots)
    size = write(builder, args.output, command, args)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    shown = args.output.resolve()
    shown = shown.relative_to(ROOT) if shown.is_relative_to(ROOT) else shown
    print(f"{len(builder.entries)} positions written to {shown} ({size:,} bytes); "
          f"{time.monotonic() - started:.1f} s wall, {builder.cpu:.1f} s of search CPU "
          f"({children.ru_utime + children.ru_stime:.1f} s CPU in the workers)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
