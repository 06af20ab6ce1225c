"""The site over three hosts (Linux network namespaces on this machine, ``tests/system/hosts.py``): a
Daphne process on each, a Redis Cluster whose every master has its replica on another host, and
one PostgreSQL server that all of them use.  Two players and two spectators, connected to the
Daphne processes of different hosts, play a recorded game while the master holding
the game's channel slot is killed (SIGKILL) and its replica, on another host, takes over.

The sockets go straight to each host's Daphne, not through nginx: the shipped nginx sends all of
a game's sockets to one process, and this test wants a game's sockets on every host, so that
every move crosses from one host to the others through the cluster's sharded pub/sub.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from game import rules
from tests.system.hosts import ROOT, HostCluster, HostProcess, Postgres, daphne, hosts, plain_redis, unavailable
from tests.system.processes import site_env
from tests.system.test_scaleout import Viewer, Visitor, assert_every_move_once, play, recorded_moves

pytestmark = [pytest.mark.multihost, pytest.mark.skipif(bool(unavailable()), reason=unavailable() or "-")]

#: The port of the Daphne process on every host (each host has a network stack of its own).
DAPHNE_PORT = 8000


@pytest.fixture
def network():
    """Three hosts on one bridge, removed after the test whatever its outcome."""
    with hosts(3) as network:
        yield network


def host_viewer(address: str, game_id: str, cookie: str) -> Viewer:
    """A game page's socket to the Daphne of the host at ``address``."""
    viewer = Viewer(DAPHNE_PORT, game_id, cookie)
    viewer.uri = f"ws://{address}:{DAPHNE_PORT}/ws/game/{game_id}/"
    viewer.origin = f"http://{address}:{DAPHNE_PORT}"
    return viewer


def pdn_moves(base: str, game_id: str) -> list[str]:
    """The moves of the game's PDN download from the site at ``base``."""
    text = urllib.request.urlopen(f"{base}/g/{game_id}.pdn", timeout=10).read().decode()
    game = rules.Game()
    for move in next(rules.read_games(io.StringIO(text))).moves:
        game.play(move)
    return [str(m) for m in game.moves]


def site_environment(database_url: str, redis_url: str, static_root: Path, cluster_url: str,
                     addresses: list[str]) -> dict:
    """The environment of the site's processes on the hosts (``processes.site_env``'s, with its copy
    of the collected static files, on ``cluster_url``, serving the hosts' ``addresses``); runs
    migrate on the hosts' PostgreSQL."""
    env = site_env(database_url, redis_url, static_root)
    env.pop("MATCHMAKING_REDIS_URL", None)   # on the cluster, as production's default
    env.update({"REDIS_CLUSTER_URL": cluster_url, "DJANGO_ALLOWED_HOSTS": ",".join(addresses)})
    migrate = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    if migrate.returncode != 0:
        raise RuntimeError(f"migrate failed: {migrate.stdout.decode()[-2000:]}")
    return env


def ready(base: str) -> int:
    return urllib.request.urlopen(f"{base}/readyz", timeout=10).status


def test_a_game_over_three_hosts_goes_on_while_its_shards_master_is_killed(tmp_path, network):
    """Alice on host 1, Bob on host 2, Carol watching on host 3 and Dave on host 1: at ply 10 the
    master serving the game's channel slot gets SIGKILL; its replica on another host is promoted,
    every host's Daphne subscribes again there and resynchronises its sockets; every socket ends
    with every move once, in order, and a page opened afterwards on another host has them all."""
    prefix = os.environ.get("CHANNELS_PREFIX", "asgi")
    h1, h2, h3 = network.hosts
    bases = {h.name: f"http://{h.address}:{DAPHNE_PORT}" for h in network.hosts}
    postgres: Postgres | None = None
    lobby = plain_redis(h1, 6379, tmp_path)
    cluster = HostCluster(network.hosts, tmp_path / "cluster")
    servers: list[HostProcess] = []
    timings: dict[str, float] = {}
    began = time.monotonic()

    async def scenario() -> None:
        moves = recorded_moves()
        alice, bob = Visitor(bases["h1"]), Visitor(bases["h2"])
        carol, dave = Visitor(bases["h3"]), Visitor(bases["h1"])
        game_id = await asyncio.to_thread(alice.create_game, "alice", "B")
        await asyncio.to_thread(bob.join, game_id, "bob")
        cookies = [await asyncio.to_thread(v.cookie_header) for v in (alice, bob, carol, dave)]
        viewers = [host_viewer(h.address, game_id, cookie)
                   for h, cookie in zip((h1, h2, h3, h1), cookies, strict=True)]
        for viewer in viewers:
            await viewer.start()
        a, b = viewers[:2]
        try:
            started = time.monotonic()
            for ply, move in enumerate(moves[:10], start=1):
                await play(a if ply % 2 else b, viewers, move, ply)
            snapshots = [v.snapshots for v in viewers]
            channel = f"{prefix}:game:{game_id}"
            old = cluster.master_of(channel)
            heir = cluster.replica_of(old)
            assert heir.host is not old.host
            old.kill()
            killed = time.monotonic()
            for ply, move in enumerate(moves[10:], start=11):
                await play(a if ply % 2 else b, viewers, move, ply)
            new = await asyncio.to_thread(cluster.wait_for_failover, channel, old)
            timings.update(play_s=time.monotonic() - started, after_kill_s=time.monotonic() - killed)
            assert new is heir
            # Every host's Daphne lost its line to that shard and sent its sockets a fresh snapshot.
            assert_every_move_once(viewers, moves, snapshots)
        finally:
            for viewer in viewers:
                await viewer.close()
        fresh = host_viewer(h3.address, game_id, cookies[2])
        await fresh.start()
        try:
            assert fresh.moves == moves
        finally:
            await fresh.close()
        assert await asyncio.to_thread(pdn_moves, bases["h2"], game_id) == moves
        for base in bases.values():
            assert await asyncio.to_thread(ready, base) == 200

    try:
        # The slow parts side by side: the cluster's start, and PostgreSQL's initdb, the site's
        # migrate and collectstatic.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            cluster_started = pool.submit(cluster.start)
            postgres = Postgres(h1, network.subnet, tmp_path / "postgres.log")
            postgres.start()
            lobby.start()
            env = site_environment(postgres.create_database("checkers"), f"redis://{h1.address}:6379/0",
                                   tmp_path / "static", cluster.url, [h.address for h in network.hosts])
            cluster_started.result()
        for master in cluster.masters:
            assert cluster.replica_of(master).host is not master.host
        servers = [daphne(h, DAPHNE_PORT, tmp_path / f"daphne-{h.name}.log", env) for h in network.hosts]
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(servers)) as pool:
            for started in [pool.submit(server.start) for server in servers]:
                started.result()
        timings["setup_s"] = time.monotonic() - began
        asyncio.run(scenario())
    finally:
        # Everything stops side by side; the network fixture kills whatever would still run.
        stopping = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            stops = [pool.submit(process.stop) for process in [*servers, *cluster.nodes, lobby]]
            if postgres is not None:
                stops.append(pool.submit(postgres.stop, signal.SIGINT))
            for stopped in stops:
                stopped.result()
    print(f"set up in {timings['setup_s']:.1f} s, played in {timings['play_s']:.1f} s "
          f"({timings['after_kill_s']:.1f} s of it after the kill), stopped in {time.monotonic() - stopping:.1f} s")
