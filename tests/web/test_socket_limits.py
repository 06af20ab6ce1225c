"""Limits on what one client may cost the game sockets: sockets per session and per client address
(counted in Redis, game/round/admission.py), one moving-window rate shared by a session's sockets,
and a ``sync`` that costs one version read when nothing changed."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from checkers_site.asgi import application
from game.round import actions, admission, reads
from tests.web.conftest import make_browser, mark, recv, sent_since

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def start_game(black, white) -> str:
    game = await database_sync_to_async(actions.create_game)(black.player_id, black.name, "B")
    await database_sync_to_async(actions.join_game)(game.id, white.player_id, white.name)
    return game.id


def an_address() -> str:
    """A client address of this test alone (the counts live in Redis and outlast a test)."""
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"


async def open_socket(browser, game_id: str, address: str | None = None) -> WebsocketCommunicator:
    """A game socket of ``browser`` from ``address`` (scope["client"], as Daphne sets it), accepted."""
    comm = WebsocketCommunicator(application, f"/ws/game/{game_id}/", headers=browser.headers())
    if address is not None:
        comm.scope["client"] = [address, 50000]
    connected, _ = await comm.connect(timeout=5)
    assert connected
    return comm


async def admitted(comm) -> bool:
    """True when the socket got its snapshot, False when it was closed with 4429 (too many)."""
    first = await comm.receive_output(timeout=5)
    if first["type"] == "websocket.close":
        assert first == {"type": "websocket.close", "code": 4429}
        return False
    assert first["type"] == "websocket.send" and '"snapshot"' in first["text"]
    return True


@override_settings(GAME_SOCKETS_PER_SESSION=3, GAME_SOCKETS_PER_ADDRESS=0)
async def test_a_session_may_hold_only_so_many_sockets(alice, bob):
    game_id = await start_game(alice, bob)
    mine = [await open_socket(alice, game_id) for _ in range(3)]
    assert [await admitted(c) for c in mine] == [True] * 3
    extra = await open_socket(alice, game_id)
    assert not await admitted(extra)  # the fourth of one session: closed with 4429
    other = await open_socket(bob, game_id)
    assert await admitted(other)  # another session is not concerned
    await mine[0].disconnect()
    await asyncio.sleep(0.2)  # the closed socket's entry is removed in the background
    again = await open_socket(alice, game_id)
    assert await admitted(again)  # a closed socket gives its place back
    for comm in (*mine[1:], extra, other, again):
        await comm.disconnect()


@override_settings(GAME_SOCKETS_PER_SESSION=0, GAME_SOCKETS_PER_ADDRESS=2)
async def test_an_address_may_hold_only_so_many_sockets_whatever_the_sessions(alice, bob, carol):
    game_id = await start_game(alice, bob)
    address = an_address()
    first, second = await open_socket(alice, game_id, address), await open_socket(bob, game_id, address)
    assert await admitted(first) and await admitted(second)
    third = await open_socket(carol, game_id, address)
    assert not await admitted(third)
    elsewhere = await open_socket(carol, game_id, an_address())
    assert await admitted(elsewhere)
    for comm in (first, second, third, elsewhere):
        await comm.disconnect()


@override_settings(GAME_SOCKETS_PER_SESSION=2, GAME_SOCKETS_PER_ADDRESS=2)
async def test_other_sessions_of_an_address_never_keep_a_seated_player_from_the_game(alice, bob, carol):
    """A full address (here an opponent's throw-away spectator sessions on the player's network)
    refuses a spectator, not the seated player, whose sockets count against their session only."""
    game_id = await start_game(alice, bob)
    address = an_address()
    squatters = [await open_socket(b, game_id, address) for b in (carol, make_browser("dave"))]
    assert [await admitted(c) for c in squatters] == [True, True]
    late = await open_socket(make_browser("erin"), game_id, address)
    assert not await admitted(late)                          # a spectator: refused
    mine = [await open_socket(alice, game_id, address) for _ in range(3)]
    assert [await admitted(c) for c in mine] == [True, True, False]   # the seated player: up to the session's
    for comm in (*squatters, late, *mine):
        await comm.disconnect()


@override_settings(GAME_SOCKETS_PER_SESSION=1, GAME_SOCKETS_PER_ADDRESS=1)
async def test_sockets_are_let_in_when_redis_cannot_count_them(alice, bob, monkeypatch):
    game_id = await start_game(alice, bob)

    class Broken:
        """Every command of the client fails as a Redis that is down does."""

        def __getattr__(self, name):
            async def down(*args, **kwargs):
                raise redis.ConnectionError("Redis is down")
            return down

    monkeypatch.setattr(admission, "_client", lambda: Broken())
    address = an_address()
    comms = [await open_socket(alice, game_id, address) for _ in range(3)]
    assert [await admitted(c) for c in comms] == [True] * 3
    for comm in comms:
        await comm.disconnect()


@override_settings(GAME_SOCKET_RATE_LIMIT="100/second", GAME_SESSION_RATE_LIMIT="10 per 3 seconds")
async def test_a_sessions_sockets_share_one_rate_limit(alice, bob):
    """Ten sockets of one session may not send more, together, than the session may; the refused
    messages are answered ``rate_limited`` to their own socket; another session plays on."""
    game_id = await start_game(alice, bob)
    mine = [(await alice.connect(game_id))[0] for _ in range(10)]
    for comm in mine:
        for _ in range(3):
            await comm.send_json_to({"type": "ping"})
    answers = []
    for comm in mine:
        while not await comm.receive_nothing(timeout=0.3):
            answers.append(await comm.receive_json_from(timeout=1))
    kinds = [m.get("code", m["type"]) for m in answers if m["type"] != "audience"]
    assert kinds.count("pong") == 10, kinds  # 30 pings, 10 per 3 s for the whole session
    assert kinds.count("rate_limited") >= 5
    b, _ = await bob.connect(game_id)
    await b.send_json_to({"type": "ping"})
    assert (await recv(b))["type"] == "pong"
    for comm in (*mine, b):
        await comm.disconnect()


async def test_sync_at_the_current_version_answers_synced_without_reading_the_moves(alice, bob, monkeypatch):
    game_id = await start_game(alice, bob)
    a, snapshot = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    snapshots = []
    real = reads.seat_snapshots

    def counted(*args, **kwargs):
        snapshots.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(reads, "seat_snapshots", counted)
    since = mark()
    await a.send_json_to({"type": "sync", "v": snapshot["v"]})
    assert await recv(a) == {"type": "synced", "v": snapshot["v"]}
    assert snapshots == []
    assert sent_since(since, b) == []  # to its sender only: nothing was published
    # Behind the game, or without v: a snapshot, as before.
    await a.send_json_to({"type": "move", "move": "11-15", "v": snapshot["v"]})
    moved = await recv(a)
    await a.send_json_to({"type": "sync", "v": snapshot["v"]})
    answer = await recv(a)
    assert answer["type"] == "snapshot" and answer["v"] == moved["v"] and answer["moves"] == ["11-15"]
    await a.send_json_to({"type": "sync"})
    assert (await recv(a))["type"] == "snapshot"
    # The second snapshot at the same version is this process's copy (game/round/snapshots.py).
    assert len(snapshots) == 1
    for comm in (a, b):
        await comm.disconnect()


async def test_sync_with_a_bad_v_is_refused(alice, bob):
    game_id = await start_game(alice, bob)
    a, _ = await alice.connect(game_id)
    for v in ("3", -1, True, 2**40):
        await a.send_json_to({"type": "sync", "v": v})
        assert (await recv(a))["code"] == "bad_message"
    await a.disconnect()


@override_settings(GAME_SOCKETS_PER_SESSION=1, GAME_SOCKETS_PER_ADDRESS=0)
async def test_a_session_just_refused_is_refused_again_without_asking_redis(alice, bob, monkeypatch):
    """A burst of sockets over the limit costs one count in Redis: the next ones are refused by the
    process from memory (for ``REFUSED_FOR_S``), until a socket of the session closes here."""
    game_id = await start_game(alice, bob)
    first = await open_socket(alice, game_id)
    assert await admitted(first)
    second = await open_socket(alice, game_id)
    assert not await admitted(second)            # Redis counted it: over

    class Broken:                                # from now on Redis would let anything in
        async def eval(self, *args):
            raise redis.ConnectionError("Redis is down")

        def pipeline(self, *args, **kwargs):
            raise redis.ConnectionError("Redis is down")

    monkeypatch.setattr(admission, "_client", lambda: Broken())
    third = await open_socket(alice, game_id)
    assert not await admitted(third)             # refused from memory, Redis not asked
    assert await admitted(await open_socket(bob, game_id))   # another session is not concerned
    await first.disconnect()
    await asyncio.sleep(0.2)                     # released in the background
    again = await open_socket(alice, game_id)
    assert await admitted(again)                 # its socket closed here: asked again (let in)
    for comm in (second, third, again):
        await comm.disconnect()


@override_settings(GAME_SOCKET_RATE_LIMIT="5/second", GAME_SESSION_RATE_LIMIT="", GAME_ADDRESS_RATE_LIMIT="")
async def test_a_socket_that_keeps_sending_over_its_rate_is_closed(alice, bob):
    """More than 50 refused messages in 10 s: a flood, not a page; the socket is closed with 4429
    (the page gives up) and the game goes on for the others."""
    game_id = await start_game(alice, bob)
    a, _ = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    for _ in range(60):
        await a.send_json_to({"type": "ping"})
    outputs = []
    while True:
        output = await a.receive_output(timeout=5)
        outputs.append(output)
        if output["type"] == "websocket.close":
            break
    texts = [output.get("text", "") for output in outputs]
    assert sum('"pong"' in t for t in texts) == 5 and sum('"rate_limited"' in t for t in texts) >= 1
    assert outputs[-1] == {"type": "websocket.close", "code": 4429}
    await b.send_json_to({"type": "ping"})
    assert (await recv(b))["type"] == "pong"
    await b.disconnect()
