"""Abuse: what one flooding client does to an honest game, measured on the real site.

Run by hand from the repository root (not part of the test suite)::

    .venv/bin/python bench/abuse.py
    .venv/bin/python bench/abuse.py --floods sockets analysis --phase-s 30

It starts the site as ``bench/load.py`` does (its own Redis, a fresh PostgreSQL database,
``--daphnes`` Daphne processes; the site's own rate limits, none raised), then:

1. **The honest side.**  ``--honest-games`` games (1) created through the pages, each with two
   players and a spectator playing over websockets exactly as ``bench/load.py`` plays (a random
   legal move after a think time of 0.5-1.5 times ``--think``, 1 s).  They connect from 127.0.0.2,
   another client address than the attacker's.  Measured: the time from a player's send to the
   opponent's (and the spectator's) receipt of the ``move`` event, for moves sent in each phase.
   Beside them a **computer probe** (from 127.0.0.3) plays the computer at level 1 (``POST
   /computer``) and times each of its replies: from the probe's move to the computer's.
2. **The attacker**: ONE client (a process of its own, as another machine would be, so that its
   handshakes and threads do not slow the honest clients' own measuring; ``--attacker-in-client``
   runs it beside them as before), one session cookie, one address (127.0.0.1), which in turn, for
   ``--phase-s`` seconds each (``--floods``, all by default):

   - ``sockets``: opens ``--flood-sockets`` (300) game sockets on the first honest game and sends
     ``{"type": "sync"}`` from each ``--sync-rate`` (25) times a second;
   - ``sync``: the same from many throwaway sessions of the one address: ``--sync-sessions``
     (120) new sessions (each a ``GET /`` for its cookie), ``--sync-sockets`` (2) game sockets
     each on the first honest game, each sending ``{"type": "sync"}`` ``--sync-rate`` times a
     second (the per-session limits do not see it: each session stays within them);
   - ``analysis``: ``--analysis-concurrency`` (20) requests at a time of ``POST /analysis/search``
     (``{"fen": the start, "time_ms": 3000}``, CSRF token from the analysis page's cookie in
     ``X-CSRFToken``), each sent again as soon as it is answered;
   - ``lobby``: a burst of ``--lobby-sockets`` (2,000) lobby sockets (``/ws/lobby/``), each
     sending a ``seek`` once it is open, held to the end of the phase;
   - ``create``: ``--create-concurrency`` (8) new-game form posts (``POST /``) at a time.

   The attacker's outcome counts what it opened or sent and what was refused, and how: HTTP
   statuses of refused handshakes and requests, close codes of sockets the server closed, error
   codes of the frames it was sent.

A quiet phase comes first and another last (the recovery); a few quiet seconds separate the phases.
Prints one JSON line: per phase the honest figures, the computer's reply times, the attacker's
outcome, the Daphne processes' CPU and the load average at the start and end of the phase; and
``summary``, the honest opponent p50/p99/max of every phase beside the quiet one.

Only loopback is ever contacted; every flood stops at its phase's end and the run has a time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, suppress
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

HONEST_ADDR = "127.0.0.2"
PROBE_ADDR = "127.0.0.3"
ATTACKER_ADDR = "127.0.0.1"
START_FEN = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
FLOODS = ("sockets", "sync", "analysis", "lobby", "create")
GRACE_S = 3.0           # receipts of the phase's last moves are still counted this long after it
CLOSE_LIMIT_S = 60


class Outcome:
    """What the attacker got in one flood."""

    def __init__(self):
        self.counts: dict[str, int] = {}
        self.refused: dict[str, int] = {}
        self.server_closed: dict[str, int] = {}
        self.frames: dict[str, int] = {}
        self.lock = threading.Lock()
        self.latencies: list[float] = []

    def add(self, table: dict, key: str, n: int = 1) -> None:
        with self.lock:
            table[key] = table.get(key, 0) + n

    def as_dict(self) -> dict:
        out = {**self.counts, "refused": sum(self.refused.values()), "refused_by": self.refused,
               "closed_by_server": self.server_closed, "frames_by_type": self.frames}
        if self.latencies:
            out["answer_ms"] = load.percentiles(self.latencies)
        return out


def frame_kind(frame: str | bytes) -> str:
    try:
        message = json.loads(frame)
    except ValueError:
        return "unparsed"
    kind = message.get("type", "?")
    return f"error:{message.get('code')}" if kind == "error" else kind


def ws_kwargs(port: int, cookie: str, source: str) -> dict:
    return {"origin": f"http://127.0.0.1:{port}", "additional_headers": {"Cookie": cookie},
            "open_timeout": 10, "close_timeout": 2, "max_size": 2**22, "compression": None,
            "ping_interval": None, "local_addr": (source, 0)}


async def hold_socket(uri: str, port: int, cookie: str, out: Outcome, deadline: float,
                      first: str | None, every: float, message: str | None, gate: asyncio.Semaphore) -> None:
    """One attacker socket: open it, send ``first``, then ``message`` every ``every`` s until
    ``deadline``; count its frames and how it ended."""
    try:
        async with gate:
            ws = await connect(uri, **ws_kwargs(port, cookie, ATTACKER_ADDR))
    except InvalidStatus as exc:
        out.add(out.refused, f"http {exc.response.status_code}")
        return
    except (TimeoutError, OSError, WebSocketException) as exc:
        out.add(out.refused, type(exc).__name__)
        return
    out.add(out.counts, "opened")

    async def read() -> None:
        async for frame in ws:
            out.add(out.frames, frame_kind(frame))

    reader = asyncio.create_task(read())
    try:
        if first is not None:
            await ws.send(first)
            out.add(out.counts, "sent")
        if message is not None:
            await asyncio.sleep(random.uniform(0, every))
        while time.perf_counter() < deadline and not reader.done():
            if message is None:
                await asyncio.wait({reader}, timeout=max(0.0, deadline - time.perf_counter()))
                break
            await asyncio.wait_for(ws.send(message), max(0.1, deadline - time.perf_counter()))
            out.add(out.counts, "sent")
            await asyncio.sleep(every)
    except (TimeoutError, ConnectionClosed, OSError):
        pass
    finally:
        if reader.done():                      # the server ended it before the phase did
            code = ws.close_code
            out.add(out.server_closed, f"{code} {ws.close_reason or ''}".strip() if code else "no close frame")
        reader.cancel()
        with suppress(Exception):
            await asyncio.wait_for(ws.close(), 5)


async def flood_sockets(args, ports, cookie, game_id, deadline, out: Outcome) -> None:
    gate = asyncio.Semaphore(100)
    sync = json.dumps({"type": "sync"})
    await asyncio.gather(*(hold_socket(f"ws://127.0.0.1:{ports[i % len(ports)]}/ws/game/{game_id}/",
                                       ports[i % len(ports)], cookie, out, deadline, None,
                                       1 / args.sync_rate, sync, gate)
                           for i in range(args.flood_sockets)))


async def flood_sync(args, ports, base, game_id, deadline, out: Outcome) -> None:
    """Many sessions of one address, a few sockets each, every socket sending ``sync``."""
    def new_session(_i: int) -> str | None:
        for _attempt in range(3):
            visitor = load.Visitor(base, ATTACKER_ADDR)
            try:
                visitor.get("/")
                return visitor.cookie()
            except (OSError, urllib.error.HTTPError) as exc:
                out.add(out.refused, f"session: {getattr(exc, 'code', type(exc).__name__)}")
        return None

    with ThreadPoolExecutor(4) as pool:
        made = await asyncio.get_running_loop().run_in_executor(
            None, lambda: list(pool.map(new_session, range(args.sync_sessions))))
    cookies = [cookie for cookie in made if cookie]
    out.add(out.counts, "sessions", len(cookies))
    gate = asyncio.Semaphore(100)
    sync = json.dumps({"type": "sync"})
    sockets = [(cookie, ports[(i * args.sync_sockets + j) % len(ports)])
               for i, cookie in enumerate(cookies) for j in range(args.sync_sockets)]
    await asyncio.gather(*(hold_socket(f"ws://127.0.0.1:{port}/ws/game/{game_id}/", port, cookie, out,
                                       deadline, None, 1 / args.sync_rate, sync, gate)
                           for cookie, port in sockets))


async def flood_lobby(args, ports, cookie, deadline, out: Outcome) -> None:
    gate = asyncio.Semaphore(args.lobby_concurrency)
    seek = json.dumps({"type": "seek", "pool": "untimed", "name": "flood"})
    await asyncio.gather(*(hold_socket(f"ws://127.0.0.1:{ports[i % len(ports)]}/ws/lobby/",
                                       ports[i % len(ports)], cookie, out, deadline, seek, 0, None, gate)
                           for i in range(args.lobby_sockets)))


def http_flood(workers: int, deadline: float, request_once, out: Outcome) -> None:
    """``workers`` threads, each calling ``request_once(i)`` again and again until ``deadline``;
    it returns the outcome key ("ok", "http 429 ...") which is counted."""

    def worker(i: int) -> None:
        n = 0
        while time.perf_counter() < deadline and n < 100_000:
            n += 1
            t = time.perf_counter()
            try:
                key = request_once(i)
            except urllib.error.HTTPError as exc:
                body = exc.read(300).decode(errors="replace")
                code = re.search(r'"error":\s*"([a-z_]+)"', body)
                key = f"http {exc.code}" + (f" {code.group(1)}" if code else "")
            except (OSError, TimeoutError) as exc:
                key = type(exc).__name__
            out.latencies.append(time.perf_counter() - t)
            if key == "ok":
                out.add(out.counts, "answered")
            else:
                out.add(out.refused, key)
                if key.startswith(("URLError", "ConnectionRefused", "ConnectionReset", "RemoteDisconnected")):
                    time.sleep(0.05)
        out.add(out.counts, "requests", n)

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(worker, range(workers)))


def analysis_request(attacker: load.Visitor, time_ms: int):
    token = next(c.value for c in attacker.jar if c.name == "csrftoken")
    body = json.dumps({"fen": START_FEN, "time_ms": time_ms}).encode()

    def once(_i: int) -> str:
        request = urllib.request.Request(attacker.base + "/analysis/search", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "X-CSRFToken": token,
                                                  "Referer": attacker.base + "/analysis"})
        with attacker.opener.open(request, timeout=30) as response:
            response.read()
        return "ok"

    return once


def create_request(attacker: load.Visitor):
    def once(i: int) -> str:
        try:
            attacker.post("/", {"name": f"x{i}", "color": "B", "time_control": "untimed"})
        except RuntimeError:                  # answered, but not with a redirect: the form refused
            return "not a redirect"
        return "ok"

    return once


# ---------------------------------------------------------------------------------- the probe

class ComputerProbe:
    """A person playing the computer at level 1 (from another address), timing its replies."""

    def __init__(self, base: str, port: int):
        self.base, self.port = base, port
        self.replies: list[float] = []
        self.errors: dict[str, int] = {}
        self.games = 0
        self.stopping = False
        self.rng = random.Random(7)

    def new_game(self) -> tuple[str, str]:
        visitor = load.Visitor(self.base, PROBE_ADDR)
        visitor.get("/")
        location = visitor.post("/computer", {"level": "1", "color": "B", "name": "probe"})
        return re.search(r"/g/([a-z0-9]+)/", location).group(1), visitor.cookie()

    async def main(self, deadline: float) -> None:
        while not self.stopping and time.perf_counter() < deadline:
            try:
                game_id, cookie = await asyncio.to_thread(self.new_game)
                self.games += 1
                await self.play(game_id, cookie, deadline)
            except (OSError, WebSocketException, urllib.error.HTTPError, AttributeError) as exc:
                key = f"http {exc.code}" if isinstance(exc, urllib.error.HTTPError) else type(exc).__name__
                self.errors[key] = self.errors.get(key, 0) + 1
                await asyncio.sleep(1)

    async def play(self, game_id: str, cookie: str, deadline: float) -> None:
        uri = f"ws://127.0.0.1:{self.port}/ws/game/{game_id}/"
        async with connect(uri, **ws_kwargs(self.port, cookie, PROBE_ADDR)) as ws:
            sent: float | None = None
            v = -1
            while not self.stopping and time.perf_counter() < deadline:
                try:
                    frame = await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.perf_counter()))
                except TimeoutError:
                    return
                message = json.loads(frame)
                kind = message.get("type")
                if kind == "error":
                    self.errors[message.get("code", "?")] = self.errors.get(message.get("code", "?"), 0) + 1
                    sent = None
                    await ws.send(json.dumps({"type": "sync"}))
                    continue
                if kind not in ("snapshot", "move", "update", "seats") or "state" not in message:
                    continue
                v, state = message["v"], message["state"]
                if kind == "move" and state["turn"] == "B" and sent is not None:
                    self.replies.append(time.perf_counter() - sent)
                    sent = None
                if state["status"] != "active" and state["status"] != "waiting":
                    return                               # over: a new game
                if state["turn"] == "B" and state.get("legal") and sent is None:
                    await asyncio.sleep(0.5)
                    sent = time.perf_counter()
                    await ws.send(json.dumps({"type": "move", "move": self.rng.choice(state["legal"]), "v": v}))


# ---------------------------------------------------------------------------------- phases

async def attack(args, flood: str, ports, bases, attacker: load.Visitor, game_id: str, deadline: float,
                 out: Outcome) -> None:
    cookie = attacker.cookie()
    if flood == "sockets":
        await flood_sockets(args, ports, cookie, game_id, deadline, out)
    elif flood == "sync":
        await flood_sync(args, ports, bases[0], game_id, deadline, out)
    elif flood == "lobby":
        await flood_lobby(args, ports, cookie, deadline, out)
    elif flood == "analysis":
        await asyncio.to_thread(http_flood, args.analysis_concurrency, deadline,
                                analysis_request(attacker, args.analysis_ms), out)
    elif flood == "create":
        await asyncio.to_thread(http_flood, args.create_concurrency, deadline, create_request(attacker), out)


def attack_elsewhere(args, flood: str, ports, bases, cookies: list, game_id: str, deadline: float) -> dict:
    """One flood from a process of its own (another client, as an attacker is): the honest players'
    and the probe's event loop in this process is not slowed by the attacker's handshakes and threads,
    so what they measure is the site's delay, not the bench's. ``deadline`` is a ``time.perf_counter()``
    value (the system's monotonic clock, the same in both processes). Returns the outcome
    (:meth:`Outcome.as_dict`) with the attacker process's own CPU seconds."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_attacker_main,
                              args=(args, flood, ports, bases, cookies, game_id, deadline, send), daemon=True)
    process.start()
    send.close()
    try:
        if not receive.poll(max(1.0, deadline - time.perf_counter()) + CLOSE_LIMIT_S):
            return {"unfinished": True}
        return receive.recv()
    finally:
        process.join(5)
        if process.is_alive():
            process.kill()


