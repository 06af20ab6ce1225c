"""The site on a real Redis Cluster: game sockets (events, presence, socket counts, the chat's rate),
the HTTP rate limits, the cache and the seek pools, every key on the cluster."""

from __future__ import annotations

import asyncio
import random

import pytest
from channels.db import database_sync_to_async
from django.core.cache import cache
from django.test import Client

from game.lobby.pairing import Seek
from game.lobby.pools import Matchmaker
from game.round import actions, admission, presence
from tests.cluster_support import Cluster
from tests.web.conftest import recv

pytestmark = [pytest.mark.django_db(transaction=True)]


def cluster_keys(cluster: Cluster, pattern: str) -> set[str]:
    """The keys matching ``pattern`` on every live master of ``cluster``."""
    found: set[str] = set()
    for node in cluster.nodes:
        if node.alive() and node.client().info("replication")["role"] == "master":
            found |= {k.decode() for k in node.client().scan_iter(match=pattern, count=1000)}
    return found


@pytest.mark.asyncio
async def test_a_game_is_played_watched_and_chatted_on_the_cluster(alice, bob, carol, site_on_cluster, settings):
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    c, _ = await carol.connect(game.id)
    watched = {"spectators": 1, "online": {"B": True, "W": True}}
    for _ in range(100):   # the last socket's entry is written as it opens
        if await presence.audience(game.id) == watched:
            break
        await asyncio.sleep(0.02)
    assert await presence.audience(game.id) == watched
    await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
    for comm in (a, b, c):
        event = await recv(comm)
        assert (event["type"], event["move"], event["v"]) == ("move", "11-15", snap["v"] + 1)
    await a.send_json_to({"type": "chat", "room": "players", "text": "good luck"})
    for comm in (a, b):
        line = await recv(comm)
        assert (line["type"], line["line"]["text"]) == ("chat", "good luck")
    prefix = settings.REDIS_PREFIX
    assert cluster_keys(site_on_cluster, f"{prefix}:viewers:{{{game.id}}}")
    assert cluster_keys(site_on_cluster, f"{prefix}:chat*")
    assert cluster_keys(site_on_cluster, f"{prefix}:sockets:session:*")
    assert await database_sync_to_async(presence.offline_s)(game.id, "B", 0.0) == 0.0
    for comm in (a, b, c):
        await comm.disconnect()
    for _ in range(100):
        if await presence.audience(game.id) == presence.EMPTY:
            break
        await asyncio.sleep(0.02)
    assert await presence.audience(game.id) == presence.EMPTY
    assert admission.INSTANCE


def test_http_limits_and_the_cache_live_on_the_cluster(site_on_cluster, settings):
    settings.GAME_CREATE_RATE_LIMIT_SESSION = "2/minute"
    settings.GAME_CREATE_RATE_LIMIT_ADDRESS = ""
    client = Client(REMOTE_ADDR=f"10.9.{random.randrange(256)}.{random.randrange(256)}")
    form = {"name": "alice", "color": "B", "time_control": "untimed"}
    assert [client.post("/", form).status_code for _ in range(3)] == [302, 302, 429]
    assert cluster_keys(site_on_cluster, f"{settings.REDIS_PREFIX}:limits*")
    cache.set_many({"one": 1, "two": 2, "three": 3}, 30)
    assert cache.get_many(["one", "two", "three", "four"]) == {"one": 1, "two": 2, "three": 3}
    cache.delete_many(["one", "two"])
    assert cache.get("three") == 3 and cache.get("one") is None
    assert cluster_keys(site_on_cluster, f"{settings.CACHES['default']['KEY_PREFIX']}:*three")


@pytest.mark.asyncio
async def test_seek_pools_pair_on_the_cluster(site_on_cluster, settings):
    matchmaker = Matchmaker.from_url(settings.MATCHMAKING_REDIS_URL, prefix=settings.MATCHMAKING_PREFIX)
    try:
        first = Seek(id="a" * 32, player="p1", name="one", pool="untimed", channel="c1")
        second = Seek(id="b" * 32, player="p2", name="two", pool="untimed", channel="c2")
        await matchmaker.add(first)
        await matchmaker.add(second)
        assert (await matchmaker.counts(["untimed", "5+3"])) == {"untimed": 2, "5+3": 0}
        taken, waiting = await matchmaker.settle("untimed", random.Random(1))
        assert len(taken) == 1 and waiting == 0
        assert {taken[0].black.id, taken[0].white.id} == {first.id, second.id}
    finally:
        await matchmaker.close()
