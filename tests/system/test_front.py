"""The production front (``deploy/nginx/checkers.conf``) against slow clients.

Daphne has no timeout for a request's header: 1,100 connections that send half a request and
wait take a descriptor each, and a Daphne process with the usual 1,024 open files then refuses
every honest visitor until they go away.  Behind the repository's nginx configuration (two Daphne
processes and nginx, each started with that usual limit) the same slow clients cost nothing: an
honest visitor still gets the home page and opens a game socket within seconds, and nginx drops
the slow ones after its header timeout.
"""

from __future__ import annotations

import asyncio
import json
import resource
import shutil
import socket
import time
import urllib.request

import pytest
from websockets.asyncio.client import connect

from tests.system.processes import Daphne, Nginx, RedisServer, server_database, site_env
from tests.system.test_scaleout import Visitor

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")

#: Slow clients: more than a process with the usual limit of open files can hold.
SLOW_CLIENTS = 1100
USUAL_NOFILE = 1024
#: nginx's client_header_timeout in deploy/nginx/checkers.conf, seconds.
HEADER_TIMEOUT_S = 10
PARTIAL_REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow"


@pytest.fixture
def front(tmp_path):
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    with server_database(tmp_path) as database_url:
        env = site_env(database_url, redis.url, tmp_path / "static")
        daphnes = [Daphne(tmp_path / f"daphne-{i}.log", env, nofile=USUAL_NOFILE) for i in range(2)]
        for daphne in daphnes:
            daphne.start()
        nginx = Nginx(tmp_path / "nginx.log", [d.port for d in daphnes], static_root=tmp_path / "static",
                      nofile=USUAL_NOFILE)
        nginx.start()
        try:
            yield {"daphnes": daphnes, "nginx": nginx}
        finally:
            nginx.stop()
            for daphne in daphnes:
                daphne.stop()
            redis.stop()


@pytest.fixture
def many_open_files():
    """This test process may hold the slow clients' sockets (its soft limit raised, then restored)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = SLOW_CLIENTS + 512
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"the hard limit of open files is {hard}, below {needed}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_slow_clients(port: int, count: int, sockets: list[socket.socket], budget_s: float = 30) -> None:
    """Append to ``sockets`` up to ``count`` connections to ``port``, each having sent half a
    request header; stop early after ten connections that fail or the time budget."""
    failures = 0
    deadline = time.monotonic() + budget_s
    while len(sockets) < count and failures < 10 and time.monotonic() < deadline:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=1)
        except OSError:
            failures += 1
            continue
        sockets.append(sock)
        try:
            sock.sendall(PARTIAL_REQUEST)
        except OSError:
            failures += 1


async def honest_visit(port: int, game_id: str, cookie: str) -> dict:
    """The home page, then the game's socket up to its snapshot; the snapshot."""
    base = f"http://127.0.0.1:{port}"
    page = await asyncio.to_thread(lambda: urllib.request.urlopen(base + "/", timeout=5).read())
    assert b"Create game" in page
    async with connect(f"ws://127.0.0.1:{port}/ws/game/{game_id}/", origin=base, open_timeout=5,
                       additional_headers={"Cookie": cookie}) as ws:
        return json.loads(await asyncio.wait_for(ws.recv(), 5))


def test_slow_clients_do_not_lock_out_honest_ones(front, many_open_files):
    port = front["nginx"].port
    visitor = Visitor(f"http://127.0.0.1:{port}")
    game_id = visitor.create_game("alice", "B")
    cookie = visitor.cookie_header()
    slow: list[socket.socket] = []
    try:
        opened = time.monotonic()
        open_slow_clients(port, SLOW_CLIENTS, slow)
        started = time.monotonic()
        snapshot = asyncio.run(asyncio.wait_for(honest_visit(port, game_id, cookie), 10))
        assert snapshot["type"] == "snapshot"
        assert time.monotonic() - started < 5
        assert len(slow) == SLOW_CLIENTS, f"only {len(slow)} slow clients could connect"
        # nginx drops the slow clients once its header timeout has passed.
        first = slow[0]
        first.settimeout(max(0.1, opened + HEADER_TIMEOUT_S + 5 - time.monotonic()))
        try:
            answer = first.recv(4096)
        except ConnectionResetError:
            answer = b""
        assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:80]
        assert time.monotonic() - opened < HEADER_TIMEOUT_S + 5
    finally:
        for sock in slow:
            sock.close()
