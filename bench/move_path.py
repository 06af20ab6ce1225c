"""The cost of one move on the server: CPU and wall time of :func:`game.round.actions.play_move`.

Run by hand from the repository root (it is not a test)::

    .venv/bin/python bench/move_path.py                     # PostgreSQL on 127.0.0.1:5432, user postgres
    .venv/bin/python bench/move_path.py --sqlite            # and SQLite
    .venv/bin/python bench/move_path.py --games 20 --moves 2000 --repeat 5
    .venv/bin/python bench/move_path.py --postgres postgres://user@host:5432/postgres

For each database a child process of this script sets Django up with the
project's settings (``checkers_site.settings``, ``DJANGO_DEBUG=0``, so no query
logging) against a fresh database: on PostgreSQL ``bench_move_path_<pid>``,
created here through the ``--postgres`` server's maintenance database and
dropped afterwards; on SQLite a file in a temporary folder.  It migrates,
starts ``--games`` untimed games with both seats taken, and plays moves
round-robin over the games, the way concurrent games interleave on the site:
each move is drawn at random (``--seed``) from ``game.rules``' legal moves of
the game's position and played through ``actions.play_move`` with the version
the client would send.  A game that ends is replaced by a new one.

Only the ``play_move`` call is timed: ``time.process_time`` (CPU of this
process: Python, Django, the database driver; for SQLite the database work
too) and ``time.perf_counter`` (wall, including PostgreSQL's round trips).
``--warmup`` moves come first, untimed; then ``--repeat`` timed passes of
``--moves`` moves each; then one more pass of ``--count-moves`` moves counts the
statements each move sends (``CaptureQueriesContext``, which the timed passes
do not pay for).  On PostgreSQL on this machine the server process's CPU per
move is read from ``/proc/<pid>/stat`` of the connection's backend.

Prints one table row per pass and per database, then the median pass.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
BLACK, WHITE = "b" * 32, "w" * 32


def arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games in play at once (20)")
    parser.add_argument("--moves", type=int, default=2000, help="timed moves per pass (2000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per database (3)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed moves first (200)")
    parser.add_argument("--count-moves", type=int, default=200,
                        help="moves of the pass that counts statements (200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="a PostgreSQL maintenance database URL; the bench database is made beside it")
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL")
    parser.add_argument("--sqlite", action="store_true", help="also measure SQLite")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# --- the child: one database, Django set up -------------------------------------------------

def backend_cpu_s(pid: int | None) -> float | None:
    """CPU seconds (user + system) of process ``pid`` so far, or None when it cannot be read."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(args) -> dict:
    os.environ["DJANGO_SETTINGS_MODULE"] = "checkers_site.settings"
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-move-path-not-a-secret")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from game import rules
    from game.round import actions

    call_command("migrate", verbosity=0)
    rng = random.Random(args.seed)

    def new_game() -> list:
        game = actions.start_game(black=(BLACK, "black"), white=(WHITE, "white"))
        return [game.id, rules.Game(), game.version]

    games = [new_game() for _ in range(args.games)]
    turn = 0

    def play(count: int, cpu: list | None = None, wall: list | None = None,
             statements: list | None = None) -> None:
        nonlocal turn
        for _ in range(count):
            slot = games[turn % len(games)]
            game_id, record, v = slot
            move = rng.choice(record.legal_moves())
            player = BLACK if record.position.turn is rules.Color.BLACK else WHITE
            text = str(move)
            if statements is not None:
                with CaptureQueriesContext(connection) as queries:
                    outcome = actions.play_move(game_id, player, text, v)
                statements.extend(query["sql"] for query in queries.captured_queries)
            else:
                c0, w0 = time.process_time(), time.perf_counter()
                outcome = actions.play_move(game_id, player, text, v)
                c1, w1 = time.process_time(), time.perf_counter()
                if cpu is not None:
                    cpu.append(c1 - c0)
                    wall.append(w1 - w0)
            record.play(move)
            slot[2] = outcome.game.version
            if outcome.game.is_over:
                games[turn % len(games)] = new_game()
            turn += 1

    play(args.warmup)
    backend_pid = None
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend_pid = cursor.fetchone()[0]
    passes = []
    for _ in range(args.repeat):
        cpu, wall = [], []
        server_before = backend_cpu_s(backend_pid)
        play(args.moves, cpu, wall)
        server_after = backend_cpu_s(backend_pid)
        wall_sorted = sorted(wall)
        passes.append({
            "moves": len(cpu),
            "cpu_us": statistics.fmean(cpu) * 1e6,
            "cpu_p50_us": statistics.median(cpu) * 1e6,
            "wall_us": statistics.fmean(wall) * 1e6,
            "wall_p50_us": statistics.median(wall) * 1e6,
            "wall_p99_us": wall_sorted[int(len(wall_sorted) * 0.99)] * 1e6,
            "server_cpu_us": None if server_before is None or server_after is None
            else (server_after - server_before) / len(cpu) * 1e6,
        })
    kinds = Counter()
    statements = []
    play(args.count_moves, statements=statements)
    for sql in statements:
        sql = sql.lstrip().upper()
        kind = sql.split(None, 1)[0] if sql else "?"
        if kind == "SELECT" and "FOR UPDATE" in sql:
            kind = "SELECT FOR UPDATE"
        kinds[kind] += 1
    return {
        "database": connection.vendor,
        "games": args.games,
        "passes": passes,
        "statements_per_move": len(statements) / args.count_moves,
        "statements_by_kind": {k: round(n / args.count_moves, 2) for k, n in kinds.most_common()},
    }


