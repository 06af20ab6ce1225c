"""Faults that must never decide a game or slow the others: a Redis restart with a player thinking,
the first publish after that restart, and games whose rows another transaction holds.

Several Daphne processes behind the repository's nginx configuration, one Redis, one database.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import time

import pytest

from game.lobby.pairing import POOLS
from tests.system.processes import running_site
from tests.system.test_scaleout import Viewer, Visitor

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")

#: Seconds the player to move of an untimed game must be away before the opponent may claim.
CLAIM_AFTER_S = 4
#: Database threads a server process has for its game sockets (few, so that they are easy to hold).
DB_THREADS = 2


class Player(Viewer):
    """A viewer that also keeps every error and update it is sent."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.errors: list[dict] = []
        self.updates: list[dict] = []
        self.received: dict[str, float] = {}     # move text -> monotonic time of its arrival

    def apply(self, message: dict) -> None:
        if message["type"] == "error":
            self.errors.append(message)
        elif message["type"] == "update":
            self.updates.append(message)
        elif message["type"] == "move":
            self.received.setdefault(message["move"], time.monotonic())
        super().apply(message)


@pytest.fixture
def site(tmp_path):
    env = {"CLAIM_AFTER_UNTIMED_S": str(CLAIM_AFTER_S), "GAME_DB_THREADS": str(DB_THREADS)}
    with running_site(tmp_path, env=env) as site:
        yield site


async def new_game(port: int) -> tuple[str, list[str]]:
    """A game Alice (Black) and Bob (White) sit in, and the cookies of Alice, Bob and a spectator."""
    base = f"http://127.0.0.1:{port}"
    alice, bob, carol = Visitor(base), Visitor(base), Visitor(base)
    game_id = await asyncio.to_thread(alice.create_game, "alice", "B")
    await asyncio.to_thread(bob.join, game_id, "bob")
    return game_id, [await asyncio.to_thread(v.cookie_header) for v in (alice, bob, carol)]


