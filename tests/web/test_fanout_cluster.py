"""The hub on a real Redis Cluster (three masters, three replicas): sharded pub/sub per game, one
pub/sub connection per shard, and a killed master's games subscribed again on its replica, their
clocks paused for the outage and no other shard's."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from game.clock import Clock, elapsed_ms, paused_ms
from game.models import DeliveryOutage, Game
from game.round import fanout, outages
from game.round.events import AudienceEvent, publications
from game.round.fanout import transport as fanout_transport
from tests.cluster_support import NODE_TIMEOUT_MS, Cluster
from tests.web.test_outages import timed_game

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


class Page:
    """A socket of a game as the hub sees it: what it was sent, and the snapshots it was asked for."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.resyncs = 0

    async def deliver(self, copies, follow) -> None:
        self.texts.extend(text for _roles, text in copies)

    def resync(self) -> None:
        self.resyncs += 1


def event(v: int) -> str:
    """A published event of version ``v`` (an audience notice)."""
    return publications([AudienceEvent(game_v=v, spectators=0, online={"B": True, "W": False})])[0]


def versions(page: Page) -> list[int]:
    return [json.loads(t)["game_v"] for t in page.texts if '"game_v"' in t]


async def until(check, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def games_on_each_shard(cluster: Cluster, per_shard: int = 1) -> dict[int, list[str]]:
    """Game ids whose channels fall on each master (by port), ``per_shard`` of each."""
    found: dict[int, list[str]] = {}
    while len(found) < 3 or any(len(g) < per_shard for g in found.values()):
        game_id = uuid.uuid4().hex[:12]
        port = cluster.master_of(fanout.channel(game_id)).port
        if len(found.setdefault(port, [])) < per_shard:
            found[port].append(game_id)
    return found


def timed_games_on_each_shard(cluster: Cluster, black: str, white: str, per_shard: int) -> dict[int, list[str]]:
    """Games in play on a one-minute clock, Black to move and thinking for 10 s, whose channels fall
    on each master (by port), ``per_shard`` of each."""
    found: dict[int, list[str]] = {}
    while len(found) < 3 or any(len(g) < per_shard for g in found.values()):
        game_id = timed_game(black, white, thinking_s=10).id
        port = cluster.master_of(fanout.channel(game_id)).port
        if len(found.setdefault(port, [])) < per_shard:
            found[port].append(game_id)
    return found


def shard_channels(cluster: Cluster) -> set[str]:
    """The sharded channels someone is subscribed to, on every live master."""
    names: set[str] = set()
    for node in cluster.nodes:
        if node.alive():
            names |= {n.decode() for n in node.client().execute_command("PUBSUB", "SHARDCHANNELS")}
    return names


@pytest.fixture
def hub(request):
    """A hub on the test's cluster (and its prefix's channels only): a fresh one of its own when the
    test asks for ``redis_cluster`` (to kill a node), else the session's ``shared_cluster``."""
    cluster = request.getfixturevalue("redis_cluster" if "redis_cluster" in request.fixturenames
                                      else "shared_cluster")
    return fanout.Hub(settings.REDIS_URL, cluster.url)


async def test_each_game_is_read_on_its_shard_and_only_while_it_has_sockets(hub, shared_cluster):
    games = [g for ids in games_on_each_shard(shared_cluster).values() for g in ids]
    pages = {g: Page() for g in games}
    for game_id, page in pages.items():
        await hub.join(game_id, page)
    assert hub.confirmed == set(games)
    assert len(hub.lines) == 3 and all(line.subscriptions == 1 for line in hub.lines.values())
    assert {fanout.channel(g) for g in games} <= shard_channels(shared_cluster)
    for n, game_id in enumerate(games):
        await hub.publish(game_id, [event(n)])
    assert await until(lambda: all(len(p.texts) == 1 for p in pages.values()))
    assert [versions(pages[g]) for g in games] == [[n] for n in range(len(games))]
    hub.leave(games[0], pages[games[0]])
    assert await until(lambda: fanout.channel(games[0]) not in shard_channels(shared_cluster))
    assert fanout.channel(games[1]) in shard_channels(shared_cluster)
    # Published from a synchronous caller too (the pages' path), with SPUBLISH.
    fanout_transport.sync_publisher.client = None
    settings.REDIS_CLUSTER_URL = shared_cluster.url
    try:
        await asyncio.to_thread(fanout_transport.sync_publisher.publish, games[1], [event(7), event(8)])
        assert await until(lambda: versions(pages[games[1]]) == [1, 7, 8])
    finally:
        settings.REDIS_CLUSTER_URL = ""
        fanout_transport.sync_publisher.client = None
    await hub.close()


async def test_a_killed_masters_games_are_subscribed_again_on_its_replica_resynced_and_their_clocks_paused(
        hub, redis_cluster, alice, bob):
    """SIGKILL the master of one game's shard: its replica takes over, the hub's line of that shard
    connects to it and subscribes its games again (their sockets are told the link went down, then
    get a fresh snapshot); the other shards' games are not disturbed, and events flow again.  The
    clocks of that shard's games are not charged for the outage, here and in every other process;
    the other shards' games' clocks are charged for all of their turn."""
    by_shard = await database_sync_to_async(timed_games_on_each_shard)(redis_cluster, alice.player_id,
                                                                        bob.player_id, 2)
    pages = {g: Page() for ids in by_shard.values() for g in ids}
    for game_id, page in pages.items():
        await hub.join(game_id, page)
    victim_port, victims = next(iter(by_shard.items()))
    others = [g for port, ids in by_shard.items() if port != victim_port for g in ids]
    old = redis_cluster.kill_master_of(fanout.channel(victims[0]))
    assert old.port == victim_port
    assert await until(lambda: hub.lost, timeout=5)
    new = await asyncio.to_thread(redis_cluster.wait_for_failover, fanout.channel(victims[0]), old)
    assert new is not old
    assert await until(lambda: not hub.lost and set(victims) <= hub.confirmed, timeout=20)
    for game_id in victims:
        page = pages[game_id]
        assert page.resyncs == 1
        assert [json.loads(t) for t in page.texts] == [{"type": "link", "up": False}, {"type": "link", "up": True}]
    assert all(pages[g].resyncs == 0 and pages[g].texts == [] for g in others)
    # Events of the failed-over shard flow again: the first publish, refused by the old master,
    # is sent again at once to the new one (no outage window of its own, no republish).
    await hub.publish(victims[0], [event(5), event(6)])
    assert await until(lambda: versions(pages[victims[0]]) == [5, 6])
    assert all(versions(pages[g]) == [] for g in others)
    await hub.close()
    await assert_clocks_paused_for(victims, others)


async def assert_clocks_paused_for(victims: list[str], others: list[str]) -> None:
    """The one outage window of this process touches ``victims`` only, as kept here and as stored for
    the other processes; each victim's turn is charged all but the window, which lasted at least the
    cluster's node timeout (the replica is promoted after it); each of ``others`` is charged all."""
    def stored() -> list[tuple[set[str], bool]]:
        return [(set(games.split()), ended is not None)
                for games, ended in DeliveryOutage.objects.values_list("games", "ended_at")]

    assert await until_async(lambda: database_sync_to_async(stored)(), [(set(victims), True)])
    elsewhere = outages.Tracker()     # another server process, reading the stored windows
    await database_sync_to_async(elsewhere.read_others)()
    now = timezone.now()
    for game_id in victims + others:
        game = await database_sync_to_async(Game.objects.get)(pk=game_id)
        pauses = outages.tracker.pauses(game_id, game.turn_started_at, read=False)
        assert elsewhere.pauses(game_id, game.turn_started_at, read=False) == pauses
        elapsed = elapsed_ms(game.turn_started_at, now)
        charged = Clock.of(game, pauses).spent_ms(now)
        if game_id in victims:
            assert len(pauses) == 1 and pauses[0][1] is not None
            assert paused_ms(pauses, game.turn_started_at, now) >= NODE_TIMEOUT_MS
            assert charged == elapsed - paused_ms(pauses, game.turn_started_at, now)
        else:
            assert pauses == () and charged == elapsed >= 10_000


async def until_async(read, expected, timeout: float = 10.0) -> bool:
    """Whether ``await read()`` gives ``expected`` within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while await read() != expected:
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_a_join_waits_for_its_games_shard_subscription(hub, shared_cluster):
    """The join returns once the game's channel is subscribed on its shard: a publish right after
    it reaches the socket."""
    game_id = uuid.uuid4().hex[:12]
    page = Page()
    await hub.join(game_id, page)
    master = shared_cluster.master_of(fanout.channel(game_id))
    assert master.client().execute_command("PUBSUB", "SHARDNUMSUB", fanout.channel(game_id))[1] == 1
    admin = redis.Redis(host="127.0.0.1", port=master.port)
    admin.execute_command("SPUBLISH", fanout.channel(game_id), event(3))
    admin.close()
    assert await until(lambda: versions(page) == [3])
    await hub.close()


async def test_a_publish_waits_for_a_busy_shards_connection_instead_of_failing(shared_cluster, monkeypatch):
    """More publishes to one shard at once than the process keeps connections to it, while that
    master answers late: every one is published once a connection is free (redis-py's cluster
    client alone refused the third at once, "Too many connections")."""
    monkeypatch.setattr(fanout_transport, "PUBLISH_MAX_CONNECTIONS", 2)
    transport = fanout_transport.ClusterTransport(shared_cluster.url)
    await transport.ready()
    name = fanout.channel(uuid.uuid4().hex)
    reader = shared_cluster.master_of(name).client().pubsub()
    reader.ssubscribe(name)
    try:
        shared_cluster.master_of(name).client().execute_command("CLIENT", "PAUSE", "300", "ALL")
        results = await asyncio.gather(*(transport.publish(name, [f"text {i}"]) for i in range(8)),
                                       return_exceptions=True)
        assert [r for r in results if isinstance(r, BaseException)] == []
        got = []
        deadline = time.monotonic() + 10
        while len(got) < 9 and time.monotonic() < deadline:
            message = reader.get_message(timeout=0.2)
            if message:
                got.append(message)
        assert sorted(m["data"] for m in got if m["type"] == "smessage") == [f"text {i}".encode() for i in range(8)]
    finally:
        reader.close()
        await transport.aclose()


class TimedPage(Page):
    """A :class:`Page` that notes when each event version reached it (``time.monotonic()``)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived: dict[int, float] = {}

    async def deliver(self, copies, follow) -> None:
        await super().deliver(copies, follow)
        now = time.monotonic()
        for _roles, text in copies:
            if '"game_v"' in text:
                self.arrived.setdefault(json.loads(text)["game_v"], now)


#: Seconds within which each event of a shard that is not failing reaches its socket, all through
#: another shard's failover (which takes about 2.5 s here: two node timeouts and the election).
OTHER_SHARD_BOUND_S = 0.4


@pytest.mark.parametrize("fault", ["kill", "stop"])
async def test_a_shards_failover_does_not_hold_up_another_shards_events(hub, redis_cluster, fault):
    """The master of shard A dies (SIGKILL) or falls silent (SIGSTOP, a host cut off) while twenty
    games of A keep publishing (each publish fails, as their moves would) and a game of shard B
    publishes an event every 50 ms: every one of B's events reaches B's socket within
    :data:`OTHER_SHARD_BOUND_S`, before, during and after A's failover.  (Through one redis-py
    cluster client for every shard, each failed publish to A made the client read the slots again
    and reconnect to every node before its next command to any shard.)"""
    by_shard = games_on_each_shard(redis_cluster, per_shard=20)
    a_port, b_port = list(by_shard)[:2]
    a_games, b_game = by_shard[a_port], by_shard[b_port][0]
    b_page = TimedPage()
    await hub.join(b_game, b_page)
    for game_id in a_games:
        await hub.join(game_id, Page())
    sent: dict[int, float] = {}
    took: dict[int, float] = {}
    down_at = up_at = 0.0

    async def publish_b() -> None:
        v = 0
        while not up_at or time.monotonic() < up_at + 2.0:
            sent[v] = time.monotonic()
            await hub.publish(b_game, [event(v)])
            took[v] = time.monotonic() - sent[v]
            v += 1
            await asyncio.sleep(0.05)

    async def publish_a(game_id: str) -> None:
        v = 0
        while not up_at:
            with contextlib.suppress(fanout.Unavailable):
                await hub.publish(game_id, [event(v)])
            v += 1
            await asyncio.sleep(0.02)

    b_task = asyncio.create_task(publish_b())
    await asyncio.sleep(0.5)
    master = redis_cluster.master_of(fanout.channel(a_games[0]))
    a_tasks = [asyncio.create_task(publish_a(g)) for g in a_games]
    down_at = time.monotonic()
    if fault == "kill":
        master.kill()
    else:
        master.pause()
    try:
        await asyncio.to_thread(redis_cluster.wait_for_failover, fanout.channel(a_games[0]), master)
        up_at = time.monotonic()
        await asyncio.gather(b_task, *a_tasks)
    finally:
        master.resume()
    assert up_at - down_at >= NODE_TIMEOUT_MS / 1000
    assert await until(lambda: len(b_page.arrived) == len(sent), timeout=5)
    waits = {v: round(b_page.arrived[v] - at, 3) for v, at in sent.items()}
    late = {v: wait for v, wait in waits.items() if wait > OTHER_SHARD_BOUND_S}
    assert late == {}, (f"{len(late)} of {len(sent)} late, A down from {down_at - sent[0]:.2f} s to "
                        f"{up_at - sent[0]:.2f} s: {late}; the publishes took at most {max(took.values()):.3f} s")
    assert max(took.values()) <= OTHER_SHARD_BOUND_S
    # B published all along while A was down (one client for every shard sent 1 to 7 then).
    assert len([at for at in sent.values() if down_at <= at <= up_at]) >= 10
    assert versions(b_page) == sorted(sent)
    await hub.close()
