"""Whole-archive PDN downloads against live play: how long a 20,000-game file takes, and what four
of them at once do to a human game's moves on the same server process.

Run by hand from the repository root (not part of the test suite)::

    .venv/bin/python bench/pdn_download.py --database-url postgres://postgres@127.0.0.1:5432/postgres
    .venv/bin/python bench/pdn_download.py --sqlite --games 2000 --runs 2

What it does, bounded in time, on loopback only:

1. Starts a site with the helpers of ``tests/system/processes.py``: its own Redis, a fresh database
   (PostgreSQL, created and dropped; or SQLite), one Daphne process (``DJANGO_DEBUG=0``, the
   download limits per session and address off: every request comes from one address; the
   process's slots and thread as shipped), and seeds an account with ``--games`` finished games
   (``tests/system/archive_seed.py``).
2. ``--runs`` times: the file downloaded alone (``curl``), checked whole (every game, ended by its
   result); then two players (two websocket clients) play a human game on the same process,
   each move sent ``--think`` s after the last one arrived, first for ``--baseline-s`` seconds with
   nothing else, then while four downloads run at once (four ``curl`` processes, each checked
   whole).  A move's latency: from its send to the opponent's receipt of its ``move`` event.

Prints one line per run and phase (with the machine's load average before it, os.getloadavg()),
then one JSON line with every run's figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import connect  # noqa: E402

from tests.system.processes import Daphne, RedisServer, server_database, site_env  # noqa: E402
from tests.system.test_scaleout import Visitor  # noqa: E402

USERNAME = "marathon"
RESULTS = (b"1-0\n\n", b"0-1\n\n", b"1/2-1/2\n\n")


def load() -> str:
    return "load {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def percentiles(samples: list[float]) -> dict:
    """p50, p99, max and count of ``samples`` (ms), rounded."""
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"n": len(ordered), "p50": round(statistics.median(ordered), 1), "p99": round(p99, 1),
            "max": round(ordered[-1], 1)}


def curl(port: int, out: Path) -> subprocess.Popen:
    return subprocess.Popen(["curl", "-sS", "-o", str(out), "-w", "%{http_code} %{time_total}",
                             f"http://127.0.0.1:{port}/@/{USERNAME}/games.pdn"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(proc: subprocess.Popen, out: Path, games: int) -> dict:
    """The figures of a finished ``curl``: status, seconds, bytes, whole (every game, ended)."""
    stdout, stderr = proc.communicate(timeout=300)
    status, seconds = (stdout.split() + ["0", "0"])[:2]
    body = out.read_bytes() if out.exists() else b""
    return {"status": int(status), "s": round(float(seconds), 2), "bytes": len(body), "curl_exit": proc.returncode,
            "whole": body.count(b"[Event ") == games and body.endswith(RESULTS), "error": stderr.strip()[:200]}


class Players:
    """A human game between two websocket clients, moves sent as soon as the think time allows;
    a finished game is followed by a new one."""

    def __init__(self, port: int, think_s: float, rng: random.Random):
        self.port, self.think_s, self.rng = port, think_s, rng
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.recording = False

    async def play(self, until: asyncio.Event) -> None:
        while not until.is_set():
            try:
                await self.one_game(until)
            except Exception as exc:  # noqa: BLE001 - counted and printed; the next game starts
                self.errors.append(f"{type(exc).__name__}: {exc}"[:200])

    @staticmethod
    async def pinging(ws) -> None:
        """The page's keep-alive: ``ping`` every 3 s (a socket silent for 10 s is closed, 4408)."""
        while True:
            await asyncio.sleep(3)
            await ws.send('{"type": "ping"}')

    async def one_game(self, until: asyncio.Event) -> None:
        base = f"http://127.0.0.1:{self.port}"
        black, white = Visitor(base), Visitor(base)
        game_id = await asyncio.to_thread(black.create_game, "ann", "B")
        await asyncio.to_thread(white.join, game_id, "bob")
        cookies = [await asyncio.to_thread(v.cookie_header) for v in (black, white)]
        uri = f"ws://127.0.0.1:{self.port}/ws/game/{game_id}/"
        async with connect(uri, origin=base, additional_headers={"Cookie": cookies[0]}) as b, \
                connect(uri, origin=base, additional_headers={"Cookie": cookies[1]}) as w:
            sockets = {"B": b, "W": w}
            pings = [asyncio.create_task(self.pinging(ws)) for ws in sockets.values()]
            try:
                await self.moves(sockets, until)
            finally:
                for ping in pings:
                    ping.cancel()

    async def moves(self, sockets: dict, until: asyncio.Event) -> None:
        """Play the game of ``sockets`` (``{"B": ws, "W": ws}``) until it ends or ``until`` is set."""
        latest = {seat: await self.next_of(ws, "snapshot") for seat, ws in sockets.items()}
        while not until.is_set():
            current = max(latest.values(), key=lambda message: message["v"])
            if current["state"]["status"] != "active":
                return
            mover = current["state"]["turn"]
            other = "W" if mover == "B" else "B"
            move = self.rng.choice(latest[mover]["state"]["legal"])
            await asyncio.sleep(self.think_s)
            sent = time.perf_counter()
            await sockets[mover].send(json.dumps({"type": "move", "move": move, "v": current["v"]}))
            latest[other] = await self.next_of(sockets[other], "move")
            if self.recording:
                self.latencies.append((time.perf_counter() - sent) * 1000)
            latest[mover] = await self.next_of(sockets[mover], "move")

    @staticmethod
    async def next_of(ws, kind: str) -> dict:
        """The next message of type ``kind`` on ``ws`` (others passed over)."""
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if message.get("type") == kind:
                return message
            if message.get("type") == "error":
                raise RuntimeError(f"refused: {message.get('code')}")