def _attacker_main(args, flood, ports, bases, cookies, game_id, deadline, send) -> None:
    load.raise_fd_limit()
    attacker = load.Visitor(bases[0], ATTACKER_ADDR)
    for cookie in cookies:
        attacker.jar.set_cookie(cookie)
    outcome = Outcome()
    asyncio.run(attack(args, flood, ports, bases, attacker, game_id, deadline, outcome))
    send.send({**outcome.as_dict(), "attacker_cpu_s": round(time.process_time(), 2)})


async def phase(args, name: str, run: load.Run, probe: ComputerProbe, meters: dict, flood_task) -> dict:
    st = run.stats
    st.opponent, st.spectator, st.errors, st.refused, st.accepted = [], [], {}, {}, 0
    probe.replies = []
    load_start = [round(x, 2) for x in os.getloadavg()]
    profilers = start_profilers(args, name, meters["daphne"])
    cpu0 = {k: m.cpu() for k, m in meters.items()}
    t0 = time.perf_counter()
    st.window = (t0, t0 + args.phase_s)
    attacker = flood_task(t0 + args.phase_s + GRACE_S) if flood_task else None
    await asyncio.sleep(args.phase_s + GRACE_S)
    wall = time.perf_counter() - t0
    for proc in profilers:
        with suppress(Exception):
            await asyncio.to_thread(proc.wait, 30)
    honest = {"opponent_ms": load.percentiles(st.opponent), "spectator_ms": load.percentiles(st.spectator),
              "moves": st.accepted, "errors_by_code": dict(st.errors), "refused_moves_by_code": dict(st.refused)}
    replies = list(probe.replies)
    cpu = {k: round(100 * load.Meter.delta(cpu0[k], m.cpu()) / wall, 1) for k, m in meters.items()}
    out = {"phase": name, "honest": honest, "computer_reply_ms": load.percentiles(replies),
           "cpu_pct": cpu, "loadavg_start": load_start, "loadavg_end": [round(x, 2) for x in os.getloadavg()]}
    if attacker is not None:
        try:
            out["attacker"] = await asyncio.wait_for(attacker, CLOSE_LIMIT_S)
        except TimeoutError:
            out["attacker_unfinished"] = True
    await asyncio.sleep(args.settle_s)
    return out


