"""Game events through the process's hub (game/round/fanout/) with the real Redis and database."""

from __future__ import annotations

import asyncio

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings

from game.round import actions, fanout, reads
from game.round.fanout import hubs as fanout_hub
from game.round.fanout import line as fanout_line
from game.round.fanout import publish
from game.round.fanout import transport as fanout_transport
from tests.system.processes import free_port
from tests.web.conftest import mark, recv, sent_since

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def start_game(alice, bob) -> str:
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    return game.id


def kill_subscriptions() -> int:
    """Close every pub/sub connection Redis has (as a Redis restart or a network fault would)."""
    return redis.Redis.from_url(settings.REDIS_URL).client_kill_filter(_type="pubsub")


async def next_snapshot(comm, timeout: float = 5) -> dict:
    """The next ``snapshot`` on ``comm``, passing over events."""
    async def wait():
        while True:
            message = await recv(comm, timeout=timeout)
            if message["type"] == "snapshot":
                return message
    return await asyncio.wait_for(wait(), timeout)


@pytest.mark.alone
async def test_lost_subscription_resynchronises_every_socket(alice, bob, carol):
    """A move published while the process's subscription is down is lost to pub/sub; when the hub
    subscribes again every socket gets a snapshot that has it."""
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    hub = fanout.hub()
    assert hub.subscriptions == 1
    assert await asyncio.to_thread(kill_subscriptions) >= 1
    outcome = await database_sync_to_async(actions.play_move)(game_id, alice.player_id, "11-15", snap["v"])
    await publish(game_id, outcome.events)
    for comm in (a, b, c):
        snapshot = await next_snapshot(comm)
        assert snapshot["moves"] == ["11-15"]
        assert snapshot["v"] == snap["v"] + 1
    assert hub.subscriptions == 2
    # And events flow again: White's reply reaches all three as a plain event.
    await b.send_json_to({"type": "move", "move": "22-18", "v": snap["v"] + 1})
    for comm in (a, b, c):
        event = await recv(comm)
        assert (event["type"], event["move"], event["v"]) == ("move", "22-18", snap["v"] + 2)
    for comm in (a, b, c):
        await comm.disconnect()
    assert game_id not in hub.members


async def test_events_reach_only_the_game_they_belong_to(alice, bob, carol):
    first = await start_game(alice, bob)
    second = await start_game(alice, bob)
    a, snap = await alice.connect(first)
    c, _ = await carol.connect(second)
    since = mark()
    await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
    assert (await recv(a))["move"] == "11-15"
    assert sent_since(since, c) == []     # the move was published to the first game only
    assert set(fanout.hub().members) == {first, second}
    await a.disconnect()
    await c.disconnect()
    assert fanout.hub().members == {}


async def test_socket_closes_4503_when_redis_is_unreachable(alice, bob, monkeypatch):
    """No subscription within the join timeout: the socket is accepted and closed with 4503, so the
    page reconnects later instead of showing a game that would never move."""
    game_id = await start_game(alice, bob)
    monkeypatch.setattr(settings, "REDIS_URL", f"redis://127.0.0.1:{free_port()}/0")  # nobody listens
    monkeypatch.setattr(fanout_hub, "JOIN_TIMEOUT_S", 0.5)
    from channels.testing import WebsocketCommunicator

    from checkers_site.asgi import application
    comm = WebsocketCommunicator(application, f"/ws/game/{game_id}/", headers=alice.headers())
    connected, _ = await comm.connect(timeout=5)
    assert connected
    closed = await comm.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4503}
    await fanout.hub().close()


async def test_audience_notice_carries_the_version_so_a_missed_event_is_noticed(alice, bob):
    """A move committed whose event was never published (its server process died between the two):
    the next audience notice (here: the mover's page reconnecting) says the game's version, which
    tells the opponent's page it is behind."""
    game_id = await start_game(alice, bob)
    b, snap = await bob.connect(game_id)
    await database_sync_to_async(actions.play_move)(game_id, alice.player_id, "11-15", snap["v"])
    fanout.hub().forget_snapshots()             # another process keeps none of this one's snapshots
    a, snap_a = await alice.connect(game_id)   # the mover's page, back on another process
    assert snap_a["v"] == snap["v"] + 1

    async def notice():
        while True:
            message = await b.receive_json_from(timeout=5)
            assert message["type"] == "audience", message
            if message["online"] == {"B": True, "W": True}:
                return message
    message = await asyncio.wait_for(notice(), 5)
    assert message["game_v"] == snap["v"] + 1
    await a.disconnect()
    await b.disconnect()


