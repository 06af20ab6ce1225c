"""Reviews: how long one takes at the review's effort, and how many run beside a site under load.

Run from the repository root (not part of the test suite)::

    .venv/bin/python bench/review_load.py time --runs 3
    .venv/bin/python bench/review_load.py load --games 150 --think 5 --duration 60 --reviews 40 --workers 1

``time`` reviews a 60-ply game of the archives (``tests/data/OCA_2.0.pdn``, the first game that long,
its first 60 plies) ``--runs`` times in this process, as a worker does
(:func:`game.learning.judge.review_game`, the endgame database of ``var/endgames`` if built), and
prints each run's wall and CPU seconds with the load average.

``load`` measures the players' latency with and without reviews running:

1. ``bench/load.py`` plays ``--games`` human-paced games (``--think`` s a move, one spectator each)
   on its own site (its own Redis and a fresh SQLite database), ``--duration`` s measured, and
   prints the opponents' p50/p95/p99 (the time from a move sent to the opponent's receipt of it).
2. ``--reviews`` finished games are prepared in a database of their own (played through the actions
   from the archives' games, then resigned) and their reviews requested, queued on an RQ queue of
   this checkout's embedded Redis (a database index of its own); ``--workers`` ``rqworker reviews``
   processes start at the niceness of the production unit (10, deploy/systemd/checkers-worker@.service)
   and work while ``bench/load.py`` runs again. Reviews finished per minute of the run are counted
   from the rows' ``finished_at``.

Each phase prints one JSON line with ``os.getloadavg()`` before and after. Only loopback is used;
every process is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: The worker's niceness in production (deploy/systemd/checkers-worker@.service).
WORKER_NICE = 10


def _archive_games(plies: int):
    from game import rules

    with (ROOT / "tests" / "data" / "OCA_2.0.pdn").open(encoding="utf-8") as handle:
        for record in rules.read_games(handle):
            if len(record.moves) >= plies:
                game = rules.Game(rules.Position.initial(), automatic_draws=False)
                for token in record.moves[:plies]:
                    game.play(token)
                yield game


def time_reviews(args) -> None:
    from game.learning import judge

    game = next(_archive_games(60))
    for run in range(1, args.runs + 1):
        load = os.getloadavg()
        wall, cpu = time.perf_counter(), time.process_time()
        judge.review_game(game.positions[0], game.moves)
        print(json.dumps({"run": run, "plies": len(game.moves), "effort": judge.effort(),
                          "wall_s": round(time.perf_counter() - wall, 2), "cpu_s": round(time.process_time() - cpu, 2),
                          "load_before": [round(x, 2) for x in load],
                          "load_after": [round(x, 2) for x in os.getloadavg()]}), flush=True)


def prepare(args) -> None:
    """(In a process of its own, with the bench's database and Redis in its environment.) Migrate,
    play ``--reviews`` archive games through the actions, resign them, request their reviews."""
    import django

    django.setup()
    import django_rq
    from django.core.management import call_command

    from game.learning import reviews
    from game.models import Game
    from game.round import actions

    call_command("migrate", verbosity=0)
    django_rq.get_queue(reviews.QUEUE).empty()  # jobs of an earlier run, whose database is gone
    black, white = "b" * 32, "w" * 32
    made = 0
    for record in _archive_games(40):
        if made >= args.reviews:
            break
        game = actions.create_game(black, "black", "B")
        actions.join_game(game.id, white, "white")
        for move in record.moves:
            row = Game.objects.get(pk=game.id)
            actions.play_move(game.id, black if row.turn.value == "B" else white, str(move), row.version)
        actions.resign(game.id, white)
        reviews.request_review(game.id, reviews.AUTOMATIC)  # as a rated game's: no cap per requester
        made += 1
    print(json.dumps({"prepared": made}), flush=True)


def _load_run(args) -> dict:
    command = [sys.executable, str(ROOT / "bench" / "load.py"), "--games", str(args.games), "--think", str(args.think),
               "--duration", str(args.duration), "--warmup", "5", "--sqlite", "--no-relay"]
    output = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=args.duration * 4 + 600)
    lines = [line for line in output.stdout.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {"error": output.stderr[-2000:]}
    site = result.get("site", {})
    return {"opponent_ms": site.get("opponent_ms"), "moves_per_s": site.get("moves_per_s"),
            "params": result.get("params", {}), "error": result.get("error")}


def load(args) -> None:
    print(json.dumps({"phase": "site alone", "load_before": os.getloadavg(), **_load_run(args),
                      "load_after": os.getloadavg()}), flush=True)
    with tempfile.TemporaryDirectory() as folder:
        redis_url = f"redis://127.0.0.1:{os.environ.get('EMBEDDED_REDIS_PORT', '6380')}/5"
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder}/bench.sqlite3", "RQ_REDIS_URL": redis_url,
               "DJANGO_SETTINGS_MODULE": "checkers_site.settings", "DJANGO_DEBUG": "1", "LOG_LEVEL": "WARNING"}
        subprocess.run([sys.executable, __file__, "_prepare", "--reviews", str(args.reviews)], env=env, check=True,
                       cwd=ROOT)
        workers = [subprocess.Popen(["nice", "-n", str(WORKER_NICE), sys.executable, "manage.py", "rqworker", "reviews",
                                     "--burst"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for _ in range(args.workers)]
        started = time.time()
        try:
            measured = _load_run(args)
        finally:
            ended = time.time()
            for worker in workers:
                worker.terminate()
            for worker in workers:
                worker.wait(timeout=60)
        counted = subprocess.run([sys.executable, "-c", (
            "import django, json; django.setup();"
            "from game.learning.models import Review;"
            f"import datetime; s=datetime.datetime.fromtimestamp({started}, datetime.UTC);"
            f"e=datetime.datetime.fromtimestamp({ended}, datetime.UTC);"
            "print(json.dumps(Review.objects.filter(status='done', finished_at__gte=s, finished_at__lte=e).count()))")],
            env=env, cwd=ROOT, capture_output=True, text=True)
        done = int(counted.stdout.strip() or 0)
        minutes = (ended - started) / 60
        print(json.dumps({"phase": "site with reviews", "workers": args.workers, "worker_nice": WORKER_NICE,
                          "reviews_done": done, "minutes": round(minutes, 2),
                          "reviews_per_minute": round(done / minutes, 2) if minutes else None, **measured,
                          "load_after": os.getloadavg()}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("time", "load", "_prepare"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--games", type=int, default=150)
    parser.add_argument("--think", type=float, default=5.0)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--reviews", type=int, default=40)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if args.what == "time":
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "checkers_site.settings")
        time_reviews(args)
    elif args.what == "_prepare":
        prepare(args)
    else:
        load(args)


if __name__ == "__main__":
    main()
