"""Command line: ``python -m game.rules perft DEPTH [--fen FEN] [--divide]`` and ``replay FILE.pdn ...``.

``replay`` reads every game of each PDN file, plays it through
:class:`~game.rules.Game`, lists each rejected game (number, tags, ply, move
text, position FEN, reason) and ends with ``N games, M replayed, K rejected``.
Exit status: 0 when nothing was rejected, 1 when a game was, 2 when a file
could not be read (or the arguments were wrong).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Sequence
from typing import TextIO, TypedDict

from .counting import divide, perft
from .errors import RulesError
from .game import Game
from .pdn import GAME_TYPE, PdnGame, read_games
from .position import Color, Position

__all__ = ["main", "replay_game", "Rejection"]

_SHOWN_TAGS = ("Event", "Date", "Black", "White", "Result")


class Rejection(TypedDict):
    """Why :func:`replay_game` rejected a game (a plain dict)."""

    ply: int
    number: int
    side: str
    move: str
    fen: str
    reason: str


def replay_game(pdn_game: PdnGame) -> Rejection | None:
    """Replay one :class:`~game.rules.PdnGame`.

    Returns None when every move plays, else a :class:`Rejection` dict with ``ply`` (1-based ply
    of the failing move, 0 for the set-up), ``number`` and ``side`` (its move
    number and the side that played it, as in the move text), ``move`` (its
    text), ``fen`` (the position it was played in) and ``reason`` (error class
    and message).
    """
    game_type = pdn_game.tags.get("GameType")
    if game_type is not None and game_type.split(",")[0].strip() not in ("", GAME_TYPE):
        return {"ply": 0, "number": 0, "side": "", "move": "", "fen": "",
                "reason": f"GameType {game_type!r} is not English draughts (21)"}
    try:
        game = Game(Position.from_fen(pdn_game.start_fen) if pdn_game.start_fen else None)
    except RulesError as exc:
        return {"ply": 0, "number": 0, "side": "", "move": "", "fen": pdn_game.start_fen or "",
                "reason": f"{type(exc).__name__}: bad FEN tag: {exc}"}
    offset = 0 if game.start.turn is Color.BLACK else 1
    for text in pdn_game.moves:
        before = game.position
        try:
            game.play(text)
        except RulesError as exc:
            ply = game.ply + 1
            return {"ply": ply, "number": (ply - 1 + offset) // 2 + 1, "side": before.turn.label, "move": text,
                    "fen": before.fen(), "reason": f"{type(exc).__name__}: {exc}"}
    return None


def _describe(pdn_game: PdnGame) -> str:
    names = [name for name in _SHOWN_TAGS if name in pdn_game.tags] or list(pdn_game.tags)
    return ", ".join(f'{name} "{pdn_game.tags[name]}"' for name in names) or "no tags"


def _replay(paths: Iterable[str], out: TextIO, err: TextIO) -> int:
    games = replayed = rejected = 0
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
            failure = replay_game(record)
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
    print(f"{games} games, {replayed} replayed, {rejected} rejected", file=out)
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
