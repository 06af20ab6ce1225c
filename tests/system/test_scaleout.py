"""Several Daphne processes behind nginx on one Redis and one database, with faults on purpose.

Two players seated on different Daphne processes and a spectator on a third
connection play a complete recorded game through nginx; every socket receives
every move once, in order.  Then a Daphne process is killed mid-game and
started again, and Redis is restarted mid-game: the clients reconnect as the
page does, and the game goes on from the exact position, no move lost or
duplicated.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import os
import re
import shutil
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from game import rules
from tests.conftest import DATA
from tests.system.processes import running_site

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")


def recorded_moves() -> list[str]:
    with open(DATA / "OCA_2.0.pdn", encoding="utf-8") as handle:
        record = next(rules.read_games(handle))
    game = rules.Game()
    for text in record.moves:
        game.play(text)
    return [str(m) for m in game.moves]


class Visitor:
    """One browser's cookies, for the HTTP pages (CSRF included)."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def _post(self, path: str, fields: dict) -> str:
        page = self.opener.open(self.base + path).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        data = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": token}).encode()
        request = urllib.request.Request(self.base + path, data=data,
                                         headers={"Referer": self.base + path})
        return self.opener.open(request).geturl()

    def create_game(self, name: str, color: str) -> str:
        url = self._post("/", {"name": name, "color": color})
        return re.search(r"/g/([a-z0-9]+)/", url).group(1)

    def join(self, game_id: str, name: str) -> None:
        page = f"/g/{game_id}/"
        self.opener.open(self.base + page).read()
        token = next(c.value for c in self.jar if c.name == "csrftoken")
        data = urllib.parse.urlencode({"name": name, "csrfmiddlewaretoken": token}).encode()
        self.opener.open(urllib.request.Request(self.base + page + "join", data=data,
                                                headers={"Referer": self.base + page})).read()

    def cookie_header(self) -> str:
        self.opener.open(self.base + "/").read()
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


class Viewer:
    """A game page's socket: applies snapshots and versioned events, reconnects as the page does."""

    def __init__(self, port: int, game_id: str, cookie: str):
        self.uri = f"ws://127.0.0.1:{port}/ws/game/{game_id}/"
        self.origin = f"http://127.0.0.1:{port}"
        self.cookie = cookie
        self.moves: list[str] = []
        self.v = -1
        self.events: list[int] = []      # the ply of every move event received, in order
        self.upstreams: list[str] = []
        self.reconnects = 0
        self.snapshots = 0
        self.ws = None
        self.changed = asyncio.Event()
        self.task = None
        self.pending: set[asyncio.Task] = set()

    async def start(self) -> None:
        self.task = asyncio.create_task(self.run())
        await self.wait(lambda: self.v >= 0)

    async def run(self) -> None:
        while True:
            try:
                async with connect(self.uri, origin=self.origin, open_timeout=5,
                                   additional_headers={"Cookie": self.cookie}) as ws:
                    self.ws = ws
                    self.upstreams.append(ws.response.headers.get("X-Upstream", ""))
                    async for frame in ws:
                        self.apply(json.loads(frame))
            except (TimeoutError, OSError, WebSocketException):
                pass
            self.ws = None
            self.reconnects += 1
            await asyncio.sleep(0.2)

    def apply(self, message: dict) -> None:
        kind = message["type"]
        if kind == "snapshot":
            self.moves, self.v = list(message["moves"]), message["v"]
            self.snapshots += 1
        elif kind == "move":
            self.events.append(message["ply"])
            if message["v"] == self.v + 1 and message["ply"] == len(self.moves) + 1:
                self.moves.append(message["move"])
                self.v = message["v"]
            elif message["v"] > self.v:
                self.ask_sync()
        elif kind in ("update", "seats") and message["v"] == self.v + 1:
            self.v = message["v"]
        elif kind == "audience" and (message.get("game_v") or 0) > self.v:
            self.ask_sync()
        self.changed.set()

    def ask_sync(self) -> None:
        """Send ``sync`` soon (the task is kept until it is done)."""
        task = asyncio.create_task(self.send({"type": "sync"}))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def send(self, message: dict) -> None:
        if self.ws is not None:
            with contextlib.suppress(WebSocketException):
                await self.ws.send(json.dumps(message))

    async def wait(self, condition, timeout_s: float = 20) -> None:
        async def loop():
            while not condition():
                self.changed.clear()
                await self.changed.wait()
        await asyncio.wait_for(loop(), timeout_s)

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def assert_every_move_once(viewers: list[Viewer], moves: list[str], snapshots_before: list[int]) -> None:
    """After a failover: each viewer's board has every move once, in order (applied by version: a move
    published again after the failover may come after the snapshot that had it, and is ignored as the
    page ignores it), no move event came twice, and each got a fresh snapshot since
    ``snapshots_before`` (its count of snapshots then)."""
    for viewer in viewers:
        assert viewer.moves == moves
        assert len(viewer.events) == len(set(viewer.events)), str(viewer.events)
    assert all(v.snapshots > before for v, before in zip(viewers, snapshots_before, strict=True))


