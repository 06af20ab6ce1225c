"""Outages of the game events (Redis) never decide a game: the events still reach the process's own
sockets at once, the pages are told, and the time is charged to nobody (game/round/outages.py,
docs/protocol.md "Outages").  Real Redis, real database; the faults are real connections refused."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
import redis
import redis.asyncio
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from game.errors import ActionError
from game.models import DeliveryOutage, Game
from game.round import actions, claims, fanout, outages
from tests.system.processes import free_port
from tests.web.conftest import hears_nothing, recv

pytestmark = pytest.mark.django_db(transaction=True)


def dead_redis() -> str:
    """The URL of a Redis nobody serves: every connection is refused."""
    return f"redis://127.0.0.1:{free_port()}/0"


def kill_subscriptions() -> int:
    """Close every pub/sub connection Redis has (as a Redis restart or a network fault would)."""
    admin = redis.Redis.from_url(settings.REDIS_URL)
    try:
        return admin.client_kill_filter(_type="pubsub")
    finally:
        admin.close()


def outage(seconds_ago: float, lasting: float | None, seen_ago: float | None = None) -> None:
    """An outage window of another server process that began ``seconds_ago`` and lasted ``lasting``
    seconds (None: still open, renewed ``seen_ago`` seconds ago)."""
    now = timezone.now()
    start = now - timedelta(seconds=seconds_ago)
    DeliveryOutage.objects.create(
        instance="another-process", started_at=start,
        seen_at=start + timedelta(seconds=lasting) if lasting is not None else now - timedelta(seconds=seen_ago or 0),
        ended_at=start + timedelta(seconds=lasting) if lasting is not None else None)
    outages.tracker.reset()   # read the windows again at once


def timed_game(black: str, white: str, thinking_s: float, control: str = "1+0") -> Game:
    """A ``control`` game after each side's first move, Black to move for ``thinking_s`` already."""
    now = timezone.now()
    game = actions.start_game(black=(black, "alice"), white=(white, "bob"), time_control=control,
                              now=now - timedelta(seconds=thinking_s + 4))
    actions.play_move(game.id, black, "11-15", 0, now=now - timedelta(seconds=thinking_s + 2))
    actions.play_move(game.id, white, "23-19", 1, now=now - timedelta(seconds=thinking_s))
    return Game.objects.get(pk=game.id)


async def start_game(alice, bob, control: str = "untimed") -> str:
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B",
                                                             time_control=control)
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    return game.id


async def until(condition, timeout_s: float = 5) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not await condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


# --- Publishing fails: the process's own sockets still get the event at once ----------------------

async def test_a_move_whose_publish_fails_reaches_every_socket_of_the_process_at_once(alice, bob, carol):
    """Redis refuses the publish: the opponent's and the spectator's sockets on the same process get
    the move at once (not only the mover), the process's outage window is open until the republish
    succeeds, and the republished event is not delivered to them a second time."""
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    hub = fanout.hub()
    working = hub.client
    hub.client = redis.asyncio.Redis.from_url(dead_redis(), socket_connect_timeout=1)
    try:
        started = asyncio.get_running_loop().time()
        await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
        for comm in (a, b, c):
            event = await recv(comm, timeout=2)
            assert (event["type"], event["move"], event["v"]) == ("move", "11-15", snap["v"] + 1)
        assert asyncio.get_running_loop().time() - started < 0.4
        assert outages.tracker.open
    finally:
        await hub.client.aclose()
        hub.client = working
    # The republish (0.5 s after the failure) goes out: the window ends, nobody gets the move twice.
    await until(lambda: asyncio.sleep(0, result=not outages.tracker.open))
    for comm in (a, b, c):
        assert await hears_nothing(comm, timeout=0.8)
    stored = await database_sync_to_async(lambda: list(DeliveryOutage.objects.values_list("instance", "ended_at")))()

    assert len(stored) == 1 and stored[0][0] == outages.tracker.instance and stored[0][1] is not None
    for comm in (a, b, c):
        await comm.disconnect()


async def test_a_publish_that_fails_with_another_error_than_redis_is_a_failed_publish_too(alice, bob):
    """redis-py raised ``AttributeError`` from a connection it had half closed during a failover
    (seen under load across hosts): that publish fails as any other does — the opponent's socket
    on this process gets the move at once and the outage window opens — instead of escaping
    the republish as the socket's own error."""
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    hub = fanout.hub()
    working = hub.client
    broken = redis.asyncio.Redis.from_url(settings.REDIS_URL, single_connection_client=True)
    await broken.ping()
    stream = broken.connection._writer
    broken.connection._writer = object()  # a connection whose stream redis-py lost under it
    hub.client = broken
    try:
        await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
        for comm in (a, b):
            event = await recv(comm, timeout=2)
            assert (event["type"], event["move"], event["v"]) == ("move", "11-15", snap["v"] + 1)
        assert outages.tracker.open
    finally:
        hub.client = working
        broken.connection._writer = stream
        await broken.aclose()
    await until(lambda: asyncio.sleep(0, result=not outages.tracker.open))
    for comm in (a, b):
        await comm.disconnect()


