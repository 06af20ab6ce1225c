"""The websocket transport of a real Daphne process (``checkers_site.serve``) and oversized frames.

A frame over Daphne's message limit (1 MiB) used to be cut by dropping the TCP connection (close
code 1006, no reason).  It is answered with the documented ``too_large`` error and the socket is
closed with 1009 (message too big); a frame over 2,048 bytes but under the limit is answered
``too_large`` and the socket stays open (docs/protocol.md, "Errors").
"""

from __future__ import annotations

import asyncio
import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.system.processes import Daphne, RedisServer, server_database, site_env
from tests.system.test_scaleout import Visitor


@pytest.fixture
def daphne(tmp_path):
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    with server_database(tmp_path) as database_url:
        server = Daphne(tmp_path / "daphne.log", site_env(database_url, redis.url, tmp_path / "static"))
        server.start()
        try:
            yield server
        finally:
            server.stop()
            redis.stop()


async def game_socket(port: int):
    base = f"http://127.0.0.1:{port}"
    visitor = Visitor(base)
    game_id = await asyncio.to_thread(visitor.create_game, "alice", "B")
    cookie = await asyncio.to_thread(visitor.cookie_header)
    ws = await connect(f"ws://127.0.0.1:{port}/ws/game/{game_id}/", origin=base, open_timeout=5,
                       additional_headers={"Cookie": cookie})
    assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "snapshot"
    return ws


def test_a_frame_over_the_transport_limit_is_answered_too_large_then_closed_1009(daphne):
    async def scenario():
        ws = await game_socket(daphne.port)
        try:
            # Over 2,048 bytes, under 1 MiB: refused by the socket, which stays open.
            await ws.send(json.dumps({"type": "sync", "pad": "x" * 4096}))
            error = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert (error["type"], error["code"]) == ("error", "too_large")
            await ws.send(json.dumps({"type": "sync"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["type"] == "snapshot"
            # 1.5 MiB: the same error, then the closing handshake with 1009.
            await ws.send("x" * (3 * 1024 * 1024 // 2))
            error = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert error == {"type": "error", "code": "too_large",
                             "message": "Frames are limited to 2048 bytes."}
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 5)
            assert ws.close_code == 1009
        finally:
            await ws.close()

    asyncio.run(scenario())


def keepalives_answered(port: int) -> float:
    """The process's ``checkers_keepalives_answered_total``."""
    import re
    import urllib.request

    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    found = re.search(r"^checkers_keepalives_answered_total (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


def test_pings_are_answered_by_the_transport_and_keep_a_page_that_only_pings_open(daphne):
    """A page that sends nothing but its pings for longer than the socket's silence limit (10 s)
    gets every pong, from the transport, and its socket stays open; a second ping within the
    same second goes to the socket itself and is answered all the same."""
    async def scenario():
        ws = await game_socket(daphne.port)
        before = await asyncio.to_thread(keepalives_answered, daphne.port)
        try:
            for spacing in ('{"type":"ping"}', '{"type": "ping"}') * 6:   # 12 pings over 13.2 s
                await ws.send(spacing)
                while (message := json.loads(await asyncio.wait_for(ws.recv(), 5)))["type"] == "audience":
                    pass
                assert message == {"type": "pong"}
                await asyncio.sleep(1.1)
            answered = await asyncio.to_thread(keepalives_answered, daphne.port) - before
            assert answered == 12
            await ws.send('{"type":"ping"}')
            await ws.send('{"type":"ping"}')      # within the second: the socket answers it
            replies = []
            while len(replies) < 2:
                message = json.loads(await asyncio.wait_for(ws.recv(), 5))
                if message["type"] != "audience":
                    replies.append(message)
            assert replies == [{"type": "pong"}, {"type": "pong"}]
            assert await asyncio.to_thread(keepalives_answered, daphne.port) - before == 13
            await ws.send(json.dumps({"type": "sync"}))
            while (message := json.loads(await asyncio.wait_for(ws.recv(), 5)))["type"] == "audience":
                pass
            assert message["type"] == "snapshot"
        finally:
            await ws.close()

    asyncio.run(scenario())