async def play(mover: Viewer, viewers: list[Viewer], move: str, ply: int) -> None:
    """Send ``move`` until it lands (a send into a dying connection is repeated), then wait for everyone."""
    async def landed():
        while len(mover.moves) < ply:
            if len(mover.moves) == ply - 1 and mover.ws is not None:
                await mover.send({"type": "move", "move": move, "v": mover.v})
            with contextlib.suppress(TimeoutError):
                await mover.wait(lambda: len(mover.moves) >= ply, timeout_s=2)
    await asyncio.wait_for(landed(), 60)
    for viewer in viewers:
        await viewer.wait(lambda viewer=viewer: len(viewer.moves) >= ply, timeout_s=60)


@pytest.fixture
def site(tmp_path):
    with running_site(tmp_path) as site:
        yield site


async def seat_players(nginx_port: int):
    base = f"http://127.0.0.1:{nginx_port}"
    alice, bob, carol = Visitor(base), Visitor(base), Visitor(base)
    game_id = await asyncio.to_thread(alice.create_game, "alice", "B")
    await asyncio.to_thread(bob.join, game_id, "bob")
    cookies = [await asyncio.to_thread(v.cookie_header) for v in (alice, bob, carol)]
    return game_id, cookies


async def connect_on_different_processes(port, game_id, cookies):
    """Alice's and Bob's sockets on different Daphne processes (nginx alternates), Carol's on a third."""
    a = Viewer(port, game_id, cookies[0])
    await a.start()
    while True:
        b = Viewer(port, game_id, cookies[1])
        await b.start()
        if b.upstreams[-1] != a.upstreams[-1]:
            break
        await b.close()
    c = Viewer(port, game_id, cookies[2])
    await c.start()
    return a, b, c


def test_players_on_two_processes_and_a_spectator_see_every_move_once_in_order(site):
    async def scenario():
        moves = recorded_moves()
        game_id, cookies = await seat_players(site["nginx"].port)
        a, b, c = await connect_on_different_processes(site["nginx"].port, game_id, cookies)
        try:
            assert a.upstreams[-1] != b.upstreams[-1]
            for ply, move in enumerate(moves, start=1):
                await play(a if ply % 2 else b, [a, b, c], move, ply)
            for viewer in (a, b, c):
                assert viewer.moves == moves
                assert viewer.events == list(range(1, len(moves) + 1))
                assert viewer.reconnects == 0
        finally:
            for viewer in (a, b, c):
                await viewer.close()

    asyncio.run(scenario())


def test_killed_daphne_and_restarted_redis_lose_no_move(site):
    async def scenario():
        moves = recorded_moves()
        game_id, cookies = await seat_players(site["nginx"].port)
        a, b, c = await connect_on_different_processes(site["nginx"].port, game_id, cookies)
        viewers = [a, b, c]
        try:
            for ply, move in enumerate(moves[:10], start=1):
                await play(a if ply % 2 else b, viewers, move, ply)
            # A Daphne process dies mid-game and comes back on the same port.
            site["daphnes"][0].kill()
            site["daphnes"][0].start()
            for ply, move in enumerate(moves[10:20], start=11):
                await play(a if ply % 2 else b, viewers, move, ply)
            assert sum(v.reconnects for v in viewers) >= 1
            # Redis restarts mid-game (it keeps nothing): each process subscribes again and
            # sends its sockets a fresh snapshot, which covers what was published meanwhile.
            snapshots = [v.snapshots for v in viewers]
            site["redis"].kill()
            site["redis"].start()
            for ply, move in enumerate(moves[20:], start=21):
                await play(a if ply % 2 else b, viewers, move, ply)
            for viewer in viewers:
                assert viewer.moves == moves
            assert all(v.snapshots > before for v, before in zip(viewers, snapshots, strict=False))
        finally:
            for viewer in viewers:
                await viewer.close()
        fresh = Viewer(site["nginx"].port, game_id, cookies[2])
        await fresh.start()
        assert fresh.moves == moves
        await fresh.close()

    asyncio.run(scenario())


