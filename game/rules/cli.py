"""Command line: ``python -m game.rules perft DEPTH [--fen FEN] [--divide]`` and ``replay FILE.pdn ...``.

``replay`` reads every game of each PDN file, plays it through
:class:`~game.rules.Game` as a record from elsewhere (:func:`game.rules.pdn.replay`: past a
repetition or forty-move count, which over the board are claimed), notes each game that went
past one (the ply where the site would have declared the draw), lists each rejected game
(number, tags, ply, move text, position FEN, reason) and ends with ``N games, M replayed,
K rejected`` (and ``; J played on past a draw the site would have declared`` when J > 0).
Exit status: 0 when nothing was rejected, 1 when a game was, 2 when a file
could not be read (or the arguments were wrong).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Sequence
from typing import TextIO

from .counting import divide, perft
from .errors import RulesError
from .pdn import PdnGame, Rejection, Replay, read_games, replay
from .position import Position

__all__ = ["main", "replay_game", "site_draw_note", "Rejection"]

_SHOWN_TAGS = ("Event", "Date", "Black", "White", "Result")


def replay_game(pdn_game: PdnGame) -> Rejection | None:
    """Replay one :class:`~game.rules.PdnGame` (see :func:`game.rules.pdn.replay`).

    Returns None when every move plays (past a repetition or forty-move count the site would
    have declared too: a record from elsewhere), else the :class:`~game.rules.pdn.Rejection`
    dict: ``ply`` (1-based ply of the failing move, 0 for the set-up), ``number`` and
    ``side`` (its move number and the side that played it, as in the move text), ``move``
    (its text), ``fen`` (the position it was played in) and ``reason`` (error class and message).
    """
    return replay(pdn_game).rejection


def site_draw_note(done: Replay) -> str | None:
    """The note for a record whose moves go on past a draw the site declares by itself, e.g.
    ``"the site would have declared a draw by threefold repetition after ply 73 (move 37,
    Black, '19x24'); played on, as over the board the draw is claimed"``; None when there is none."""
    if done.site_draw is None or done.record is None:
        return None
    ply, outcome = done.site_draw
    if ply >= done.record.ply:     # the record ends there: nothing was played past it
        return None
    if ply == 0:
        where = "at the start"
    else:
        number, side = done.move_number(ply)
        where = f"after ply {ply} (move {number}, {side}, {str(done.record.moves[ply - 1])!r})"
    return (f"the site would have declared a {outcome.reason} {where}; played on, "
            f"as over the board the draw is claimed")


def _describe(pdn_game: PdnGame) -> str:
    names = [name for name in _SHOWN_TAGS if name in pdn_game.tags] or list(pdn_game.tags)
    return ", ".join(f'{name} "{pdn_game.tags[name]}"' for name in names) or "no tags"


def _replay(paths: Iterable[str], out: TextIO, err: TextIO) -> int:
    games = replayed = rejected = played_on = 0
    unreadable = False
    for path in paths:
        try:
            with open(path, encoding="utf-8-sig", errors="strict", newline="") as handle:
                records = list(read_games(handle))
        except UnicodeDecodeError:
            try:
                with open(path, encoding="latin-1", newline="") as handle:
                    records = list(read_games(handle))
            except OSError as exc:
                print(f"{path}: cannot read: {exc.strerror or exc}", file=err)
                unreadable = True
                continue
        except OSError as exc:
            print(f"{path}: cannot read: {exc.strerror or exc}", file=err)
            unreadable = True
            continue
        for record in records:
            games += 1
            done = replay(record)
            failure = done.rejection
            note = site_draw_note(done)
            if note:
                played_on += 1
                print(f"{path}: game {record.number} (line {record.line}; {_describe(record)}): {note}", file=out)
            if failure is None:
                replayed += 1
                continue
            rejected += 1
            if failure["ply"]:
                where = (f"at ply {failure['ply']} (move {failure['number']}, {failure['side']}) "
                         f"{failure['move']!r} in {failure['fen']}")
            else:
                where = f"before the first move{' (FEN ' + failure['fen'] + ')' if failure['fen'] else ''}"
            print(f"{path}: game {record.number} (line {record.line}; {_describe(record)}) rejected "
                  f"{where}: {failure['reason']}", file=out)
    summary = f"{games} games, {replayed} replayed, {rejected} rejected"
    if played_on:
        summary += f"; {played_on} played on past a draw the site would have declared"
    print(summary, file=out)
    if unreadable:
        return 2
    return 1 if rejected else 0


def _perft(depth: int, fen: str | None, show_divide: bool, out: TextIO) -> int:
    position = Position.from_fen(fen) if fen else Position.initial()
    started = time.perf_counter()
    if show_divide:
        total = 0
        for move, count in divide(position, depth):
            print(f"{move} {count}", file=out)
            total += count
    else:
        total = perft(position, depth)
    elapsed = time.perf_counter() - started
    rate = total / elapsed if elapsed > 0 else float("inf")
    print(f"perft({depth}) = {total}  ({elapsed:.3f} s, {rate:,.0f} leaves/s)", file=out)
    return 0


def main(argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    parser = argparse.ArgumentParser(prog="python -m game.rules", description="American checkers rules tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("perft", help="count leaf positions of all move sequences of DEPTH plies")
    p.add_argument("depth", type=int)
    p.add_argument("--fen", help="start from this PDN FEN (default: the start position)")
    p.add_argument("--divide", action="store_true", help="show the count after each first move")
    r = commands.add_parser("replay", help="replay every game of PDN files through the rules")
    r.add_argument("files", nargs="+")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    if args.command == "perft":
        if args.depth < 0:
            print("depth must be at least 0", file=err)
            return 2
        try:
            return _perft(args.depth, args.fen, args.divide, out)
        except RulesError as exc:
            print(f"bad --fen: {exc}", file=err)
            return 2
    return _replay(args.files, out, err)
