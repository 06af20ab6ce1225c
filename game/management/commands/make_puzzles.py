"""``manage.py make_puzzles``: mine puzzles from game records and the site's finished games.

Examples::

    manage.py make_puzzles --pdn tests/data/*.pdn --deviations 2 --output game/learning/data/puzzles.jsonl
    manage.py make_puzzles --site --days 7 --save        # the site's games of the last week, into the database

Each game is mined by :func:`game.learning.mining.mine_record` (in ``--workers`` processes); a
puzzle already known (same id, in the output file or the database) is skipped. ``--output``
appends the new puzzles to a JSON-lines file (the shipped set: ``game/learning/data/puzzles.jsonl``,
loaded by the migrations and by ``manage.py load_puzzles``); ``--save`` stores them in the database
at once. ``--limit`` stops after that many new puzzles. Prints each game's count and the load.
"""

from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
import time
from datetime import timedelta
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from game import rules
from game.learning import mining, puzzle_store
from game.models import Game, Move


def _records(paths: list[str]):
    """(start FEN, moves, source) of every game of the PDN files that plays through the rules."""
    for name in paths:
        path = Path(name)
        with path.open(encoding="utf-8", errors="replace") as handle:
            for index, record in enumerate(rules.read_games(handle), start=1):
                try:
                    game = rules.Game(rules.Position.from_fen(record.start_fen or rules.INITIAL_FEN),
                                      automatic_draws=False)
                    for token in record.moves:
                        game.play(token)
                except (rules.RulesError, ValueError):
                    continue
                tags = record.tags
                who = " v ".join(t for t in (tags.get("Black"), tags.get("White")) if t)
                about = ", ".join(t for t in (who, tags.get("Event"), tags.get("Date")) if t and "?" not in t)
                source = f"{path.name} game {index}" + (f" ({about})" if about else "")
                yield game.positions[0].fen(), [str(m) for m in game.moves], source


def _site_games(days: int):
    since = timezone.now() - timedelta(days=days)
    for game in Game.objects.filter(status=Game.Status.FINISHED, finished_at__gte=since, ply__gte=2):
        moves = list(Move.objects.filter(game_id=game.id).order_by("ply").values_list("notation", flat=True))
        yield game.start_fen, moves, f"the site's game {game.id} ({game.black_name} v {game.white_name})"


class Command(BaseCommand):
    help = "Mine puzzles (shots, strokes, database wins) from PDN files and the site's finished games."

    def add_arguments(self, parser):
        parser.add_argument("--pdn", nargs="*", default=[], help="PDN files to mine")
        parser.add_argument("--site", action="store_true", help="mine the site's finished games")
        parser.add_argument("--days", type=int, default=7, help="with --site: games finished in the last N days")
        parser.add_argument("--deviations", type=int, choices=(1, 2), default=1)
        parser.add_argument("--margin", type=int, default=30,
                            help="with --deviations 2: a plausible other move scores within this of the best "
                                 "(hundredths of a man)")
        parser.add_argument("--output", help="append new puzzles to this JSON-lines file")
        parser.add_argument("--save", action="store_true", help="store new puzzles in the database")
        parser.add_argument("--limit", type=int, default=0, help="stop after this many new puzzles (0: no limit)")
        parser.add_argument("--workers", type=int, default=2)

    def handle(self, *args, **options):
        if not options["pdn"] and not options["site"]:
            raise CommandError("name PDN files (--pdn) or the site's games (--site)")
        output = Path(options["output"]) if options["output"] else None
        known = puzzle_store.known_ids(output)
        games = list(_records(options["pdn"]))
        if options["site"]:
            games += list(_site_games(options["days"]))
        started, new = time.time(), 0
        self.stdout.write(f"{len(games)} games; load {os.getloadavg()}")
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(options["workers"], mp_context=context) as pool:
            futures = {pool.submit(mining.mine_record, fen, moves, options["deviations"], options["margin"]): source
                       for fen, moves, source in games}
            for future in concurrent.futures.as_completed(futures):
                fresh = []
                for puzzle, where in future.result():
                    if puzzle["id"] not in known:
                        known.add(puzzle["id"])
                        fresh.append({**puzzle, "source": f"{futures[future]}, {where}"})
                if output is not None and fresh:
                    with output.open("a", encoding="utf-8") as handle:
                        handle.writelines(json.dumps(p, separators=(",", ":")) + "\n" for p in fresh)
                if options["save"] and fresh:
                    puzzle_store.save(fresh)
                new += len(fresh)
                self.stdout.write(f"{futures[future]}: {len(fresh)} new, {new} in all; "
                                  f"{time.time() - started:.0f} s; load {os.getloadavg()[0]:.1f}")
                if options["limit"] and new >= options["limit"]:
                    for other in futures:
                        other.cancel()
                    break
        self.stdout.write(f"{new} new puzzles in {time.time() - started:.0f} s")