# --- The subscription is lost: the pages are told, and resynchronised -----------------------------

@pytest.mark.alone
async def test_a_lost_subscription_is_told_to_every_socket_and_a_snapshot_follows_its_return(alice, bob):
    """The hub's subscription drops and cannot come back for a while (Redis refuses): every socket
    gets ``link`` down; a socket that opens meanwhile is let in with its snapshot and the same
    notice; when the subscription is back each gets ``link`` up, then a snapshot."""
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    hub = fanout.hub()
    working = hub.url
    hub.url = dead_redis()
    assert await asyncio.to_thread(kill_subscriptions) >= 1
    message = await recv(a)
    assert message == {"type": "link", "up": False}
    assert outages.tracker.open
    b, snap_b = await bob.connect(game_id)      # joins at once, not refused with 4503
    assert snap_b["v"] == snap["v"]
    assert await recv(b) == {"type": "link", "up": False}
    hub.url = working
    for comm in (a, b):
        assert await recv(comm, timeout=5) == {"type": "link", "up": True}
        assert (await recv(comm))["type"] == "snapshot"
    assert not outages.tracker.open
    for comm in (a, b):
        await comm.disconnect()


# --- Outage windows are charged to nobody ---------------------------------------------------------

def test_a_turn_is_not_charged_for_an_outage_and_nobody_flags_because_of_it(alice, bob):
    """Black has thought 70 s of a one-minute clock, 30 s of them while another process could not
    deliver events: not out of time, and the move charges 40 s."""
    game = timed_game(alice.player_id, bob.player_id, thinking_s=70)
    outage(seconds_ago=50, lasting=30)
    assert actions.check_clock(game.id).events == []
    moved = actions.play_move(game.id, alice.player_id, "8-11", game.version)
    assert moved.events[0]["type"] == "move"
    assert 19_000 <= moved.game.black_ms <= 20_500


def test_without_an_outage_the_same_turn_is_lost_on_time(alice, bob):
    game = timed_game(alice.player_id, bob.player_id, thinking_s=70)
    ended = actions.check_clock(game.id)
    assert [e["what"] for e in ended.events] == ["flagged"]


def test_the_first_move_is_not_aborted_because_of_an_outage(alice, bob):
    """Black's first move of a live game, 40 s after the start, 25 s of which were an outage that is
    still going on: no abort; the first-move window shown is what is left of the 30 s."""
    now = timezone.now()
    game = actions.start_game(black=(alice.player_id, "alice"), white=(bob.player_id, "bob"),
                              time_control="1+0", now=now - timedelta(seconds=40))
    outage(seconds_ago=25, lasting=None, seen_ago=1)
    assert actions.check_clock(game.id).events == []
    state = outages.clock(Game.objects.get(pk=game.id)).state(timezone.now())
    assert state is not None and 14_000 <= state["first_move_ms"] <= 15_100
    moved = actions.play_move(game.id, alice.player_id, "11-15", game.version)
    assert moved.events[0]["type"] == "move"


def test_a_window_left_open_by_a_dead_process_ends_at_its_last_sign_of_life(alice, bob):
    """A process killed during an outage left its window open, last renewed 40 s ago: it counts up
    to that renewal and one heartbeat more (15 s), not until now (50 s)."""
    game = timed_game(alice.player_id, bob.player_id, thinking_s=80)
    outage(seconds_ago=50, lasting=None, seen_ago=40)   # 10 s renewed, + 5 s: 15 s credited
    ended = actions.check_clock(game.id)
    assert [e["what"] for e in ended.events] == ["flagged"]
    game = timed_game(alice.player_id, bob.player_id, thinking_s=50)
    moved = actions.play_move(game.id, alice.player_id, "8-11", game.version)
    assert 24_000 <= moved.game.black_ms <= 25_600     # 60 - (50 - 15)


@override_settings(CLAIM_AFTER_UNTIMED_S=2)
async def test_an_absence_during_an_outage_does_not_count_towards_a_claim(alice, bob):
    """Black, to move, closed the page 3 s ago, during an outage that lasted until now: White's claim
    is refused (the absence counts 0 s); once Black stays away 2 s more, it is allowed."""
    game_id = await start_game(alice, bob)
    a, _ = await alice.connect(game_id)
    await a.disconnect()
    await asyncio.sleep(0.2)
    await database_sync_to_async(outage)(seconds_ago=0.2, lasting=None, seen_ago=0)
    await asyncio.sleep(3)
    with pytest.raises(ActionError) as refused:
        await database_sync_to_async(claims.claim_win)(game_id, bob.player_id)
    assert refused.value.code == "opponent_present"
    await database_sync_to_async(lambda: DeliveryOutage.objects.update(ended_at=timezone.now()))()
    outages.tracker.reset()
    await asyncio.sleep(2.3)
    progress = await database_sync_to_async(claims.claim_win)(game_id, bob.player_id)
    assert progress.events[0]["what"] == "claimed_win"