def terminate_connections(database_url: str) -> int:
    """Drop every connection PostgreSQL holds to the site's database, as a restart would; return
    how many there were."""
    import psycopg

    name = urllib.parse.urlparse(database_url).path.lstrip("/")
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = %s AND pid <> pg_backend_pid()", [name]).fetchall()
    return len(rows)


def page_status(port: int) -> int:
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/games/live", timeout=10).status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")),
                    reason="the connection pool is PostgreSQL's")
def test_dropped_database_connections_cost_a_moment_not_seconds(site):
    """PostgreSQL drops every connection of the site (a restart, an administrator) while the
    pools of both processes hold idle ones: moves and pages work again within moments, a dead
    connection failing its request at once instead of each costing seconds."""
    async def scenario():
        moves = recorded_moves()
        game_id, cookies = await seat_players(site["nginx"].port)
        viewers = await connect_on_different_processes(site["nginx"].port, game_id, cookies)
        a, b, _ = viewers
        try:
            for ply, move in enumerate(moves[:4], start=1):
                await play(a if ply % 2 else b, viewers, move, ply)
            for daphne in site["daphnes"]:   # idle connections in both pools
                await asyncio.gather(*[asyncio.to_thread(page_status, daphne.port) for _ in range(6)])
            assert await asyncio.to_thread(terminate_connections, site["database_url"]) >= 4
            started = time.monotonic()
            for ply, move in enumerate(moves[4:10], start=5):
                await play(a if ply % 2 else b, viewers, move, ply)
            assert time.monotonic() - started < 8
            for viewer in viewers:
                assert viewer.moves == moves[:10]
        finally:
            for viewer in viewers:
                await viewer.close()
        assert await asyncio.to_thread(terminate_connections, site["database_url"]) >= 2
        for daphne in site["daphnes"]:
            started = time.monotonic()
            statuses = [await asyncio.to_thread(page_status, daphne.port) for _ in range(3)]
            while statuses[-1] != 200 and time.monotonic() - started < 10:
                statuses.append(await asyncio.to_thread(page_status, daphne.port))
            assert statuses[-1] == 200
            assert time.monotonic() - started < 2, statuses

    asyncio.run(scenario())


def silent_spectator(port: int, game_id: str) -> socket.socket:
    """A spectator that opens the game socket and then never reads a byte."""
    import base64
    import os

    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET /ws/game/{game_id}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  f"Origin: http://127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    return sock


def test_silent_spectators_never_delay_the_players(site):
    """Twenty spectators that never read their socket: the players' game runs to the end as usual."""
    async def scenario():
        moves = recorded_moves()
        game_id, cookies = await seat_players(site["nginx"].port)
        silent = [silent_spectator(site["daphnes"][0].port, game_id) for _ in range(20)]
        a = Viewer(site["daphnes"][0].port, game_id, cookies[0])
        b = Viewer(site["daphnes"][0].port, game_id, cookies[1])
        await a.start()
        await b.start()
        try:
            loop = asyncio.get_running_loop()
            started = loop.time()
            for ply, move in enumerate(moves, start=1):
                await play(a if ply % 2 else b, [a, b], move, ply)
            elapsed = loop.time() - started
            assert a.moves == b.moves == moves
            assert a.events == b.events == list(range(1, len(moves) + 1))
            assert a.reconnects == b.reconnects == 0
            assert elapsed < 60, f"{len(moves)} moves took {elapsed:.1f} s"
        finally:
            for viewer in (a, b):
                await viewer.close()
            for sock in silent:
                sock.close()

    asyncio.run(scenario())
