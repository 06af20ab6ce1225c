"""Faults that must never decide a game or slow the others: a Redis restart with a player thinking,
the first publish after that restart, and games whose rows another transaction holds.

Several Daphne processes behind the repository's nginx configuration, one Redis, one database.
"""

from __future__ import annotations

import asyncio
import shutil
import time

import pytest

from tests.system.processes import Daphne, Nginx, RedisServer, server_database, site_env
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
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    with server_database(tmp_path) as database_url:
        env = site_env(database_url, redis.url, tmp_path / "static")
        env.update({"CLAIM_AFTER_UNTIMED_S": str(CLAIM_AFTER_S), "GAME_DB_THREADS": str(DB_THREADS)})
        daphnes = [Daphne(tmp_path / f"daphne-{i}.log", env) for i in range(2)]
        for daphne in daphnes:
            daphne.start()
        nginx = Nginx(tmp_path / "nginx.log", [d.port for d in daphnes])
        nginx.start()
        try:
            yield {"redis": redis, "nginx": nginx, "database_url": database_url}
        finally:
            nginx.stop()
            for daphne in daphnes:
                daphne.stop()
            redis.stop()


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
