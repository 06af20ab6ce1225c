"""The lobby's seek list under load: many home pages watching while seeks come and go.

Run by hand from the repository root (not part of the test suite)::

    .venv/bin/python bench/lobby_seeks.py --watchers 2000 --rate 50 --duration 20 --daphnes 2
    .venv/bin/python bench/lobby_seeks.py --target http://127.0.0.1:8000 --pids 1234 --watchers 200

Without ``--target`` it starts a site of its own, as ``bench/load.py`` does (its helpers, and those
of ``tests/system/processes.py``): its own Redis server, a fresh database (PostgreSQL from
``--database-url``, created and dropped, or SQLite with ``--sqlite``) and ``--daphnes`` Daphne
processes, with ``LOBBY_SOCKETS_PER_ADDRESS=0`` (every simulated page comes from one address) and
``LOG_LEVEL=WARNING``.  A running site given with ``--target`` must be started with that limit off.

Each watcher is a page: it has a guest's session cookie (minted with the started site's secret key,
as its first GET of ``/`` would give it; with ``--target``, from that GET), opens ``/ws/lobby/``
(the watchers dealt to the Daphne processes in turn, as a load balancer would; one shed by a busy
server opens again after a pause, as the page does) and sends ``watch``.  The watchers are plain
asyncio protocols that find the seek ids in each frame without decoding it, so that the client,
which shares the machine, costs little.

The phases: first ``--baseline-s`` seconds of seeks with no watcher (what the seeks cost by
themselves); then the watchers connect; ``--idle-s`` seconds with nothing happening (what the
pages' own refreshes cost); then the measured window of ``--duration`` seconds.  In both seek
phases ``--seekers`` sockets, each in a casual pool of its own (so no two seeks are paired), make a
seek and cancel it half an interval later, ``--rate`` seeks a second in all (two changes each: the
seek and its cancel).  A seek's appearance on a page is the time from the ``seek`` frame's send to
the first frame that lists it there.

Prints one JSON line: seeks made, changes a second, appearances measured and missed (a watcher that
never saw a seek made in the window), their p50, p99 and max (ms), the watchers that missed any
seek, the frames each watcher received a second, the CPU of the Daphne processes, of Redis and of
this client (psutil: ms a change in the window; ``net``: less the idle window's rate;
``fanout_ms_per_change``: ``net`` less the same seeks' cost without watchers), the Redis commands a
change, and the load average before and after.  ``--profile DIR`` samples the Daphne processes
with py-spy during the window (collapsed stacks).  Every phase has a time limit; a run that fails
still prints its JSON, with ``error`` saying why.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from http.cookies import SimpleCookie
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import load  # noqa: E402 - bench/load.py: the site, the meters
from websockets.asyncio.client import connect  # noqa: E402

#: Casual pools, one a seeker (a seeker alone in its pool is never paired).
POOLS = ("1+0", "2+1", "3+0", "3+2", "5+0", "5+3", "10+0", "10+5", "15+10", "30+0", "1d", "3d", "untimed",
         "1+0-ballot", "2+1-ballot", "3+0-ballot", "3+2-ballot", "5+0-ballot", "5+3-ballot", "10+0-ballot",
         "10+5-ballot", "15+10-ballot", "30+0-ballot", "1d-ballot", "3d-ballot", "untimed-ballot")
COOKIES_LIMIT_S = 600
CONNECT_LIMIT_S = 600
#: The secret key of a site the bench starts (``tests/system/processes.py``, ``site_settings``).
SITE_SECRET = "system-test-secret-key"
SEEK_ID = re.compile(rb'"id": ?"([0-9a-f]{32})"')


def minted_cookies(count: int, secret: str) -> list[str]:
    """``count`` session cookies of new guests (a player id each), signed with the site's ``secret``
    as its session engine (signed cookies) would sign them: what a page's first GET of ``/`` gives
    it, without rendering 2,000 home pages first."""
    from django.conf import settings

    if not settings.configured:
        settings.configure(SECRET_KEY=secret)
    from django.contrib.sessions.backends.signed_cookies import SessionStore

    cookies = []
    for _ in range(count):
        store = SessionStore()
        store["player_id"] = uuid.uuid4().hex
        store.save()
        cookies.append(f"{settings.SESSION_COOKIE_NAME}={store.session_key}")
    return cookies


def session_cookie(base: str) -> str:
    """The session cookie a fresh browser gets from the home page."""
    with urllib.request.urlopen(base + "/", timeout=30) as response:
        cookie = SimpleCookie()
        for header in response.headers.get_all("Set-Cookie") or []:
            cookie.load(header)
    return "; ".join(f"{key}={morsel.value}" for key, morsel in cookie.items())


def client_frame(text: bytes, opcode: int = 1) -> bytes:
    """One masked client frame of ``text`` (shorter than 126 bytes)."""
    mask = os.urandom(4)
    return bytes([0x80 | opcode, 0x80 | len(text)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(text))


class Watcher(asyncio.Protocol):
    """One home page's lobby socket: the handshake, ``watch``, then the frames, whose seek ids it
    notes with the time of the first frame that listed each (pings answered, nothing decoded)."""

    def __init__(self, request: bytes):
        self.request = request
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.open = False
        self.refused = ""
        self.first: dict[bytes, float] = {}
        self.frames = 0
        self.ready = asyncio.Event()
        self.closed = asyncio.Event()

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc) -> None:
        self.closed.set()

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        buffer = self.buffer
        buffer += data
        if not self.open:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            if not buffer.startswith(b"HTTP/1.1 101"):
                self.refused = bytes(buffer[:end]).split(b"\r\n")[0].decode(errors="replace")
                self.ready.set()
                self.transport.close()
                return
            del buffer[:end + 4]
            self.open = True
            self.transport.write(client_frame(b'{"type": "watch"}'))
        while len(buffer) >= 2:
            opcode, size, at = buffer[0] & 0x0F, buffer[1] & 0x7F, 2
            if size == 126:
                size, at = int.from_bytes(buffer[2:4], "big"), 4
            elif size == 127:
                size, at = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < at + size:
                return
            payload = bytes(buffer[at:at + size])
            del buffer[:at + size]
            if opcode == 1:
                self.text(payload, now)
            elif opcode == 9:
                self.transport.write(client_frame(payload, 0xA))
            elif opcode == 8:
                self.transport.close()

    def text(self, payload: bytes, now: float) -> None:
        self.frames += 1
        if not self.ready.is_set():
            if b'"seeks"' in payload[:20]:
                self.ready.set()
            return
        for seek_id in SEEK_ID.findall(payload):
            self.first.setdefault(seek_id, now)


async def open_watcher(port: int, cookie: str) -> Watcher:
    key = base64.b64encode(os.urandom(16)).decode()
    request = (f"GET /ws/lobby/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
               f"Origin: http://127.0.0.1:{port}\r\nCookie: {cookie}\r\n\r\n").encode()
    loop = asyncio.get_running_loop()
    _transport, watcher = await loop.create_connection(lambda: Watcher(request), "127.0.0.1", port)
    return watcher


class Seeks:
    """The seeks made in the window: their send times by id, and the changes made."""

    def __init__(self) -> None:
        self.sent: dict[bytes, float] = {}
        self.changes = 0
        self.refused: dict[str, int] = {}


async def seeker(port: int, cookie: str, pool: str, interval: float, phase: float, seeks: Seeks,
                 stop: asyncio.Event) -> None:
    """Seek in ``pool`` every ``interval`` s (first after ``phase`` s) and cancel half an interval later."""
    headers = {"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"}
    async with connect(f"ws://127.0.0.1:{port}/ws/lobby/", additional_headers=headers, open_timeout=60,
                       max_queue=None) as ws:
        next_at = time.monotonic() + phase
        while not stop.is_set():
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at += interval
            sent = time.monotonic()
            await ws.send(json.dumps({"type": "seek", "pool": pool, "name": ""}))
            answer = await answer_to(ws, ("seeking", "error", "paired"))
            if answer["type"] != "seeking":
                code = answer.get("code", answer["type"])
                seeks.refused[code] = seeks.refused.get(code, 0) + 1
                continue
            seeks.sent[answer["seek"].encode()] = sent
            seeks.changes += 1
            await asyncio.sleep(max(0.0, sent + interval / 2 - time.monotonic()))
            await ws.send(json.dumps({"type": "cancel"}))
            if (await answer_to(ws, ("cancelled", "paired", "error")))["type"] == "cancelled":
                seeks.changes += 1


async def answer_to(ws, kinds: tuple[str, ...]) -> dict:
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if message["type"] in kinds:
            return message


def meter_readings(meters: dict) -> dict:
    return {name: meter.cpu() for name, meter in meters.items()}


def cpu_s(meters: dict, before: dict, after: dict) -> dict:
    return {name: load.Meter.delta(before[name], after[name]) for name in meters}


def appearances(watchers: list[Watcher], seeks: Seeks) -> dict:
    """Every (seek, watcher) pair: the delay to its first appearance (ms), or missed."""
    delays: list[float] = []
    missed = 0
    watchers_missing = 0
    for watcher in watchers:
        first = watcher.first
        missing = 0
        for seek_id, sent in seeks.sent.items():
            seen = first.get(seek_id)
            if seen is None:
                missing += 1
            else:
                delays.append((seen - sent) * 1000)
        missed += missing
        watchers_missing += bool(missing)
    delays.sort()
    return {"appearances": len(delays), "missed": missed, "watchers_missing_seeks": watchers_missing,
            "p50_ms": round(statistics.median(delays), 1) if delays else None,
            "p99_ms": round(delays[max(0, int(len(delays) * 0.99) - 1)], 1) if delays else None,
            "max_ms": round(delays[-1], 1) if delays else None}


def progress(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


async def session_cookies(args, ports: list[int], secret: str) -> list[str]:
    count = args.watchers + args.seekers
    if secret:
        return minted_cookies(count, secret)
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(args.http_workers) as pool:
        return await asyncio.wait_for(asyncio.gather(*(
            loop.run_in_executor(pool, session_cookie, f"http://127.0.0.1:{ports[i % len(ports)]}")
            for i in range(count))), COOKIES_LIMIT_S)


async def open_watchers(args, ports: list[int], cookies: list[str]) -> tuple[list[Watcher], int]:
    """Every watcher with its first list, at most ``--connect-concurrency`` handshakes at a time; one
    shed by a busy server (closed first) opens again after a pause, as the page does.  Returns the
    watchers and how many opened again."""
    gate = asyncio.Semaphore(args.connect_concurrency)
    retries = [0]

    async def opened(i: int) -> Watcher:
        for attempt in range(10):
            async with gate:
                watcher = await open_watcher(ports[i % len(ports)], cookies[i])
                settled = [asyncio.ensure_future(watcher.ready.wait()), asyncio.ensure_future(watcher.closed.wait())]
                await asyncio.wait(settled, timeout=60, return_when=asyncio.FIRST_COMPLETED)
                for waiter in settled:
                    waiter.cancel()
            if watcher.ready.is_set() and not watcher.closed.is_set():
                return watcher
            retries[0] += 1
            if watcher.transport is not None:
                watcher.transport.close()
            await asyncio.sleep(0.5 * (attempt + 1))
        return watcher

    tasks = [asyncio.ensure_future(opened(i)) for i in range(args.watchers)]
    done, _pending = await asyncio.wait(tasks, timeout=CONNECT_LIMIT_S)
    if len(done) < len(tasks):
        raise TimeoutError(f"{len(done)} of {len(tasks)} watchers had their first list after {CONNECT_LIMIT_S} s")
    return [task.result() for task in tasks], retries[0]


async def seek_window(args, ports: list[int], cookies: list[str], meters: dict, duration: float,
                      redis_url: str = "") -> dict:
    """The seekers at work for ``duration`` s: the seeks, the CPU each part used (s), the window (s),
    the Redis commands by name, and the seekers' failures."""
    seeks, stop = Seeks(), asyncio.Event()
    interval = args.seekers / args.rate
    redis_before = load.redis_reading(redis_url)
    before, started = meter_readings(meters), time.monotonic()
    tasks = [asyncio.ensure_future(seeker(ports[i % len(ports)], cookies[args.watchers + i], POOLS[i], interval,
                                          interval * i / args.seekers, seeks, stop))
             for i in range(args.seekers)]
    await asyncio.sleep(duration)
    stop.set()
    window = time.monotonic() - started
    used = cpu_s(meters, before, meter_readings(meters))
    redis_after = load.redis_reading(redis_url)
    await asyncio.sleep(2)     # the last seeks' news
    for task in tasks:
        task.cancel()
    failed = [r for r in await asyncio.gather(*tasks, return_exceptions=True)
              if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError)]
    calls = {name: n - redis_before["calls"].get(name, 0) for name, n in redis_after.get("calls", {}).items()}
    return {"seeks": seeks, "used": used, "window": window, "calls": calls, "failed": failed}