async def test_a_snapshot_never_follows_a_newer_event(alice, bob, carol):
    """The waiting player and a spectator ask for snapshots while the opponent moves: whatever the
    interleaving, no socket gets a snapshot older than an event it already got (the page would
    go back a move and wait forever)."""
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    game = (await database_sync_to_async(reads.snapshot)(game_id, None))
    from game import rules
    position = rules.Position.from_fen(game["state"]["fen"])
    v = snap["v"]
    for trial in range(30):
        mover, waiting = (a, b) if trial % 2 == 0 else (b, a)
        move = position.legal_moves()[0]
        await asyncio.gather(mover.send_json_to({"type": "move", "move": str(move), "v": v}),
                             waiting.send_json_to({"type": "sync"}),
                             c.send_json_to({"type": "sync"}))
        position = position.play(move)
        v += 1
        for comm in (a, b, c):
            # The mover gets its move; the others their move and their snapshot, in either order.
            got = [await recv(comm) for _ in range(1 if comm is mover else 2)]
            assert [m["type"] for m in got if m["type"] == "move"] == ["move"]
            assert got[-1]["v"] == v, f"trial {trial}: {[(m['type'], m['v']) for m in got]}"
        if position.legal_moves() == []:
            break
    for comm in (a, b, c):
        await comm.disconnect()


def kill_publishing_connections() -> int:
    """Close every connection the hub publishes on, as a Redis restart does to a pool's idle ones."""
    admin = redis.Redis.from_url(settings.REDIS_URL)
    try:
        return sum(admin.client_kill_filter(_id=client["id"]) for client in admin.client_list()
                   if client.get("name") == fanout.PUBLISH_CLIENT_NAME)
    finally:
        admin.close()


@pytest.mark.alone
async def test_the_first_publish_after_its_connections_died_is_not_late(alice, bob):
    """A pooled publishing connection that Redis closed (a restart) is replaced at once: the
    opponent gets the move without waiting for the republish 0.5 s later."""
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
    assert (await recv(a))["move"] == (await recv(b))["move"] == "11-15"
    assert await asyncio.to_thread(kill_publishing_connections) >= 1
    started = asyncio.get_running_loop().time()
    await b.send_json_to({"type": "move", "move": "22-18", "v": snap["v"] + 1})
    event = await recv(a)
    assert event["move"] == "22-18"
    assert asyncio.get_running_loop().time() - started < 0.4
    for comm in (a, b):
        await comm.disconnect()


def game_channels() -> set[str]:
    """The game channels someone is subscribed to in Redis (the hub's link channel included)."""
    admin = redis.Redis.from_url(settings.REDIS_URL)
    try:
        prefix = fanout_transport.prefix()
        return {name.decode()[len(prefix):] for name in admin.pubsub_channels(prefix + "*")}
    finally:
        admin.close()


async def test_a_process_subscribes_to_the_games_it_has_sockets_of_only(alice, bob, carol):
    """The first socket of a game subscribes the process to it, the last one to leave unsubscribes
    it; a game with no socket here is never read here."""
    first = await start_game(alice, bob)
    second = await start_game(alice, bob)
    a, _ = await alice.connect(first)
    assert {fanout.LINK_CHANNEL, first} <= game_channels() and second not in game_channels()
    b, _ = await bob.connect(first)
    c, _ = await carol.connect(second)
    assert {first, second} <= game_channels()
    assert fanout.hub().confirmed == {first, second}
    await c.disconnect()
    await asyncio.sleep(0.2)
    assert first in game_channels() and second not in game_channels()
    # A move of the game nobody here watches any more is not read by this process at all.
    admin = redis.Redis.from_url(settings.REDIS_URL)
    assert admin.pubsub_numsub(fanout.channel(second)) == [(fanout.channel(second).encode(), 0)]
    admin.close()
    await a.disconnect()
    assert first in game_channels()  # Bob is still here
    await b.disconnect()
    await asyncio.sleep(0.2)
    assert first not in game_channels() and fanout.LINK_CHANNEL in game_channels()
    assert fanout.hub().confirmed == set()


async def test_sockets_that_come_and_go_leave_the_game_subscribed_while_one_is_there(alice, bob):
    """A game's only socket leaves and another joins at once, many times over (unsubscribe and
    subscribe crossing in Redis): the one that stays gets every move."""
    game_id = await start_game(alice, bob)
    for _ in range(15):
        comm, snap = await alice.connect(game_id)
        await comm.disconnect()
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    await b.disconnect()
    await asyncio.sleep(0.1)
    assert game_id in game_channels()
    outcome = await database_sync_to_async(actions.play_move)(game_id, alice.player_id, "11-15", snap["v"])
    await publish(game_id, outcome.events)
    event = await recv(a)
    assert (event["type"], event["move"], event["v"]) == ("move", "11-15", snap["v"] + 1)
    await a.disconnect()


