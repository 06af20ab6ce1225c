"""HTTP rate limits (game/http_limits.py) on analysis searches and new games, per session and per
client address; and the computer's engine capacity, which analysis searches cannot take."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
import uuid

import pytest
from channels.db import database_sync_to_async
from django.test import Client, override_settings

from game import http_limits, rules
from game.computer import player as computer_player
from game.computer import seat as computer
from game.models import Game
from game.round import actions
from tests.web.conftest import recv

pytestmark = pytest.mark.django_db(transaction=True)

WIN_IN_ONE = "B:W18,27:B14,K22"


def an_address() -> str:
    """A client address of this test alone (the counts live in Redis and outlast a test)."""
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"


def search(client, time_ms: int = 1):
    return client.post("/analysis/search", data=json.dumps({"fen": WIN_IN_ONE, "time_ms": time_ms}),
                       content_type="application/json")


@override_settings(ANALYSIS_RATE_LIMIT_SESSION="3/minute", ANALYSIS_RATE_LIMIT_ADDRESS="")
def test_analysis_searches_are_limited_per_session():
    client = Client(REMOTE_ADDR=an_address())
    client.get("/")  # a session with a player id
    assert [search(client).status_code for _ in range(3)] == [200] * 3
    refused = search(client)
    assert refused.status_code == 429
    assert refused.json()["error"] == "rate_limited" and refused.json()["message"]
    assert 1 <= int(refused["Retry-After"]) <= 60
    other = Client(REMOTE_ADDR=an_address())
    other.get("/")
    assert search(other).status_code == 200  # another session searches on


@override_settings(ANALYSIS_RATE_LIMIT_SESSION="", ANALYSIS_RATE_LIMIT_ADDRESS="4/minute")
def test_analysis_searches_are_limited_per_address_even_without_a_session():
    """Clients that drop their cookies (a new session, or none, each time) are counted by address."""
    address = an_address()
    codes = [search(Client(REMOTE_ADDR=address)).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 200, 429]
    assert search(Client(REMOTE_ADDR=an_address())).status_code == 200


@override_settings(GAME_CREATE_RATE_LIMIT_SESSION="2/minute", GAME_CREATE_RATE_LIMIT_ADDRESS="")
@pytest.mark.parametrize(("path", "form"), [
    ("/", {"name": "alice", "color": "B", "time_control": "untimed"}),
    ("/computer", {"name": "alice", "level": "1", "color": "B"}),
])
def test_new_games_are_limited_per_session(path, form):
    client = Client(REMOTE_ADDR=an_address())
    codes = [client.post(path, form).status_code for _ in range(3)]
    assert codes == [302, 302, 429]
    refused = client.post(path, form)
    assert refused.status_code == 429 and refused["Content-Type"].startswith("text/plain")
    assert b"Too many new games" in refused.content


@override_settings(GAME_CREATE_RATE_LIMIT_SESSION="", GAME_CREATE_RATE_LIMIT_ADDRESS="3/minute")
def test_new_games_are_limited_per_address():
    address = an_address()
    form = {"name": "alice", "color": "B", "time_control": "untimed"}
    codes = [Client(REMOTE_ADDR=address).post("/", form).status_code for _ in range(4)]
    assert codes == [302, 302, 302, 429]


def test_requests_are_let_through_when_redis_cannot_count_them(monkeypatch):
    class Broken:
        def hit(self, *args):
            from limits.errors import StorageError
            raise StorageError(ConnectionError("Redis is down"))

    monkeypatch.setattr(http_limits, "_limiter", lambda url, prefix: Broken())
    with override_settings(GAME_CREATE_RATE_LIMIT_SESSION="1/minute"):
        client = Client(REMOTE_ADDR=an_address())
        form = {"name": "alice", "color": "B", "time_control": "untimed"}
        assert [client.post("/", form).status_code for _ in range(3)] == [302] * 3


@pytest.fixture
def thread_engines(settings):
    """Engine pools of threads, built afresh from the settings of the test."""
    settings.ENGINE_POOL = "thread"
    settings.COMPUTER_MIN_THINK_MS = 0
    old = computer_player._pool, computer_player._analysis_pool
    computer_player._pool = computer_player._analysis_pool = None
    yield settings
    for pool in (computer_player._pool, computer_player._analysis_pool):
        if pool is not None:
            pool.shutdown()
    computer_player._pool, computer_player._analysis_pool = old


@pytest.mark.asyncio
async def test_an_analysis_flood_does_not_hold_up_the_computers_move(thread_engines, alice):
    """Twelve anonymous clients ask for 3 s searches at once; the computer (level 1, Black, to
    move) still replies within a second and a half, and the analysis beyond its share is ``busy``."""
    thread_engines.ANALYSIS_RATE_LIMIT_ADDRESS = ""

    def flood_one():
        client = Client(REMOTE_ADDR=an_address())
        return client.post("/analysis/search", data=json.dumps({"fen": rules.INITIAL_FEN, "time_ms": 3000}),
                           content_type="application/json")

    loop = asyncio.get_running_loop()
    with concurrent.futures.ThreadPoolExecutor(12) as clients:  # twelve requests at once
        flood = [loop.run_in_executor(clients, flood_one) for _ in range(12)]
        codes = await _computer_reply_and_flood(alice, flood)
    assert 503 in codes and 200 in codes  # analysis ran within its own share, the rest was busy


async def _computer_reply_and_flood(alice, flood) -> list[int]:
    await asyncio.sleep(0.5)  # the searches are running
    black, white = computer.seats(alice.player_id, alice.name, "W", 1)
    game = await database_sync_to_async(actions.start_game)(black=black, white=white)
    started = time.monotonic()
    comm, _ = await alice.connect(game.id)  # wakes the computer, which is to move
    event = await recv(comm, timeout=20)
    took = time.monotonic() - started
    assert event["type"] == "move" and event["ply"] == 1
    await comm.disconnect()
    codes = sorted(response.status_code for response in await asyncio.gather(*flood))
    assert took < 1.5, f"the computer's move took {took:.2f} s behind the analysis searches"
    return codes


@pytest.mark.asyncio
async def test_rematches_count_against_the_new_game_limits(alice, settings):
    """The computer grants a rematch at once: resigning and asking again would make games without end.
    Each rematch proposal counts as a new game of the session; over the limit it is refused
    ``rate_limited`` to its sender only, and no game is made."""
    settings.COMPUTER_MIN_THINK_MS = 0
    settings.GAME_CREATE_RATE_LIMIT_SESSION = "2/minute"
    settings.GAME_CREATE_RATE_LIMIT_ADDRESS = ""
    black, white = computer.seats(alice.player_id, "alice", "B", 1)
    game = await database_sync_to_async(actions.start_game)(black=black, white=white)
    game_id = game.id
    for _ in range(2):
        comm, _snap = await alice.connect(game_id)
        await comm.send_json_to({"type": "resign"})
        assert (await recv(comm))["what"] == "resigned"
        await comm.send_json_to({"type": "rematch_offer"})
        while (event := await recv(comm, timeout=20)).get("what") != "rematch_started":
            pass
        game_id = event["state"]["next_game"]
        await comm.disconnect()
    comm, _snap = await alice.connect(game_id)
    await comm.send_json_to({"type": "resign"})
    assert (await recv(comm))["what"] == "resigned"
    games = await database_sync_to_async(Game.objects.count)()
    await comm.send_json_to({"type": "rematch_offer"})
    while (event := await recv(comm, timeout=10))["type"] == "chat":
        pass
    assert event["type"] == "error" and event["code"] == "rate_limited"
    assert "Too many new games; try again in " in event["message"]
    await asyncio.sleep(0.5)
    assert await database_sync_to_async(Game.objects.count)() == games
    finished = await database_sync_to_async(Game.objects.get)(pk=game_id)
    assert finished.rematch_offer == "" and finished.next_game is None
    await comm.disconnect()
