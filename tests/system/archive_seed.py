"""An account with a long archive, written straight into a site's database: for the system test of
whole-archive downloads (tests/system/test_pdn_downloads.py) and its bench (bench/pdn_download.py).

Run in the site's environment (``DATABASE_URL`` of the site under test)::

    python -m tests.system.archive_seed --username marathon --games 20000

Prints one JSON line: ``{"username", "player_id", "games", "moves", "seconds"}``.  The games are
finished, legal (a few dozen random games of 30 to 90 plies, played through the rules once and
stored again and again, the account on either seat), one a minute apart, with ``bulk_create``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import uuid
from datetime import timedelta


def distinct_games(count: int, seed: int) -> list[tuple[list[str], list[str], str]]:
    """``count`` random legal games: ``(notations, fens after each ply, result)``."""
    from game import rules

    rng = random.Random(seed)
    made = []
    for _ in range(count):
        record = rules.Game()
        plies = rng.randrange(30, 90)
        while record.ply < plies and record.outcome is None and record.legal_moves():
            record.play(rng.choice(record.legal_moves()))
        result = record.outcome.result if record.outcome is not None else rng.choice(["1-0", "0-1", "1/2-1/2"])
        made.append(([str(m) for m in record.moves], [p.fen() for p in record.positions[1:]], result))
    return made


def seed(username: str, games: int, seed_value: int = 7, batch: int = 500) -> dict:
    """Create the account ``username`` (no password) and ``games`` finished games of it.  Returns
    the figures printed by the command line."""
    from django.contrib.auth.models import User
    from django.db import connection, transaction
    from django.utils import timezone

    from game import rules
    from game.models import Account, Game, Move

    started = time.monotonic()
    user = User.objects.create_user(username=username, password=None)
    account = Account.objects.create(user=user, player_id=uuid.uuid4().hex)
    pool = distinct_games(40, seed_value)
    opponents = [uuid.uuid4().hex for _ in range(50)]
    Game._meta.get_field("created_at").auto_now_add = False   # each game its own minute, as played
    first = timezone.now() - timedelta(minutes=games + 1)
    moves_total = 0
    for start in range(0, games, batch):
        rows, moves = [], []
        for index in range(start, min(games, start + batch)):
            notations, fens, result = pool[index % len(pool)]
            opponent = opponents[index % len(opponents)]
            black, white = (account.player_id, opponent) if index % 2 == 0 else (opponent, account.player_id)
            at = first + timedelta(minutes=index)
            game = Game(start_fen=rules.INITIAL_FEN, fen=fens[-1], ply=len(notations), status=Game.Status.FINISHED,
                        result=result, termination="resignation", black_player=black, white_player=white,
                        black_name=username if black == account.player_id else f"op{index % 50}",
                        white_name=username if white == account.player_id else f"op{index % 50}",
                        time_control=("5+3", "3+0", "10+5", "untimed")[index % 4], created_at=at, updated_at=at,
                        finished_at=at)
            rows.append(game)
            moves += [Move(game=game, ply=ply, notation=n, fen_after=f)
                      for ply, (n, f) in enumerate(zip(notations, fens, strict=True), start=1)]
        with transaction.atomic():
            Game.objects.bulk_create(rows)
            Move.objects.bulk_create(moves, batch_size=5000)
        moves_total += len(moves)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")   # as autovacuum soon would after such a load: the planner's counts
    return {"username": username, "player_id": account.player_id, "games": games, "moves": moves_total,
            "seconds": round(time.monotonic() - started, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--username", required=True)
    parser.add_argument("--games", type=int, required=True)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "checkers_site.settings")
    import django

    django.setup()
    print(json.dumps(seed(args.username, args.games)))


if __name__ == "__main__":
    sys.exit(main())