# --- the parent: databases made and dropped, figures printed --------------------------------

def run_child(args, database: str, url: str) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", database,
               "--games", str(args.games), "--moves", str(args.moves), "--repeat", str(args.repeat),
               "--warmup", str(args.warmup), "--count-moves", str(args.count_moves),
               "--seed", str(args.seed)]
    env = {**os.environ, "DATABASE_URL": url}
    done = subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, check=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def with_postgres(args) -> dict:
    import psycopg

    name = f"bench_move_path_{os.getpid()}"
    parts = urlsplit(args.postgres)
    maintenance = psycopg.connect(urlunsplit(parts._replace(scheme="postgresql")), autocommit=True)
    try:
        maintenance.execute(f'CREATE DATABASE "{name}"')
        try:
            return run_child(args, "postgresql", urlunsplit(parts._replace(path="/" + name)))
        finally:
            maintenance.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        maintenance.close()


def with_sqlite(args) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-move-path-") as folder:
        return run_child(args, "sqlite", f"sqlite:///{folder}/bench.sqlite3")


def fmt(value, digits=0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def main() -> None:
    args = arguments()
    if args.child:
        print(json.dumps(child(args)))
        return
    runs = []
    if not args.no_postgres:
        runs.append(with_postgres(args))
    if args.sqlite:
        runs.append(with_sqlite(args))
    print(f"Python {platform.python_version()} ({platform.python_implementation()}), "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"actions.play_move: {args.games} games in play, {args.moves} timed moves per pass, "
          f"µs per call")
    print(f"{'database':<11}{'pass':>5}{'cpu mean':>10}{'cpu p50':>9}{'wall mean':>11}{'wall p50':>10}"
          f"{'wall p99':>10}{'server cpu':>12}")
    for run in runs:
        for i, p in enumerate(run["passes"], start=1):
            print(f"{run['database']:<11}{i:>5}{fmt(p['cpu_us']):>10}{fmt(p['cpu_p50_us']):>9}"
                  f"{fmt(p['wall_us']):>11}{fmt(p['wall_p50_us']):>10}{fmt(p['wall_p99_us']):>10}"
                  f"{fmt(p['server_cpu_us']):>12}")
    print()
    print("median pass (by cpu mean); statements per move")
    for run in runs:
        p = sorted(run["passes"], key=lambda p: p["cpu_us"])[len(run["passes"]) // 2]
        kinds = ", ".join(f"{k} {n:g}" for k, n in run["statements_by_kind"].items())
        print(f"  {run['database']:<11} cpu {fmt(p['cpu_us'])} µs, wall {fmt(p['wall_us'])} µs, "
              f"server cpu {fmt(p['server_cpu_us'])} µs; "
              f"{run['statements_per_move']:.2f} statements ({kinds})")


if __name__ == "__main__":
    main()
