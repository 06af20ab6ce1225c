"""Two Daphne processes behind nginx on a Redis Cluster (three masters, three replicas): a recorded
game is played while the master holding the game's channel is killed and its replica takes over."""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest

from tests.system.processes import running_site
from tests.system.test_scaleout import (
    assert_every_move_once,
    connect_on_different_processes,
    play,
    recorded_moves,
    seat_players,
)

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")


def test_a_game_goes_on_while_its_shards_master_is_killed(tmp_path, redis_cluster):
    """Alice and Bob on different processes, Carol watching: at ply 10 the master serving the game's
    channel slot gets SIGKILL; its replica is promoted, each process's line of that shard
    subscribes again there and resynchronises its sockets; every socket ends with every move once,
    in order, and a page opened afterwards has them all."""
    prefix = os.environ.get("CHANNELS_PREFIX", "asgi")

    async def scenario(site) -> None:
        moves = recorded_moves()
        game_id, cookies = await seat_players(site["nginx"].port)
        viewers = list(await connect_on_different_processes(site["nginx"].port, game_id, cookies))
        a, b, _ = viewers
        try:
            assert a.upstreams[-1] != b.upstreams[-1]
            for ply, move in enumerate(moves[:10], start=1):
                await play(a if ply % 2 else b, viewers, move, ply)
            snapshots = [v.snapshots for v in viewers]
            channel = f"{prefix}:game:{game_id}"
            old = redis_cluster.kill_master_of(channel)
            for ply, move in enumerate(moves[10:], start=11):
                await play(a if ply % 2 else b, viewers, move, ply)
            new = await asyncio.to_thread(redis_cluster.wait_for_failover, channel, old)
            assert new is not old
            assert_every_move_once(viewers, moves, snapshots)
        finally:
            for viewer in viewers:
                await viewer.close()

    with running_site(tmp_path, cluster_url=redis_cluster.url) as site:
        asyncio.run(scenario(site))