async def measure(players: Players, seconds: float | None = None, downloads: list | None = None) -> list[float]:
    """Move latencies for ``seconds``, or until every process of ``downloads`` has ended."""
    players.latencies, players.recording = [], True
    if downloads is None:
        await asyncio.sleep(seconds or 0)
    else:
        while any(proc.poll() is None for proc, _ in downloads):
            await asyncio.sleep(0.05)
    players.recording = False
    return list(players.latencies)


async def run_once(args, port: int, players: Players, tmp: Path, index: int) -> dict:
    print(f"run {index}: {load()}", flush=True)
    alone = finished(curl(port, tmp / "alone.pdn"), tmp / "alone.pdn", args.games)
    print(f"run {index}: one download alone: {alone}", flush=True)
    quiet = await measure(players, args.baseline_s)
    print(f"run {index}: moves, nothing else ({load()}): {percentiles(quiet)}", flush=True)
    before = load()
    downloads = [(curl(port, tmp / f"d{n}.pdn"), tmp / f"d{n}.pdn") for n in range(4)]
    during = await measure(players, downloads=downloads)
    four = [finished(proc, out, args.games) for proc, out in downloads]
    print(f"run {index}: moves during 4 downloads ({before}): {percentiles(during)}", flush=True)
    print(f"run {index}: the 4 downloads: {four}", flush=True)
    errors, players.errors = players.errors, []
    if errors:
        print(f"run {index}: the players' games that failed: {errors}", flush=True)
    return {"run": index, "load_before": before, "alone": alone, "moves_quiet": percentiles(quiet),
            "moves_during_4": percentiles(during), "downloads_4": four, "player_errors": errors}


async def main_async(args, port: int, tmp: Path) -> list[dict]:
    players = Players(port, args.think, random.Random(args.seed))
    stop = asyncio.Event()
    playing = asyncio.create_task(players.play(stop))
    try:
        await asyncio.sleep(1)
        return [await run_once(args, port, players, tmp, index) for index in range(1, args.runs + 1)]
    finally:
        stop.set()
        await asyncio.wait_for(playing, 60)


def arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="a PostgreSQL server to create the bench's database in")
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of PostgreSQL")
    parser.add_argument("--games", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--think", type=float, default=0.05, help="seconds before each move")
    parser.add_argument("--baseline-s", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


def main() -> None:
    args = arguments()
    if not args.sqlite:
        os.environ["DATABASE_URL"] = args.database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pdn-bench-")))
        redis = RedisServer(tmp / "redis.log")
        redis.start()
        stack.callback(redis.stop)
        database_url = stack.enter_context(server_database(tmp))
        env = {**site_env(database_url, redis.url, tmp / "static"), "LOG_LEVEL": "WARNING",
               "PDN_RATE_LIMIT_SESSION": "", "PDN_RATE_LIMIT_ADDRESS": "", "PDN_RATE_LIMIT_ANONYMOUS": "",
               "GAME_CREATE_RATE_LIMIT_SESSION": "", "GAME_CREATE_RATE_LIMIT_ADDRESS": ""}
        seeded = subprocess.run([sys.executable, "-m", "tests.system.archive_seed", "--username", USERNAME,
                                 "--games", str(args.games)], cwd=ROOT, env=env, check=True,
                                capture_output=True, text=True, timeout=1200)
        print(f"seeded: {seeded.stdout.strip()}", flush=True)
        daphne = Daphne(tmp / "daphne.log", env)
        daphne.start()
        stack.callback(daphne.stop)
        runs = asyncio.run(main_async(args, daphne.port, tmp))
        print(json.dumps({"games": args.games, "database": "sqlite" if args.sqlite else "postgresql",
                          "cpus": os.cpu_count(), "runs": runs}))


if __name__ == "__main__":
    main()
