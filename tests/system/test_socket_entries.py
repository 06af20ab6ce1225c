"""The counts of a client's sockets (game/round/admission.py) after a server process is killed.

Two Daphne processes behind the repository's nginx, one Redis.  One browser holds as many game
sockets as its session may, over both processes; one process is killed with SIGKILL (its sockets
never say goodbye): the browser reopens the lost sockets through nginx, and within a few seconds
all of them are let in again (the dead process's entries stop counting once its heartbeat
expires), instead of being refused with 4429 for a minute.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from tests.system.processes import running_site
from tests.system.test_faults import new_game

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")

#: Game sockets one session may hold (GAME_SOCKETS_PER_SESSION) in this test.
LIMIT = 6
#: Seconds within which every lost socket must be back.
BACK_WITHIN_S = 9


@pytest.fixture
def site(tmp_path):
    with running_site(tmp_path, env={"GAME_SOCKETS_PER_SESSION": str(LIMIT)}) as site:
        yield site


async def open_one(port: int, game_id: str, cookie: str):
    """A game socket through nginx: ``(socket, its upstream)`` once its snapshot came, or
    ``(None, close code)`` when it was refused."""
    ws = await connect(f"ws://127.0.0.1:{port}/ws/game/{game_id}/", origin=f"http://127.0.0.1:{port}",
                       additional_headers={"Cookie": cookie}, open_timeout=5)
    try:
        first = json.loads(await asyncio.wait_for(ws.recv(), 5))
    except ConnectionClosed as exc:
        return None, exc.rcvd.code if exc.rcvd else None
    assert first["type"] == "snapshot"
    return ws, ws.response.headers.get("X-Upstream", "")


async def keep_pinging(sockets: list) -> None:
    """Ping every open socket every 3 s, as the page does (a silent socket is closed after 10 s)."""
    while True:
        await asyncio.sleep(3)
        for ws in list(sockets):
            with contextlib.suppress(WebSocketException):
                await ws.send(json.dumps({"type": "ping"}))


def test_a_killed_processs_sockets_stop_counting_within_seconds(site):
    async def scenario():
        port = site["nginx"].port
        game_id, cookies = await new_game(port)
        carol = cookies[2]
        held: list = []
        pinger = asyncio.create_task(keep_pinging(held))
        try:
            upstreams = []
            for _ in range(LIMIT):
                ws, upstream = await open_one(port, game_id, carol)
                assert ws is not None, f"refused with {upstream} before the limit"
                held.append(ws)
                upstreams.append(upstream)
            ws, code = await open_one(port, game_id, carol)
            assert ws is None and code == 4429          # the limit holds
            victim = site["daphnes"][0]
            on_victim = [w for w, u in zip(held, upstreams, strict=True) if u.endswith(f":{victim.port}")]
            assert on_victim and len(on_victim) < LIMIT, upstreams

            victim.kill()
            killed = time.monotonic()
            for ws in on_victim:
                held.remove(ws)
            refusals = 0
            while len(held) < LIMIT:
                assert time.monotonic() - killed < BACK_WITHIN_S, \
                    f"{LIMIT - len(held)} sockets still refused after {BACK_WITHIN_S} s ({refusals} refusals)"
                try:
                    ws, _ = await open_one(port, game_id, carol)
                except (OSError, TimeoutError, WebSocketException):
                    ws = None
                if ws is None:
                    refusals += 1
                    await asyncio.sleep(0.5)
                    continue
                held.append(ws)
            back_s = time.monotonic() - killed
            print(f"{len(on_victim)} sockets lost with the killed process, all back {back_s:.1f} s "
                  f"after the kill ({refusals} refusals meanwhile)")
            ws, code = await open_one(port, game_id, carol)
            assert ws is None and code == 4429          # and the limit still holds
        finally:
            pinger.cancel()
            for ws in held:
                with contextlib.suppress(Exception):
                    await ws.close()

    asyncio.run(scenario())