def start_profilers(args, phase: str, meter: load.Meter) -> list:
    """``--profile DIR``: py-spy samples each Daphne process through the phase (collapsed stacks of
    the thread holding the GIL, or of every thread with ``--profile-idle``, in
    ``DIR/<phase>-<pid>.txt``)."""
    if not args.profile:
        return []
    import subprocess

    out = Path(args.profile)
    out.mkdir(parents=True, exist_ok=True)
    procs = []
    for pid in meter.pids():
        command = [str(Path(sys.executable).parent / "py-spy"), "record", "-p", str(pid), "-d",
                   str(max(1, int(args.phase_s))), "-r", "100", "-f", "raw", "--nonblocking",
                   "-o", str(out / f"{phase}-{pid}.txt"), "--idle" if args.profile_idle else "--gil"]
        procs.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return procs


async def main_async(args) -> dict:
    load.raise_fd_limit()
    result: dict = {"params": {k: v for k, v in vars(args).items() if k not in ("server_env",)}}
    result["params"]["loadavg_before"] = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="checkers-abuse-") as tmp, ExitStack() as stack:
        stack.callback(load.show_logs, Path(tmp), args.keep_logs)
        ports, pids, extra = await asyncio.to_thread(load.start_site, args, stack, Path(tmp))
        bases = [f"http://127.0.0.1:{p}" for p in ports]
        games = [await asyncio.to_thread(load.make_game, bases, i, 1, "untimed", HONEST_ADDR)
                 for i in range(args.honest_games)]
        run = load.Run(args, ports, relay=False)
        run.local_addr = HONEST_ADDR
        socks = []
        for i, game in enumerate(games):
            socks += [load.Sock(run, 3 * i, game["id"], "B", game["B"]),
                      load.Sock(run, 3 * i + 1, game["id"], "W", game["W"]),
                      load.Sock(run, 3 * i + 2, game["id"], "S", game["S"][0])]
        run.expected_sockets = len(socks)
        tasks = [asyncio.create_task(s.main()) for s in socks]
        await asyncio.wait_for(run.all_connected.wait(), 60)
        run.started.set()
        for s in socks:
            s.react()
        attacker = load.Visitor(bases[0], ATTACKER_ADDR)
        await asyncio.to_thread(attacker.get, "/")
        await asyncio.to_thread(attacker.get, "/analysis")
        extra.pop("redis_url", None)
        meters = {"daphne": load.Meter(pids), **extra, "postgres": load.Meter(load.postgres_pids),
                  "client": load.Meter([os.getpid()])}
        probe = ComputerProbe(bases[0], ports[0])
        total = (len(args.floods) + 2) * (args.phase_s + GRACE_S + args.settle_s + CLOSE_LIMIT_S) + 60
        probe_task = asyncio.create_task(probe.main(time.perf_counter() + total))
        await asyncio.sleep(args.settle_s)

        def starter(flood: str):
            def start(deadline: float):
                if args.attacker_in_client:
                    outcome = Outcome()

                    async def here() -> dict:
                        await attack(args, flood, ports, bases, attacker, games[0]["id"], deadline, outcome)
                        return outcome.as_dict()
                    return asyncio.create_task(here())
                return asyncio.create_task(asyncio.to_thread(
                    attack_elsewhere, args, flood, ports, bases, list(attacker.jar), games[0]["id"], deadline))
            return start

        phases = [await phase(args, "quiet", run, probe, meters, None)]
        for flood in args.floods:
            phases.append(await phase(args, flood, run, probe, meters, starter(flood)))
        phases.append(await phase(args, "quiet_after", run, probe, meters, None))
        probe.stopping = True
        run.stopping = True
        for task in [*tasks, probe_task]:
            task.cancel()
        await asyncio.wait_for(asyncio.gather(*tasks, probe_task, return_exceptions=True), 60)
    result["phases"] = phases
    result["computer_probe"] = {"games": probe.games, "errors": probe.errors}
    quiet = phases[0]["honest"]["opponent_ms"]
    result["summary"] = {
        p["phase"]: {"opponent_p50_p99_max_ms": [p["honest"]["opponent_ms"].get(k) for k in ("p50", "p99", "max")],
                     "n": p["honest"]["opponent_ms"]["n"],
                     "quiet_p50_p99_max_ms": [quiet.get(k) for k in ("p50", "p99", "max")],
                     "computer_reply_p50_max_ms": [p["computer_reply_ms"].get(k) for k in ("p50", "max")],
                     "attacker_refused": p.get("attacker", {}).get("refused"),
                     "daphne_cpu_pct": p["cpu_pct"]["daphne"], "loadavg_start": p["loadavg_start"]}
        for p in phases}
    result["params"]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floods", nargs="*", choices=FLOODS, default=list(FLOODS))
    parser.add_argument("--phase-s", type=float, default=45.0, help="seconds of each phase")
    parser.add_argument("--settle-s", type=float, default=5.0, help="quiet seconds between phases")
    parser.add_argument("--honest-games", type=int, default=1)
    parser.add_argument("--think", type=float, default=1.0, help="the honest players' mean think time (s)")
    parser.add_argument("--flood-sockets", type=int, default=300)
    parser.add_argument("--sync-rate", type=float, default=25.0, help="syncs a second from each flood socket")
    parser.add_argument("--sync-sessions", type=int, default=120, help="throwaway sessions of the sync flood")
    parser.add_argument("--sync-sockets", type=int, default=2, help="game sockets of each such session")
    parser.add_argument("--analysis-concurrency", type=int, default=20)
    parser.add_argument("--analysis-ms", type=int, default=3000)
    parser.add_argument("--lobby-sockets", type=int, default=2000)
    parser.add_argument("--lobby-concurrency", type=int, default=500, help="lobby handshakes at a time")
    parser.add_argument("--create-concurrency", type=int, default=8)
    parser.add_argument("--daphnes", type=int, default=2)
    parser.add_argument("--front", action="store_true",
                        help="every client goes through the repository's nginx configuration "
                             "(deploy/nginx/checkers.conf), as in production")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--server-env", nargs="*", default=[], help="more KEY=VALUE for the server")
    parser.add_argument("--keep-logs", default="")
    parser.add_argument("--profile", default="", help="folder for py-spy profiles of the Daphne processes, per phase")
    parser.add_argument("--profile-idle", action="store_true", help="profiles include waiting threads")
    parser.add_argument("--attacker-in-client", action="store_true",
                        help="run the attacker on the honest clients' own event loop and threads, as before "
                             "(its handshakes then delay what the honest clients measure); by default it is "
                             "a process of its own")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pretty", action="store_true")
    args = parser.parse_args()
    # What bench/load.py's helpers read: the site's own limits, no memory probe, no profiles.
    args.rate_limit, args.redis_url, args.backlog, args.memprobe = "default", "", 4096, ""
    args.connect_concurrency, args.ping = 10, 20.0
    args.site_limits = True
    args.idle, args.database_via = False, ""
    args.route = "game"     # the honest game's sockets on one process, as the shipped nginx routes them
    limit = 300 + (len(args.floods) + 2) * (args.phase_s + GRACE_S + args.settle_s + CLOSE_LIMIT_S + 10)
    result = asyncio.run(asyncio.wait_for(main_async(args), limit))
    print(json.dumps(result, indent=2 if args.pretty else None))


if __name__ == "__main__":
    main()