async def wait_for(condition, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def test_a_thinking_player_survives_a_redis_restart_and_the_next_move_is_prompt(site):
    """Black is connected and thinking past the claim limit when Redis restarts (losing every
    record of who is connected): White's claim is still refused. Then the first move after the
    restart reaches the opponent at once, not after the republish half a second later."""
    async def scenario():
        port = site["nginx"].port
        game_id, cookies = await new_game(port)
        a, b = Player(port, game_id, cookies[0]), Player(port, game_id, cookies[1])
        await a.start()
        await b.start()
        try:
            await b.send({"type": "claim_win"})
            await wait_for(lambda: b.errors)
            assert b.errors[-1]["code"] == "opponent_present"
            # A move each, so every process has published (and pooled its connections).
            await a.send({"type": "move", "move": "11-15", "v": a.v})
            await wait_for(lambda: len(b.moves) == 1)
            await b.send({"type": "move", "move": "23-19", "v": b.v})
            await wait_for(lambda: len(a.moves) == 2)
            await asyncio.sleep(CLAIM_AFTER_S + 0.5)    # Black thinks past the limit, connected
            snapshots = (a.snapshots, b.snapshots)
            site["redis"].kill()
            site["redis"].start()
            await wait_for(lambda: a.snapshots > snapshots[0] and b.snapshots > snapshots[1])
            errors = len(b.errors)
            await b.send({"type": "claim_win"})
            await wait_for(lambda: len(b.errors) > errors or b.updates)
            assert not b.updates, b.updates
            assert b.errors[-1]["code"] == "opponent_present", b.errors[-1]
            started = time.monotonic()
            await a.send({"type": "move", "move": "8-11", "v": a.v})
            await wait_for(lambda: "8-11" in b.received)
            assert b.received["8-11"] - started < 0.3
        finally:
            for viewer in (a, b):
                await viewer.close()

    asyncio.run(scenario())


def test_games_whose_rows_are_held_leave_the_other_games_their_pace(site):
    """Another transaction holds the rows of twice as many games as a process has database threads
    (a stuck job, an administrator's open transaction), each with a move waiting: an unrelated
    game's move still reaches the opponent at once, and the held games' moves land afterwards."""
    if not site["database_url"].startswith("postgres"):
        pytest.skip("rows lock on PostgreSQL; SQLite locks the whole database")
    import psycopg

    async def scenario():
        port = site["nginx"].port
        games = [await new_game(port) for _ in range(2 * DB_THREADS + 1)]
        (honest_id, honest_cookies), held = games[0], games[1:]
        a, b = Player(port, honest_id, honest_cookies[0]), Player(port, honest_id, honest_cookies[1])
        movers = [Player(port, game_id, cookies[0]) for game_id, cookies in held]
        for viewer in (a, b, *movers):
            await viewer.start()
        holder = await psycopg.AsyncConnection.connect(site["database_url"])
        try:
            async with holder.transaction():
                await holder.execute("SELECT id FROM game_game WHERE id = ANY(%s) FOR UPDATE",
                                     [[game_id for game_id, _ in held]])
                for mover in movers:
                    await mover.send({"type": "move", "move": "11-15", "v": mover.v})
                await asyncio.sleep(0.3)
                started = time.monotonic()
                await a.send({"type": "move", "move": "11-15", "v": a.v})
                await wait_for(lambda: "11-15" in b.received, timeout_s=10)
                assert b.received["11-15"] - started < 1.0
                assert not any(m.moves for m in movers)
            for mover in movers:        # the rows are free: each held game's move lands
                await wait_for(lambda mover=mover: mover.moves == ["11-15"], timeout_s=10)
        finally:
            await holder.close()
            for viewer in (a, b, *movers):
                await viewer.close()

    asyncio.run(scenario())


def test_one_session_cannot_open_sockets_without_end_and_the_players_play_on(site):
    """One session opens far more game sockets than it may (through nginx, over both processes):
    those over the limit are closed with 4429, and the players' moves still go through at once."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def scenario():
        port = site["nginx"].port
        game_id, cookies = await new_game(port)
        a, b = Player(port, game_id, cookies[0]), Player(port, game_id, cookies[1])
        await a.start()
        await b.start()
        opened, refused = [], 0
        try:
            for _ in range(24):   # the default limit is 16 a session
                ws = await connect(f"ws://127.0.0.1:{port}/ws/game/{game_id}/",
                                   origin=f"http://127.0.0.1:{port}",
                                   additional_headers={"Cookie": cookies[2]}, open_timeout=5)
                try:
                    await asyncio.wait_for(ws.recv(), 5)
                    opened.append(ws)
                except ConnectionClosed as exc:
                    assert exc.rcvd.code == 4429
                    refused += 1
            assert (len(opened), refused) == (16, 8)
            started = time.monotonic()
            await a.send({"type": "move", "move": "11-15", "v": a.v})
            await wait_for(lambda: "11-15" in b.received)
            assert b.received["11-15"] - started < 0.5
        finally:
            for ws in opened:
                await ws.close()
            for viewer in (a, b):
                await viewer.close()

    asyncio.run(scenario())


@pytest.mark.alone
def test_a_burst_of_lobby_sockets_waits_for_redis_connections(tmp_path):
    """Hundreds of home pages open their lobby socket at once, from many addresses, on a server
    whose channel layer may hold few Redis connections: every socket gets its pool counts, and
    two players who seek meanwhile are paired."""
    from websockets.asyncio.client import connect

    # The lobby's socket limits are off here: this is about the pools, not about one client.
    env = {"CHANNELS_MAX_CONNECTIONS": "2", "LOBBY_SOCKETS_PER_SESSION": "0", "LOBBY_SOCKETS_PER_ADDRESS": "0"}
    with running_site(tmp_path, daphnes=1, env=env) as site:
        port = site["nginx"].port
        base = f"http://127.0.0.1:{port}"
        cookies = [Visitor(base).cookie_header() for _ in range(4)]

        async def home_page(address: str, cookie: str) -> int:
            """One home page's lobby socket from ``address``: the pool counts it got."""
            async with connect(f"ws://127.0.0.1:{port}/ws/lobby/", origin=base, open_timeout=20,
                               additional_headers={"Cookie": cookie}, local_addr=(address, 0)) as ws:
                counts = 0
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(20):
                        while counts < len(POOLS):
                            counts += json.loads(await ws.recv())["type"] == "pool"
                return counts

        async def seeker(cookie: str) -> dict:
            async with connect(f"ws://127.0.0.1:{port}/ws/lobby/", origin=base, open_timeout=20,
                               additional_headers={"Cookie": cookie}) as ws:
                await ws.send(json.dumps({"type": "seek", "name": "seeker"}))
                async with asyncio.timeout(30):
                    while True:
                        message = json.loads(await ws.recv())
                        if message["type"] in ("paired", "error"):
                            return message

        async def scenario():
            crowd = [home_page(f"127.0.1.{1 + i % 20}", cookies[i % 2]) for i in range(500)]
            results = await asyncio.gather(*crowd, seeker(cookies[2]), seeker(cookies[3]))
            counts, paired = results[:-2], results[-2:]
            assert [m["type"] for m in paired] == ["paired", "paired"], paired
            assert counts == [len(POOLS)] * len(counts)

        asyncio.run(scenario())