async def measure(args, ports: list[int], meters: dict, redis_url: str, secret: str) -> dict:
    started = time.monotonic()
    cookies = await session_cookies(args, ports, secret)
    out: dict = {"cookies_s": round(time.monotonic() - started, 1)}
    progress(f"{len(cookies)} session cookies in {out['cookies_s']} s; seeks without watchers")
    alone = await seek_window(args, ports, cookies, meters, args.baseline_s)
    alone_changes = max(1, alone["seeks"].changes)
    out["without_watchers"] = {
        "changes": alone["seeks"].changes, "changes_per_s": round(alone["seeks"].changes / alone["window"], 1),
        "cpu_ms_per_change": {name: round(s * 1000 / alone_changes, 3) for name, s in alone["used"].items()}}
    started = time.monotonic()
    watchers, out["connect_retries"] = await open_watchers(args, ports, cookies)
    out["connected_s"] = round(time.monotonic() - started, 1)
    progress(f"{sum(w.ready.is_set() and not w.closed.is_set() for w in watchers)} watchers ready in "
             f"{out['connected_s']} s; idle window")
    idle_before, idle_start = meter_readings(meters), time.monotonic()
    await asyncio.sleep(args.idle_s)
    idle = cpu_s(meters, idle_before, meter_readings(meters))
    idle_wall = time.monotonic() - idle_start
    frames_before = sum(w.frames for w in watchers)
    progress("seek window")
    profilers = load.start_profilers(args, meters["daphne"], False, "window", args.duration)
    run = await seek_window(args, ports, cookies, meters, args.duration, redis_url)
    for proc in profilers:
        proc.wait(timeout=60)
    seeks, used, window = run["seeks"], run["used"], run["window"]
    changes = max(1, seeks.changes)
    net = {name: (s - idle[name] * window / idle_wall) * 1000 / changes for name, s in used.items()}
    out.update({
        "seeks_made": len(seeks.sent), "changes": seeks.changes, "changes_per_s": round(seeks.changes / window, 1),
        "refused": seeks.refused, "seekers_failed": [repr(r) for r in run["failed"][:3]],
        **appearances(watchers, seeks),
        "watchers_refused": sum(bool(w.refused) for w in watchers),
        "watchers_closed": sum(w.closed.is_set() for w in watchers),
        "frames_per_watcher_per_s": round((sum(w.frames for w in watchers) - frames_before) / len(watchers) / window,
                                          2) if watchers else None,
        "cpu_ms_per_change": {name: round(s * 1000 / changes, 3) for name, s in used.items()},
        "cpu_ms_per_change_net": {name: round(ms, 3) for name, ms in net.items()},
        "fanout_ms_per_change": {name: round(ms - out["without_watchers"]["cpu_ms_per_change"][name], 3)
                                 for name, ms in net.items()},
        "cpu_pct_window": {name: round(100 * s / window, 1) for name, s in used.items()},
        "cpu_pct_idle": {name: round(100 * s / idle_wall, 1) for name, s in idle.items()},
        "redis_commands_per_change": {name: round(n / changes, 2)
                                      for name, n in sorted(run["calls"].items(), key=lambda kv: -kv[1]) if n},
    })
    for watcher in watchers:
        if watcher.transport is not None:
            watcher.transport.close()
    return out


