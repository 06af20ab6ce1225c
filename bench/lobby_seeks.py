"""The lobby's seek list under load: many home pages watching while seeks come and go.

Run by hand against a running site (not part of the test suite), started with the socket limits per
client address off, since every simulated page comes from one address::

    LOBBY_SOCKETS_PER_ADDRESS=0 make run
    .venv/bin/python bench/lobby_seeks.py --target http://127.0.0.1:8000 --watchers 2000 --rate 50 --duration 20

Each watcher is a page: it GETs ``/`` for its session cookie, opens ``/ws/lobby/`` and sends
``watch``.  Seekers (``--seekers`` sockets of their own) then make a seek in a random casual pool
and cancel it a moment later, ``--rate`` seeks a second in all, for ``--duration`` seconds.  For
every seek the bench times how long after its ``seeking`` answer it appears in the ``seeks`` news
of each watcher.  Prints one JSON line: seeks made, appearances measured, their p50, p99 and max
(ms), the ``seeks`` messages each watcher received a second (the fan-out cost per page), and the
watchers that missed seeks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
import urllib.request
from http.cookies import SimpleCookie

from websockets.asyncio.client import connect

POOLS = ("1+0", "3+0", "3+2", "5+0", "5+3", "10+0", "10+5", "15+10", "untimed")


def session_cookie(target: str) -> str:
    """The session cookie a fresh browser gets from the home page."""
    with urllib.request.urlopen(target + "/", timeout=30) as response:
        cookie = SimpleCookie()
        for header in response.headers.get_all("Set-Cookie") or []:
            cookie.load(header)
    return "; ".join(f"{key}={morsel.value}" for key, morsel in cookie.items())


class Watcher:
    def __init__(self, ws_url: str, cookie: str, origin: str, seen: dict[str, list[float]]):
        self.ws_url, self.cookie, self.origin, self.seen = ws_url, cookie, origin, seen
        self.messages = 0
        self.ready = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> None:
        async with connect(self.ws_url, additional_headers={"Cookie": self.cookie, "Origin": self.origin},
                           open_timeout=60, max_queue=None) as ws:
            await ws.send(json.dumps({"type": "watch"}))
            reader = asyncio.ensure_future(self.read(ws))
            await stop.wait()
            reader.cancel()

    async def read(self, ws) -> None:
        async for text in ws:
            message = json.loads(text)
            if message["type"] == "seeks":
                if not self.ready.is_set():
                    self.ready.set()
                    continue
                self.messages += 1
                now = time.monotonic()
                for seeks in message["pools"].values():
                    for seek in seeks:
                        self.seen.setdefault(seek["id"], []).append(now)
            elif message["type"] == "ping":
                await ws.send(json.dumps({"type": "pong"}))


async def seeker(ws_url: str, cookie: str, origin: str, made: dict[str, float], interval: float,
                 stop: asyncio.Event) -> None:
    """Seek in a random pool every ``interval`` s and cancel it half an interval later."""
    async with connect(ws_url, additional_headers={"Cookie": cookie, "Origin": origin}, open_timeout=60) as ws:
        while not stop.is_set():
            await ws.send(json.dumps({"type": "seek", "pool": random.choice(POOLS), "name": ""}))
            while True:
                answer = json.loads(await ws.recv())
                if answer["type"] == "seeking":
                    made[answer["seek"]] = time.monotonic()
                    break
                if answer["type"] in ("paired", "error"):
                    break
            await asyncio.sleep(interval / 2)
            await ws.send(json.dumps({"type": "cancel"}))
            while json.loads(await ws.recv())["type"] not in ("cancelled", "paired"):
                pass
            await asyncio.sleep(interval / 2)


async def main(args) -> dict:
    target = args.target.rstrip("/")
    ws_url = target.replace("http", "ws", 1) + "/ws/lobby/"
    loop = asyncio.get_running_loop()
    cookies = await asyncio.gather(*(loop.run_in_executor(None, session_cookie, target)
                                     for _ in range(args.watchers + args.seekers)))
    seen: dict[str, list[float]] = {}
    made: dict[str, float] = {}
    stop = asyncio.Event()
    watchers = [Watcher(ws_url, cookie, target, seen) for cookie in cookies[:args.watchers]]
    tasks = [asyncio.ensure_future(w.run(stop)) for w in watchers]
    await asyncio.wait_for(asyncio.gather(*(w.ready.wait() for w in watchers)), 120)
    interval = args.seekers / args.rate
    started = time.monotonic()
    tasks += [asyncio.ensure_future(seeker(ws_url, cookie, target, made, interval, stop))
              for cookie in cookies[args.watchers:]]
    await asyncio.sleep(args.duration)
    stop.set()
    elapsed = time.monotonic() - started
    await asyncio.sleep(1)
    for task in tasks:
        task.cancel()
    delays = sorted((t - made[seek_id]) * 1000 for seek_id, times in seen.items() if seek_id in made
                    for t in times[:args.watchers])
    return {
        "watchers": args.watchers, "seeks_made": len(made), "seeks_per_s": round(len(made) / elapsed, 1),
        "appearances": len(delays),
        "p50_ms": round(statistics.median(delays), 1) if delays else None,
        "p99_ms": round(delays[int(len(delays) * 0.99) - 1], 1) if delays else None,
        "max_ms": round(delays[-1], 1) if delays else None,
        "seeks_messages_per_watcher_per_s": round(statistics.mean(w.messages for w in watchers) / elapsed, 2),
        "watchers_missing_seeks": sum(1 for w in watchers if w.messages == 0),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="http://127.0.0.1:8000")
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--seekers", type=int, default=20)
    parser.add_argument("--rate", type=float, default=50, help="seeks a second, in all")
    parser.add_argument("--duration", type=float, default=20)
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
