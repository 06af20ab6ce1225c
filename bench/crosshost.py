"""Load across hosts: the load bench's games over three hosts behind the shipped nginx routing,
while a Redis master fails over and, later, a Daphne process is killed.

Run by hand from the repository root, as root (network namespaces), not part of the test suite
(``tests/system/test_crosshost.py`` runs a short version of it as CI's own step)::

    .venv/bin/python bench/crosshost.py                       # 300 games, think 3 s, 60 s measured
    .venv/bin/python bench/crosshost.py --games 300 --think 5 --duration 120 --pretty

The site (``tests/system/hosts.py``):

- three hosts, each a Linux network namespace on a bridge of its own subnet (``10.231.<n>.0/24``);
- on every host two Daphne processes (ports 8001 and 8002 of the host's address, started as in
  production, ``checkers_site.serve --proxy-headers``), a master of the three-master Redis
  Cluster (port 7000) and the replica of the previous host's master (port 7001);
- on host 1 a private PostgreSQL server, PgBouncer in transaction pooling in front of it (the
  Daphne processes' ``DATABASE_URL``; ``migrate`` alone goes straight to PostgreSQL), and the
  plain Redis of the lobby's channel layer;
- in the root namespace, on 127.0.0.1, nginx with ``deploy/nginx/checkers.conf`` as shipped (the
  consistent hash on the game id, its rate limits, its timeouts), the six Daphne processes as
  its upstream; each response names its backend in ``X-Upstream``;
- the collected static files without their precompressed copies (:data:`COLLECT_STATIC`).

The load: ``--games`` games made and played as ``bench/load.py`` makes and plays them (its
:func:`~load.make_game` and its :class:`~load.Sock`, imported): two players and ``--spectators``
spectators a game, each game's browsers from a loopback address of their own (127.0.x.y, as
different people's: nginx's and the site's per-address limits stay as shipped), every request
and socket through nginx.  A game's sockets open as soon as its seats are taken, and its first
move comes within ``--think`` seconds (a timed game, ``--time-control``, must have its first
move within 30 s).  Moves after a think time drawn from 0.5-1.5 times ``--think``; a finished
game is followed by its rematch.  After ``--warmup`` s from the last game's start it measures for
``--duration`` s; at ``--failover-at`` s into that window the Redis master of host
``--kill-master`` gets SIGKILL (its replica, on another host, takes over), and at
``--daphne-kill-at`` s the Daphne process ``--kill-daphne`` gets SIGKILL (its sockets reconnect
through nginx to the next process on the ring).

What it prints, as JSON and as a table, per host (the host of the Daphne process that served a
socket, from ``X-Upstream``; a game killed with its process counts for the host it moved to):

- moves/s: the moves accepted in the window (the mover's own ``move`` event), and the opponent's
  latency p50/p99 (a player's send to the other player's receipt);
- events read per process against the events of its own games: the Daphne process's
  ``checkers_game_events_read_total`` (``wanted`` yes and no) over the window against its
  ``checkers_events_published_total`` and ``..._republished_total``: with routing by game a
  process publishes the events of the games it serves (their moves, rematches and audience
  notices come from their sockets, all on it), so 1.0 is one read per event of its own games, and
  ``wanted="no"`` counts what it read of games it does not serve;
- clocks paused: the games whose events an outage window held up (``game_deliveryoutage``,
  ``game/round/outages.py``), each checked against the shard of its channel's slot: every one
  must be on the failed master's shard, and no window may be stored for every game;
- moves lost or doubled, checked against the database: every move a client saw (its mover's
  acknowledgement, or any socket's event) is stored at that ply with that notation; every stored
  move is one a client sent at that ply; each game's plies are 1..n with n its ``ply``; each
  game's moves replay legally;
- false results: games ended that no player ended (nobody here resigns, offers a draw, aborts
  or claims): an ending from outside the rules (time, abort, abandon...), or one the replayed
  moves do not give;
- the machine's load average at the start and the end, and each Daphne process's CPU.

And in all: the opponent's latency before the faults, of the failed shard's games and of the
others', and the longest of each second of the window; the sockets that came back to their game
each second; the errors the Daphne processes logged; ``problems``, every expectation above that
failed (the exit status is then 1).  The JSON goes to stdout, the table to stderr.

Only 127.0.0.1 (nginx, from the clients' loopback addresses) and the hosts' own addresses
receive traffic.  Everything (processes, namespaces, the bridge, temporary folders) is removed
at the end, also when the run fails or is interrupted (SIGINT, SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402
from redis.crc import key_slot  # noqa: E402

from bench import load  # noqa: E402
from tests.system.hosts import (  # noqa: E402
    HostCluster,
    HostProcess,
    Network,
    PgBouncer,
    Postgres,
    RedisNode,
    daphne,
    hosts,
    pgbouncer_binary,
    plain_redis,
    unavailable,
)
from tests.system.processes import Nginx, site_settings  # noqa: E402

#: The ports of the two Daphne processes on every host.
DAPHNE_PORTS = (8001, 8002)
#: The key prefix of the site's Redis keys and channels (``CHANNELS_PREFIX``).
PREFIX = "asgi"
#: The bearer token the bench reads each process's ``/metrics`` with (from the bridge's address).
METRICS_TOKEN = "crosshost-bench"
#: ``manage.py collectstatic`` (the site's storage: hashed names, its manifest) without the
#: precompressed ``.gz`` and ``.br`` copies: nginx's /static/ plays no part in this load, and
#: compressing every file took most of the set-up's CPU (over 70 % of collectstatic's time).
COLLECT_STATIC = ("import django; django.setup(); "
                  "from whitenoise.storage import CompressedManifestStaticFilesStorage as Storage; "
                  "Storage.compress_files = lambda self, paths: iter(()); "
                  "from django.core.management import call_command; "
                  "call_command('collectstatic', interactive=False, verbosity=0)")
#: Endings from outside the rules: none of them is a player's here (nobody resigns, offers a
#: draw, aborts or claims), so a game that ends so ended falsely.
OUTSIDE_ENDINGS = {"resignation", "agreement", "time_forfeit", "aborted", "abandoned"}


def options(**overrides: Any) -> argparse.Namespace:
    """The bench's options with their defaults, ``overrides`` applied (the test's short run)."""
    args = parser().parse_args([])
    for name, value in overrides.items():
        if not hasattr(args, name):
            raise TypeError(f"no option {name!r}")
        setattr(args, name, value)
    return args


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=300)
    p.add_argument("--spectators", type=int, default=1, help="spectators per game")
    p.add_argument("--think", type=float, default=3.0, help="mean think time, seconds (a human pace)")
    p.add_argument("--duration", type=float, default=60.0, help="seconds measured")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds played after the last game's start")
    p.add_argument("--failover-at", type=float, default=15.0,
                   help="seconds into the window when the Redis master is killed")
    p.add_argument("--daphne-kill-at", type=float, default=40.0,
                   help="seconds into the window when the Daphne process is killed")
    p.add_argument("--kill-master", default="h3", help="the host whose Redis master is killed")
    p.add_argument("--kill-daphne", default="h2-2", help="the Daphne process killed: <host>-<1|2>")
    p.add_argument("--time-control", default="10+5")
    p.add_argument("--http-workers", type=int, default=8, help="games being made at once")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep-logs", default="", help="copy the servers' logs to this folder")
    p.add_argument("--pretty", action="store_true", help="indent the JSON")
    return p


# ---------------------------------------------------------------------------------- the site

@dataclass
class Site:
    """Every process of one run, by role; :func:`stop_site` stops whatever was started."""

    network: Network
    folder: Path
    cluster: HostCluster
    lobby: HostProcess
    postgres: Postgres | None = None
    bouncer: PgBouncer | None = None
    daphnes: dict[str, HostProcess] = field(default_factory=dict)   # "h1-1" -> process
    nginx: Nginx | None = None

    @property
    def base(self) -> str:
        assert self.nginx is not None
        return f"http://127.0.0.1:{self.nginx.port}"

    def process_name(self, upstream: str) -> str:
        """The Daphne process at ``address:port`` (the last of an ``X-Upstream`` list), or ``?``."""
        where = upstream.split(",")[-1].strip()
        for name, process in self.daphnes.items():
            if f"{process.host.address}:{process.port}" == where:
                return name
        return "?"


def start_site(site: Site) -> dict[str, float]:
    """Start everything (the slow parts side by side: the cluster; PostgreSQL, ``migrate`` and
    ``collectstatic``; the six Daphne processes).  Returns the seconds each step took.  Raises
    RuntimeError when a part fails."""
    h1 = site.network.hosts[0]
    began = time.perf_counter()
    took = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        cluster_started = pool.submit(site.cluster.start, 60)
        site.lobby.start()
        site.postgres = Postgres(h1, site.network.subnet, site.folder / "postgres.log")
        site.postgres.start()
        database = site.postgres.create_database("checkers")
        site.bouncer = PgBouncer(h1, site.postgres, site.folder / "pgbouncer.log",
                                 pool_size=20, clients=2000)
        site.bouncer.start()
        env = site_environment(site, database)
        took["database_and_static_s"] = time.perf_counter() - began
        cluster_started.result()
        took["cluster_s"] = time.perf_counter() - began
    names = [(f"{host.name}-{i + 1}", host, port) for host in site.network.hosts
             for i, port in enumerate(DAPHNE_PORTS)]
    for name, host, port in names:
        site.daphnes[name] = daphne(host, port, site.folder / f"daphne-{name}.log", env)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        for started in [pool.submit(p.start, 180) for p in site.daphnes.values()]:
            started.result()
    took["daphnes_s"] = time.perf_counter() - began
    backends: list[int | str] = [f"{p.host.address}:{p.port}" for p in site.daphnes.values()]
    site.nginx = Nginx(site.folder / "nginx.log", backends, static_root=site.folder / "static")
    site.nginx.start()
    took["nginx_s"] = time.perf_counter() - began
    return {k: round(v, 1) for k, v in took.items()}


def site_environment(site: Site, database: str) -> dict:
    """The Daphne processes' environment (through PgBouncer, on the cluster, the lobby's layer on
    host 1's plain Redis); ``migrate`` (straight to PostgreSQL) and ``collectstatic``
    (:data:`COLLECT_STATIC`) run side by side first.  Raises RuntimeError when either fails."""
    assert site.bouncer is not None
    h1 = site.network.hosts[0]
    static = site.folder / "static"
    env = {**os.environ, **site_settings(database, f"redis://{h1.address}:6379/0", static)}
    env.pop("MATCHMAKING_REDIS_URL", None)     # on the cluster, as production's default
    env.update({"REDIS_CLUSTER_URL": site.cluster.url, "CHANNELS_PREFIX": PREFIX, "LOG_LEVEL": "WARNING",
                "DJANGO_ALLOWED_HOSTS": ",".join(["127.0.0.1", *(h.address for h in site.network.hosts)]),
                "METRICS_TOKEN": METRICS_TOKEN, "PYTHONUNBUFFERED": "1"})
    commands = [[sys.executable, "manage.py", "migrate", "--noinput"], [sys.executable, "-c", COLLECT_STATIC]]
    procs = [subprocess.Popen(c, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for c in commands]
    try:
        for command, proc in zip(commands, procs, strict=True):
            output, _ = proc.communicate(timeout=600)
            if proc.returncode:
                raise RuntimeError(f"{command[1:3]} failed: {output.decode(errors='replace')[-2000:]}")
    finally:       # interrupted, or the other failed: nothing of them outlives the run
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    env["DATABASE_URL"] = site.bouncer.url("checkers")
    return env


def stop_site(site: Site) -> None:
    """Stop every process started: the Daphne processes and nginx side by side, then the servers
    they use (so that no Daphne process logs its database or Redis going away); the namespaces'
    removal kills whatever would be left."""
    fronts: list[Any] = [*site.daphnes.values(), site.nginx]
    servers: list[Any] = [*site.cluster.nodes, site.lobby, site.bouncer, site.postgres]
    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        for group in (fronts, servers):
            for stopped in [pool.submit(p.stop) for p in group if p is not None]:
                try:
                    stopped.result()
                except OSError as exc:
                    print(f"stopping: {exc}", file=sys.stderr)


def server_errors(folder: Path) -> dict[str, int]:
    """The errors the Daphne processes logged (their JSON lines at ERROR or above), counted by
    logger, message and the last line of the traceback."""
    found: dict[str, int] = defaultdict(int)
    for log in sorted(folder.glob("daphne-*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if not line.startswith("{") or ('"ERROR"' not in line and '"CRITICAL"' not in line):
                continue
            entry = json.loads(line)
            if entry.get("level") not in ("ERROR", "CRITICAL"):
                continue
            cause = (entry.get("exc_info") or "").strip().splitlines()[-1:] or [""]
            found[f"{entry.get('logger')}: {entry.get('message')} {cause[0]}".strip()] += 1
    return dict(found)


# ---------------------------------------------------------------------------------- the clients

class Tally:
    """What the clients saw, by Daphne process (``h1-1``...): moves accepted and opponent
    latencies in the window; by game: its process, the moves sent, seen and acknowledged."""

    def __init__(self, site: Site):
        self.site = site
        self.moves: dict[str, int] = defaultdict(int)
        self.moving: dict[str, set[str]] = defaultdict(set)    # the games that moved in the window
        self.opponent: dict[str, list[float]] = defaultdict(list)
        self.opponent_by_game: dict[str, list[tuple[float, float]]] = defaultdict(list)   # (sent at, s)
        self.game_process: dict[str, str] = {}                 # each game's process now
        self.served: dict[str, set[str]] = defaultdict(set)    # every game a process has served
        self.sent: dict[tuple[str, int], set[str]] = defaultdict(set)
        self.seen: dict[tuple[str, int], set[str]] = defaultdict(set)
        self.acked: set[tuple[str, int]] = set()
        self.sockets: list[HostSock] = []
        #: id(socket) -> each of its connections: when it opened (perf_counter), its game, its process.
        self.connections: dict[int, list[tuple[float, str, str]]] = defaultdict(list)


class HostSock(load.Sock):
    """:class:`load.Sock` from a client address of its own, telling :class:`Tally` which
    process served it (``X-Upstream``), what it sent, saw and was acknowledged."""

    def __init__(self, run: load.Run, index: int, game_id: str, role: str, cookie: str, address: str,
                 tally: Tally):
        super().__init__(run, index, game_id, role, cookie)
        self.local_addr = address
        self.tally = tally
        self.process = "?"
        self._connection: object = None
        tally.sockets.append(self)

    def on_frame(self, frame: str) -> None:
        tally, stats = self.tally, self.run.stats
        if self.ws is not self._connection:          # a new connection: which process has it
            self._connection = self.ws
            self.process = tally.site.process_name(self.ws.response.headers.get("X-Upstream", ""))
            tally.game_process[self.game_id] = self.process
            tally.served[self.process].add(self.game_id)
            tally.connections[id(self)].append((time.perf_counter(), self.game_id, self.process))
        game_id, role = self.game_id, self.role
        accepted, heard = stats.accepted, len(stats.opponent)
        super().on_frame(frame)
        if stats.accepted > accepted:
            tally.moves[self.process] += stats.accepted - accepted
            tally.moving[self.process].add(game_id)
        if len(stats.opponent) > heard:
            tally.opponent[self.process].extend(stats.opponent[heard:])
            tally.opponent_by_game[game_id].extend(zip(stats.opponent_at[heard:], stats.opponent[heard:],
                                                       strict=True))
        if '"move"' in frame:
            message = json.loads(frame)
            if message.get("type") == "move":
                key = (game_id, message["ply"])
                tally.seen[key].add(message["move"])
                if role == ("B" if message["state"]["turn"] == "W" else "W"):
                    tally.acked.add(key)

    def send(self, message: dict) -> None:
        if message.get("type") == "move" and self.state is not None:
            self.tally.sent[(self.game_id, self.state["ply"] + 1)].add(message["move"])
        super().send(message)


def address_of(index: int) -> str:
    """Game ``index``'s browsers' client address: 127.0.1.2, 127.0.1.3, ... (one per game)."""
    return f"127.0.{1 + index // 250}.{2 + index % 250}"


async def start_games(args, site: Site, run: load.Run, tally: Tally) -> tuple[list[asyncio.Task], dict]:
    """Make every game through the pages (``args.http_workers`` at a time) and open its sockets as
    soon as its seats are taken; returns the sockets' tasks and the setup's figures."""
    loop = asyncio.get_running_loop()
    tasks: list[asyncio.Task] = []
    began = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.http_workers) as pool:
        async def one(index: int) -> None:
            address = address_of(index)
            game = await loop.run_in_executor(pool, load.make_game, [site.base], index, args.spectators,
                                              args.time_control, address)
            seats = [("B", game["B"]), ("W", game["W"]), *(("S", c) for c in game["S"])]
            for k, (role, cookie) in enumerate(seats):
                sock = HostSock(run, index * len(seats) + k, game["id"], role, cookie, address, tally)
                tasks.append(asyncio.create_task(sock.main()))

        await asyncio.gather(*(one(i) for i in range(args.games)))
    return tasks, {"games_made_s": round(time.perf_counter() - began, 1),
                   "setup_server_errors": dict(load.SETUP_FAILURES)}


# ---------------------------------------------------------------------------------- faults

def scrape(process: HostProcess) -> dict[str, float]:
    """The counters (``*_total``) of one Daphne process's ``/metrics``, by name and labels."""
    request = urllib.request.Request(f"http://{process.host.address}:{process.port}/metrics",
                                     headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    text = urllib.request.urlopen(request, timeout=10).read().decode()
    return {name + labels: float(value) for name, labels, value
            in re.findall(r"^(checkers_[a-z_]+_total)(\{[^}]*\})? (\S+)$", text, re.M)}


def shard_slots(master: RedisNode) -> list[tuple[int, int]]:
    """The slot ranges ``master`` serves now."""
    ranges = []
    for start, end, owner, *_ in master.client().execute_command("CLUSTER", "SLOTS"):
        if f"{owner[0].decode()}:{int(owner[1])}" == master.where:
            ranges.append((int(start), int(end)))
    return ranges


def key_in(ranges: list[tuple[int, int]]) -> str:
    """A key whose slot is in ``ranges``."""
    return next(f"probe{i}" for i in range(10**6)
                if any(a <= key_slot(f"probe{i}".encode()) <= b for a, b in ranges))


async def faults(args, site: Site, tally: Tally, window_start: float, record: dict) -> None:
    """At ``args.failover_at`` s into the window, SIGKILL the Redis master of ``args.kill_master``
    and time the replica's takeover; at ``args.daphne_kill_at`` s, read the last metrics of the
    Daphne process ``args.kill_daphne`` and SIGKILL it.  ``record`` gets what happened when."""
    master = next(m for m in site.cluster.masters if m.host.name == args.kill_master)
    await asyncio.sleep(max(0.0, window_start + args.failover_at - time.perf_counter()))
    slots = await asyncio.to_thread(shard_slots, master)
    heir = await asyncio.to_thread(site.cluster.replica_of, master)
    record["failover"] = {"master": master.where, "host": master.host.name, "slots": slots,
                          "heir": heir.where, "heir_host": heir.host.name,
                          "at_s": round(time.perf_counter() - window_start, 2),
                          "games_by_process": dict(tally.game_process)}
    killed = time.perf_counter()
    master.kill()
    new = await asyncio.to_thread(site.cluster.wait_for_failover, key_in(slots), master, 60)
    record["failover"].update(served_again_after_s=round(time.perf_counter() - killed, 2), new_master=new.where)

    victim = site.daphnes[args.kill_daphne]
    await asyncio.sleep(max(0.0, window_start + args.daphne_kill_at - time.perf_counter()))
    record["daphne_last_metrics"] = await asyncio.to_thread(scrape, victim)
    sockets = [id(s) for s in tally.sockets if s.process == args.kill_daphne]
    killed_at = time.perf_counter()
    victim.kill()
    record["daphne_kill"] = {"process": args.kill_daphne, "at_s": round(time.perf_counter() - window_start, 2),
                             "sockets": len(sockets), "killed_at": killed_at, "socket_ids": sockets}


# ---------------------------------------------------------------------------------- the run

async def play(args, site: Site) -> dict:
    """Make and play the games, measure the window with its faults, then close every socket.
    Returns the run (:class:`load.Run`), the :class:`Tally`, the setup's figures and the window's
    (:func:`measure`)."""
    load.raise_fd_limit()
    client = SimpleNamespace(think=args.think, ping=3.0, connect_concurrency=500, seed=args.seed, route="game",
                             idle=False)
    assert site.nginx is not None
    run = load.Run(client, [site.nginx.port], relay=False)
    run.started.set()          # each socket plays from its snapshot on: its game has just started
    tally = Tally(site)
    tasks, setup = await start_games(args, site, run, tally)
    await asyncio.sleep(args.warmup)
    window = await measure(args, site, run, tally)
    await asyncio.sleep(min(2.0, args.think * 1.5 + 1.0))    # the window's last receipts
    run.stopping = True
    for task in tasks:
        task.cancel()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
    return {"run": run, "tally": tally, "setup": setup, **window}


async def measure(args, site: Site, run: load.Run, tally: Tally) -> dict:
    """The measured window, with :func:`faults` in it: its wall time, the load average, each
    process's CPU seconds and counters at its start and end (the killed process's last ones
    before it was killed), and the faults' record."""
    start = time.perf_counter()
    run.stats.window = (start, start + args.duration)
    pids = {name: p.proc.pid for name, p in site.daphnes.items() if p.proc is not None}
    meter = load.Meter(list(pids.values()))
    cpu0 = meter.cpu()
    before = {name: await asyncio.to_thread(scrape, p) for name, p in site.daphnes.items()}
    loads = {"window_start": [round(x, 2) for x in os.getloadavg()]}
    record: dict = {}
    await faults(args, site, tally, start, record)
    await asyncio.sleep(max(0.0, start + args.duration - time.perf_counter()))
    wall = time.perf_counter() - start
    cpu1 = meter.cpu()
    after = {name: await asyncio.to_thread(scrape, p) for name, p in site.daphnes.items() if p.alive()}
    after[args.kill_daphne] = record.pop("daphne_last_metrics")
    loads["window_end"] = [round(x, 2) for x in os.getloadavg()]
    cpu = {name: round(100 * (cpu1[pid] - cpu0[pid]) / wall, 1) if pid in cpu1 and pid in cpu0 else None
           for name, pid in pids.items()}
    return {"wall": wall, "window_start": start, "loads": loads, "record": record, "metrics": (before, after),
            "cpu_pct": cpu}


def database_checks(site: Site, tally: Tally) -> dict:
    """Every move the clients saw against the database, every stored move against what they sent,
    each game's plies and ending, and the stored outage windows.  Returns, by game id, the moves
    ``lost`` and ``doubled`` and the ``false`` endings (lists of texts), the ``windows``, and what
    was ``counted`` (moves seen, acknowledged, sent at a ply, stored; games, ended)."""
    from game import rules

    assert site.postgres is not None
    with psycopg.connect(site.postgres.url("checkers")) as conn:
        stored = {(g, p): n for g, p, n in conn.execute("SELECT game_id, ply, notation FROM game_move")}
        twice = conn.execute("SELECT game_id, ply FROM game_move GROUP BY game_id, ply HAVING count(*) > 1").fetchall()
        games = conn.execute("SELECT id, status, termination, ply, start_fen FROM game_game").fetchall()
        windows = conn.execute("SELECT started_at, seen_at, ended_at, games FROM game_deliveryoutage").fetchall()
    lost: dict[str, list[str]] = defaultdict(list)
    doubled: dict[str, list[str]] = defaultdict(list)
    false: dict[str, list[str]] = defaultdict(list)
    for (game_id, ply), notations in tally.seen.items():
        if stored.get((game_id, ply)) not in notations:
            acked = "acknowledged" if (game_id, ply) in tally.acked else "seen"
            lost[game_id].append(f"ply {ply} {acked} as {sorted(notations)}, stored {stored.get((game_id, ply))}")
    for (game_id, ply), notation in stored.items():
        if notation not in tally.sent.get((game_id, ply), ()):
            doubled[game_id].append(f"ply {ply} {notation} stored, not sent at that ply")
    for game_id, ply in twice:
        doubled[game_id].append(f"ply {ply} stored more than once")
    plies: dict[str, list[int]] = defaultdict(list)
    for game_id, ply in stored:
        plies[game_id].append(ply)
    for game_id, status, termination, ply, start_fen in games:
        found = sorted(plies.get(game_id, []))
        if found != list(range(1, ply + 1)):      # a gap is a move lost, one too many a move doubled
            missing = sorted(set(range(1, ply + 1)) - set(found))
            (lost if missing else doubled)[game_id].append(
                f"plies stored {found[:3]}...{found[-3:]} ({len(found)}), the game's ply {ply}")
            continue
        try:
            replay = rules.Game.from_moves([stored[(game_id, p)] for p in found], start_fen or None)
        except ValueError as exc:      # rules.RulesError among them
            doubled[game_id].append(f"the stored moves do not replay: {exc}")
            continue
        if status in ("finished", "aborted"):
            decided = replay.outcome.termination.value if replay.outcome else None
            if termination in OUTSIDE_ENDINGS or termination != decided:
                false[game_id].append(f"{status} by {termination or '-'} at ply {ply}; the moves give {decided}")
    return {"lost": dict(lost), "doubled": dict(doubled), "false": dict(false), "windows": windows,
            "counted": {"moves_seen": len(tally.seen), "moves_acknowledged": len(tally.acked),
                        "moves_sent": len(tally.sent), "moves_stored": len(stored), "games": len(games),
                        "games_ended": sum(status in ("finished", "aborted") for _, status, *_ in games)}}


def on_shard(game_id: str, slots: list[tuple[int, int]]) -> bool:
    """Whether game ``game_id``'s channel hashes into ``slots``."""
    slot = key_slot(f"{PREFIX}:game:{game_id}".encode())
    return any(a <= slot <= b for a, b in slots)


def pauses(checks: dict, failover: dict) -> dict:
    """The games the stored outage windows paused, against the failed shard: by game, whether it
    is that shard's; the windows stored for every game; the longest window (s)."""
    paused: set[str] = set()
    every = 0
    longest = 0.0
    for started, seen, ended, games in checks["windows"]:
        every += not games.strip()
        paused.update(games.split())
        longest = max(longest, ((ended or seen) - started).total_seconds())
    return {"games": {g: on_shard(g, failover["slots"]) for g in paused}, "every_game_windows": every,
            "windows": len(checks["windows"]), "longest_s": round(longest, 2)}


# ---------------------------------------------------------------------------------- the figures

def process_events(before: dict, after: dict) -> dict:
    """One process's counters over the window: events read (wanted and not), events published
    (first time and again), the ratio of reads to its own games' events, moves it accepted."""
    def delta(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    read = delta('checkers_game_events_read_total{wanted="yes"}')
    unwanted = delta('checkers_game_events_read_total{wanted="no"}')
    published = delta("checkers_events_published_total") + delta("checkers_events_republished_total")
    return {"read": int(read), "unwanted": int(unwanted), "own_published": int(published),
            "ratio": round((read + unwanted) / published, 3) if published else None,
            "moves_accepted": int(delta("checkers_moves_accepted_total")),
            "publish_failed": int(delta('checkers_event_publish_failures_total{when="first"}')),
            "resyncs": int(delta("checkers_resyncs_total"))}


def by_host(args, site: Site, played: dict, checks: dict, paused: dict) -> dict:
    """The per-host figures (see the module's text)."""
    tally: Tally = played["tally"]
    before, after = played["metrics"]
    at_failover = played["record"]["failover"]["games_by_process"]
    wall = played["wall"]
    first_fault = played["window_start"] + args.failover_at
    out = {}
    for host in site.network.hosts:
        names = [n for n in site.daphnes if n.startswith(host.name + "-")]
        events = [process_events(before[n], after[n]) for n in names]
        read = sum(e["read"] + e["unwanted"] for e in events)
        published = sum(e["own_published"] for e in events)
        games = set().union(*(tally.served[n] for n in names))
        last = {g for g, n in tally.game_process.items() if n in names}
        then = {g for g, n in at_failover.items() if n in names}
        moves = sum(tally.moves[n] for n in names)
        out[host.name] = {
            "processes": {n: {**process_events(before[n], after[n]), "cpu_pct": played["cpu_pct"].get(n)}
                          for n in names},
            "games": len(games),
            "games_with_moves": len(set().union(*(tally.moving[n] for n in names))),
            "moves": moves, "moves_per_s": round(moves / wall, 2),
            "opponent_ms": load.percentiles([x for n in names for x in tally.opponent[n]]),
            "opponent_ms_before_faults": load.percentiles([x for g in games if at_failover.get(g) in names
                                                           for sent, x in tally.opponent_by_game[g]
                                                           if sent < first_fault]),
            "events_read": read, "events_own": published,
            "events_ratio": round(read / published, 3) if published else None,
            "events_unwanted": sum(e["unwanted"] for e in events),
            "failed_shard_games": sum(on_shard(g, played["record"]["failover"]["slots"]) for g in then),
            "paused_games": sum(g in paused["games"] for g in then),
            "paused_other_shard_games": sum(g in paused["games"] and not paused["games"][g] for g in then),
            "lost": sum(len(checks["lost"].get(g, ())) for g in last),
            "doubled": sum(len(checks["doubled"].get(g, ())) for g in last),
            "false_results": sum(len(checks["false"].get(g, ())) for g in last),
        }
    return out


def summarize(args, site: Site, played: dict, checks: dict, loads: dict, setup_s: float) -> dict:
    """The run's JSON: parameters, load averages, per host, totals, the faults, and ``problems``:
    every expectation that failed (moves lost or doubled, false results, a pause outside the
    failed shard or for every game, a host whose games did not move)."""
    run: load.Run = played["run"]
    st = run.stats
    paused = pauses(checks, played["record"]["failover"])
    hosts_out = by_host(args, site, played, checks, paused)
    kill = played["record"]["daphne_kill"]
    connections = played["tally"].connections
    back = [min((at for at, *_ in connections[s] if at > kill["killed_at"]), default=kill["killed_at"])
            - kill["killed_at"] for s in kill["socket_ids"]]
    slots = played["record"]["failover"]["slots"]
    by_game = played["tally"].opponent_by_game
    totals = {
        "moves": st.accepted, "moves_per_s": round(st.accepted / played["wall"], 2),
        "opponent_ms": load.percentiles(st.opponent), "spectator_ms": load.percentiles(st.spectator),
        "opponent_ms_before_faults": load.percentiles([x for xs in by_game.values() for sent, x in xs
                                                       if sent < played["window_start"] + args.failover_at]),
        "opponent_ms_failed_shard": load.percentiles([x for g, xs in by_game.items()
                                                      if on_shard(g, slots) for _, x in xs]),
        "opponent_ms_other_shards": load.percentiles([x for g, xs in by_game.items()
                                                      if not on_shard(g, slots) for _, x in xs]),
        "opponent_max_ms_by_second": timeline(by_game, slots, played["window_start"], played["wall"]),
        "games_with_moves": len(st.moving), "errors_by_code": st.errors, "refused_by_code": st.refused,
        "reconnects": st.reconnects,
        "reconnects_by_second": reconnections(connections, played["window_start"], played["wall"]),
        "lost": sum(map(len, checks["lost"].values())), "doubled": sum(map(len, checks["doubled"].values())),
        "false_results": sum(map(len, checks["false"].values())),
        "paused_games": len(paused["games"]),
        "paused_other_shard_games": sum(not mine for mine in paused["games"].values()),
        "outage_windows": paused["windows"], "every_game_windows": paused["every_game_windows"],
        "longest_window_s": paused["longest_s"], **checks["counted"],
    }
    problems = [f"{totals[k]} {k.replace('_', ' ')}" for k in
                ("lost", "doubled", "false_results", "paused_other_shard_games", "every_game_windows") if totals[k]]
    problems += [f"no move on {h}'s processes" for h, figures in hosts_out.items() if not figures["moves"]]
    failover = {k: v for k, v in played["record"]["failover"].items() if k != "games_by_process"}
    return {
        "params": {k: v for k, v in vars(args).items() if k not in ("pretty", "keep_logs")},
        "load_average": loads | played["loads"], "setup_s": round(setup_s, 1), **played["setup"],
        "window_s": round(played["wall"], 1), "hosts": hosts_out, "totals": totals,
        "failover": failover,
        "daphne_kill": {"process": kill["process"], "at_s": kill["at_s"], "sockets": kill["sockets"],
                        "all_back_after_s": round(max(back), 2) if back and min(back) > 0 else None},
        "details": {"lost": checks["lost"], "doubled": checks["doubled"], "false_results": checks["false"]},
        "problems": problems,
    }


def reconnections(connections: dict[int, list[tuple[float, str, str]]], start: float,
                  wall: float) -> dict[str, list[int]]:
    """The sockets that connected again to the same game (a dropped socket's return, not a
    rematch's move), in each second of the window, by the process they had left."""
    out: dict[str, list[int]] = {}
    for opened in connections.values():
        for (_, game, left), (at, again, _) in itertools.pairwise(opened):
            second = int(at - start)
            if again == game and 0 <= second < int(wall):
                out.setdefault(left, [0] * int(wall))[second] += 1
    return dict(sorted(out.items()))


def timeline(by_game: dict[str, list[tuple[float, float]]], slots: list[tuple[int, int]], start: float,
             wall: float) -> dict[str, list[float | None]]:
    """The longest opponent latency (ms) of the moves sent in each second of the window, for
    the failed shard's games and for the others' (None: no move sent that second)."""
    out: dict[str, list[float | None]] = {"failed_shard": [None] * int(wall), "other_shards": [None] * int(wall)}
    for game_id, samples in by_game.items():
        series = out["failed_shard" if on_shard(game_id, slots) else "other_shards"]
        for sent_at, latency in samples:
            second = int(sent_at - start)
            if 0 <= second < len(series):
                series[second] = max(series[second] or 0.0, round(latency * 1000))
    return out


def table(result: dict) -> str:
    """``result`` as a readable table: one line a host, then the processes, totals and faults."""
    def ms(figures: dict) -> str:
        return f"{figures.get('p50', '-')} / {figures.get('p99', '-')}"

    lines = [f"load average (1, 5, 15 min): start {result['load_average']['start']}, "
             f"end {result['load_average']['end']}",
             f"{'host':5} {'games':>5} {'moved':>5} {'moves':>6} {'moves/s':>8} {'opp p50/p99 ms':>16} "
             f"{'before faults':>14} "
             f"{'read/own':>12} {'ratio':>6} {'unwanted':>8} {'paused':>14} {'lost':>4} {'doubled':>7} {'false':>5}"]
    for name, h in result["hosts"].items():
        paused = f"{h['paused_games']}/{h['failed_shard_games']} +{h['paused_other_shard_games']}"
        lines.append(f"{name:5} {h['games']:>5} {h['games_with_moves']:>5} {h['moves']:>6} {h['moves_per_s']:>8} "
                     f"{ms(h['opponent_ms']):>16} {ms(h['opponent_ms_before_faults']):>14} "
                     f"{h['events_read']:>5}/{h['events_own']:<6} "
                     f"{h['events_ratio'] if h['events_ratio'] is not None else '-':>6} {h['events_unwanted']:>8} "
                     f"{paused:>14} {h['lost']:>4} {h['doubled']:>7} {h['false_results']:>5}")
    lines.append("(paused: games of the host paused / its games on the failed shard, + paused on other shards)")
    for h in result["hosts"].values():
        for name, p in h["processes"].items():
            lines.append(f"  {name}: read {p['read']} + unwanted {p['unwanted']} / own {p['own_published']} "
                         f"= {p['ratio']}; moves accepted {p['moves_accepted']}; first publishes failed "
                         f"{p['publish_failed']}; resyncs {p['resyncs']}; CPU {p['cpu_pct']} %")
    t, f, k = result["totals"], result["failover"], result["daphne_kill"]
    lines += [f"total: {t['moves']} moves, {t['moves_per_s']} moves/s, opponent p50/p99 {ms(t['opponent_ms'])} ms, "
              f"lost {t['lost']}, doubled {t['doubled']}, false results {t['false_results']}, "
              f"reconnects {t['reconnects']}, errors {t['errors_by_code']}",
              f"opponent p50/p99 ms: before the faults {ms(t['opponent_ms_before_faults'])}; "
              f"the failed shard's games {ms(t['opponent_ms_failed_shard'])}, "
              f"the other shards' {ms(t['opponent_ms_other_shards'])}; the longest each second of the window:",
              f"  failed shard: {t['opponent_max_ms_by_second']['failed_shard']}",
              f"  other shards: {t['opponent_max_ms_by_second']['other_shards']}",
              "sockets back on their game, by the process they left: " + ("; ".join(
                  f"{name} " + ", ".join(f"{n} at {s} s" for s, n in enumerate(counts) if n)
                  for name, counts in t["reconnects_by_second"].items()) or "none"),
              f"checked: {t['moves_seen']} moves seen ({t['moves_acknowledged']} acknowledged to their mover), "
              f"{t['moves_stored']} stored, {t['games']} games ({t['games_ended']} ended)",
              f"failover: master {f['master']} ({f['host']}) killed at {f['at_s']} s, its replica {f['heir']} "
              f"({f['heir_host']}) served after {f['served_again_after_s']} s; {t['paused_games']} games paused "
              f"in {t['outage_windows']} windows (longest {t['longest_window_s']} s)",
              f"daphne kill: {k['process']} at {k['at_s']} s, its {k['sockets']} sockets all back after "
              f"{k['all_back_after_s']} s",
              f"wall {result.get('wall_s')} s: setup {result['setup_s']} s {result.get('setup_steps_s')}, "
              f"games made in {result['games_made_s']} s, window {result['window_s']} s, "
              f"stopped in {result.get('stop_s')} s",
              "server errors logged: " + ("; ".join(f"{n} x {e}" for e, n in result.get("server_errors", {}).items())
                                          or "none"),
              "problems: " + ("; ".join(result["problems"]) or "none")]
    return "\n".join(lines)


def check(args) -> None:
    """Refuse a run that cannot be made here or whose faults do not fit its window (SystemExit)."""
    why = unavailable() or ("" if pgbouncer_binary() else "PgBouncer is not installed (`apt-get install pgbouncer`)")
    if why:
        raise SystemExit(f"cannot run: {why}")
    if not 0 < args.failover_at < args.daphne_kill_at < args.duration:
        raise SystemExit("the failover, then the Daphne kill, must both come inside the window")
    names = {f"h{i}-{j}" for i in (1, 2, 3) for j in (1, 2)}
    if args.kill_daphne not in names or args.kill_master not in ("h1", "h2", "h3"):
        raise SystemExit(f"--kill-daphne is one of {sorted(names)}, --kill-master one of h1, h2, h3")


def run(args) -> dict:
    """The whole run (see the module's text): the site up, the games played with the faults, the
    checks, everything stopped and removed whatever happens.  Returns :func:`summarize`'s JSON."""
    check(args)
    loads = {"start": [round(x, 2) for x in os.getloadavg()]}
    began = time.perf_counter()
    failed = True
    with tempfile.TemporaryDirectory(prefix="checkers-crosshost-") as tmp, hosts(3) as network:
        folder = Path(tmp)
        site = Site(network, folder, HostCluster(network.hosts, folder / "cluster"),
                    plain_redis(network.hosts[0], 6379, folder))
        try:
            phases = start_site(site)
            setup_s = time.perf_counter() - began
            played = asyncio.run(play(args, site))
            checks = database_checks(site, played["tally"])
            failed = False
        finally:
            stopping = time.perf_counter()
            stop_site(site)
            errors = server_errors(folder)
            if failed or args.keep_logs:
                load.show_logs(folder, args.keep_logs)
    loads["end"] = [round(x, 2) for x in os.getloadavg()]
    result = summarize(args, site, played, checks, loads, setup_s)
    result["setup_steps_s"] = phases
    result["server_errors"] = errors
    result["stop_s"] = round(time.perf_counter() - stopping, 1)
    result["wall_s"] = round(time.perf_counter() - began, 1)
    return result


def interrupted(signum: int, frame: object) -> None:
    """SIGTERM ends the run as Ctrl-C does: through every clean-up."""
    raise KeyboardInterrupt


def main() -> None:
    """The JSON on stdout, the table on stderr; exit status 1 when a problem was found."""
    args = parser().parse_args()
    signal.signal(signal.SIGTERM, interrupted)
    result = run(args)
    print(json.dumps(result, indent=2 if args.pretty else None, default=str))
    print(table(result), file=sys.stderr)
    raise SystemExit(1 if result["problems"] else 0)


if __name__ == "__main__":
    main()