def site_args(args) -> argparse.Namespace:
    """What ``bench/load.py``'s ``start_site`` reads, for this bench's site."""
    return argparse.Namespace(
        memprobe="", backlog=args.backlog, database_url=args.database_url, sqlite=args.sqlite, redis_url="",
        database_via="", rate_limit="default", think=5.0, site_limits=False, daphnes=args.daphnes,
        server_env=["LOBBY_SOCKETS_PER_ADDRESS=0", "LOG_LEVEL=WARNING", *args.server_env])


async def main_async(args) -> dict:
    load.raise_fd_limit()
    result: dict = {"params": {"watchers": args.watchers, "seekers": args.seekers, "rate": args.rate,
                               "duration_s": args.duration, "idle_s": args.idle_s, "baseline_s": args.baseline_s,
                               "daphnes": args.daphnes,
                               "target": args.target, "loadavg_before": [round(x, 2) for x in os.getloadavg()]}}
    with tempfile.TemporaryDirectory(prefix="checkers-lobby-") as tmp, ExitStack() as stack:
        if args.target:
            load.check_loopback(args.target)
            ports = [urllib.parse.urlparse(args.target).port or 80]
            pids, redis_url, secret = args.pids or load.listening_pids(ports[0]), args.redis_url, ""
            extra: dict = {"redis": load.Meter(load.listening_pids(
                urllib.parse.urlparse(redis_url).port or 6379))} if redis_url else {}
        else:
            ports, pids, extra = await asyncio.to_thread(load.start_site, site_args(args), stack, Path(tmp))
            redis_url = extra.pop("redis_url")
            secret = SITE_SECRET
            progress(f"site started: ports {ports}")
        meters = {"daphne": load.Meter(pids), **extra, "client": load.Meter([os.getpid()])}
        result.update(await measure(args, ports, meters, redis_url, secret))
    result["params"]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--seekers", type=int, default=20, help=f"at most {len(POOLS)}: one casual pool each")
    parser.add_argument("--rate", type=float, default=50, help="seeks a second, in all (each also cancelled)")
    parser.add_argument("--duration", type=float, default=20, help="seconds of seeks measured")
    parser.add_argument("--idle-s", type=float, default=10, help="seconds metered with nothing happening first")
    parser.add_argument("--baseline-s", type=float, default=10,
                        help="seconds of the same seeks before any watcher connects (their own cost)")
    parser.add_argument("--daphnes", type=int, default=2)
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres",
                        help="PostgreSQL server in which a fresh database is created and dropped")
    parser.add_argument("--sqlite", action="store_true", help="use a fresh SQLite file instead")
    parser.add_argument("--server-env", nargs="*", default=[], help="more KEY=VALUE for the servers")
    parser.add_argument("--backlog", type=int, default=4096, help="Daphne's listen backlog")
    parser.add_argument("--target", default="", help="a running site (loopback only) instead of starting one")
    parser.add_argument("--pids", type=int, nargs="*", default=[], help="with --target: the server pids to meter")
    parser.add_argument("--redis-url", default="", help="with --target: its Redis, to meter")
    parser.add_argument("--http-workers", type=int, default=8, help="home page requests at once")
    parser.add_argument("--connect-concurrency", type=int, default=64, help="handshakes under way at once")
    parser.add_argument("--profile", default="", help="folder for py-spy profiles of the servers in the window")
    parser.add_argument("--profile-idle", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.seekers <= len(POOLS):
        parser.error(f"--seekers must be 1 to {len(POOLS)}")
    limit = COOKIES_LIMIT_S + CONNECT_LIMIT_S + args.baseline_s + args.idle_s + args.duration + 300
    try:
        result = asyncio.run(asyncio.wait_for(main_async(args), limit))
    except BaseException as exc:  # the figures of a run that failed are still printed, with why
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}", "params": vars(args)}, default=str))
        raise SystemExit(1) from exc
    print(json.dumps(result))


if __name__ == "__main__":
    main()