@pytest.mark.alone
async def test_a_socket_that_joins_while_the_link_is_down_gets_its_game_subscribed(alice, bob, monkeypatch):
    """The link to Redis drops; a socket of a game new to the process joins before it is back:
    once it is back, the game's events reach that socket as events."""
    monkeypatch.setattr(fanout_line, "RETRY_S", 2.0)  # time to join while the link is down
    other = await start_game(alice, bob)
    keep, _ = await bob.connect(other)   # the process has a socket, so the loss is noticed
    game_id = await start_game(alice, bob)
    hub = fanout.hub()
    assert await asyncio.to_thread(kill_subscriptions) >= 1
    for _ in range(100):
        if hub.lost:
            break
        await asyncio.sleep(0.01)
    assert hub.lost
    a, snap = await alice.connect(game_id)
    assert hub.lost and game_id not in hub.confirmed
    for _ in range(300):
        if game_id in hub.confirmed:
            break
        await asyncio.sleep(0.02)
    assert game_id in hub.confirmed and not hub.lost
    outcome = await database_sync_to_async(actions.play_move)(game_id, alice.player_id, "11-15", snap["v"])
    await publish(game_id, outcome.events)
    async def the_move():
        while True:
            message = await recv(a)
            if message["type"] == "move":
                return message
    event = await asyncio.wait_for(the_move(), 5)
    assert (event["move"], event["v"]) == ("11-15", snap["v"] + 1)
    await a.disconnect()
    await keep.disconnect()


class Listener:
    """A member of the hub that keeps what it is given (the hub's side of a game socket)."""

    def __init__(self):
        self.texts: list[str] = []
        self.resyncs = 0

    async def deliver(self, copies, follow):
        self.texts.extend(text for _, text in copies)

    def resync(self):
        self.resyncs += 1


@pytest.mark.alone
async def test_a_join_waits_for_a_late_confirmation_while_the_link_is_up(alice, bob, monkeypatch):
    """A process too busy to read Redis's confirmation of a game's subscription within
    ``JOIN_TIMEOUT_S`` (a crowd connecting at once) still lets the socket in: the link is up, so
    the confirmation comes late, not never, and refusing sent the page away to reconnect."""
    monkeypatch.setattr(fanout_hub, "JOIN_TIMEOUT_S", 0.3)
    other = await start_game(alice, bob)
    keep, _ = await bob.connect(other)   # the process's link is up and confirmed
    game_id = await start_game(alice, bob)
    hub, listener = fanout.hub(), Listener()
    admin = redis.Redis.from_url(settings.REDIS_URL)
    try:
        admin.client_pause(1000, all=True)   # Redis answers nothing for a second
        started = asyncio.get_running_loop().time()
        await hub.join(game_id, listener)
        waited = asyncio.get_running_loop().time() - started
    finally:
        admin.close()
    assert waited >= 0.5
    assert game_id in hub.confirmed
    snap = await database_sync_to_async(reads.snapshot)(game_id, alice.player_id)
    outcome = await database_sync_to_async(actions.play_move)(game_id, alice.player_id, "11-15", snap.v)
    await publish(game_id, outcome.events)
    for _ in range(100):
        if listener.texts:
            break
        await asyncio.sleep(0.02)
    assert any('"move":"11-15"' in text for text in listener.texts), listener.texts
    assert listener.resyncs == 0
    hub.leave(game_id, listener)
    await keep.disconnect()


@pytest.mark.alone
async def test_a_crowd_joining_at_once_is_subscribed_in_a_few_commands(alice, bob):
    """Two hundred games joined together are subscribed in a few ``SUBSCRIBE`` commands, not one
    each: in a busy process each command waited for its own turn of the event loop, and the last
    joins of a crowd timed out (close code 4503)."""
    hub = fanout.hub()
    keep_game = await start_game(alice, bob)
    keep, _ = await bob.connect(keep_game)    # the link is up before the crowd comes
    admin = redis.Redis.from_url(settings.REDIS_URL)

    def subscribe_calls() -> int:
        return int(admin.info("commandstats").get("cmdstat_subscribe", {}).get("calls", 0))

    before = await asyncio.to_thread(subscribe_calls)
    games = [f"crowd{i:03d}" for i in range(200)]
    sockets = [Listener() for _ in games]
    await asyncio.wait_for(asyncio.gather(*(hub.join(g, s) for g, s in zip(games, sockets, strict=True))), 10)
    calls = await asyncio.to_thread(subscribe_calls) - before
    assert set(games) <= hub.confirmed
    assert 1 <= calls <= 20, calls
    for g, s in zip(games, sockets, strict=True):
        hub.leave(g, s)
    admin.close()
    await keep.disconnect()
