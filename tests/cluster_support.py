"""A real Redis Cluster for tests: three masters, each with one replica, on free loopback ports.

:func:`redis_cluster` (a fixture) starts six ``redis-server`` processes with
``--cluster-enabled yes`` under the test's ``tmp_path``, joins them with
``redis-cli --cluster create ... --cluster-replicas 1``, waits until every node
says ``cluster_state:ok`` and stops them all afterwards.  A test kills a master
(:meth:`Cluster.kill_master_of`) and waits for its replica to take over
(:meth:`Cluster.wait_for_failover`).  The tests that kill no node share one cluster for the
whole session (:func:`shared_cluster`), checked whole before and after each of them.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.crc import key_slot

#: Milliseconds a node may be unreachable before the cluster takes it for failed.
NODE_TIMEOUT_MS = 1000


def _free_cluster_port(taken: set[int]) -> int:
    """A port free on 127.0.0.1 whose cluster bus port (+10000) is free too, and not in ``taken``
    (the ports already chosen for the other nodes: the system may hand a port just released to the
    next bind, so two nodes chosen one after the other could get the same one).  The port chosen is
    added to ``taken``."""
    for _ in range(200):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port + 10000 > 65535 or port in taken or port + 10000 in taken or port - 10000 in taken:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        taken.add(port)
        return port
    raise RuntimeError("no free pair of ports for a cluster node")


class Node:
    """One ``redis-server`` of the cluster, its data and log under ``folder``."""

    def __init__(self, folder: Path, taken: set[int]):
        self.taken = taken
        self.port = _free_cluster_port(taken)
        self.folder = folder / str(self.port)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc: subprocess.Popen | None = None
        #: Stopped by :meth:`pause` (SIGSTOP) and not resumed: asked nothing by the cluster's checks.
        self.paused = False

    def start(self) -> None:
        """Start the server and wait for its answer; a port taken meanwhile by another process (the
        server exits at once) is given up for another free one, a few times."""
        for _ in range(5):
            if self._start_once():
                return
            self.port = _free_cluster_port(self.taken)
            self.folder = self.folder.parent / str(self.port)
            self.folder.mkdir(parents=True, exist_ok=True)
        raise RuntimeError(f"redis-server did not start (last port {self.port}; see {self.folder}/redis.log)")

    def _start_once(self) -> bool:
        with open(self.folder / "redis.log", "ab") as log:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                 "--cluster-config-file", str(self.folder / "nodes.conf"),
                 "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "", "--appendonly", "no",
                 # A replica takes over however long it has been cut off from its master.
                 "--cluster-replica-validity-factor", "0",
                 "--dir", str(self.folder)],
                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False   # exited: most likely its port was taken since it was chosen
            try:
                if self.client().ping():
                    return True
            except redis.RedisError:
                time.sleep(0.05)
        self.stop()
        return False

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2, socket_connect_timeout=1)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def pause(self) -> None:
        """SIGSTOP: the node keeps its connections and answers nothing (a host cut off)."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGSTOP)
            self.paused = True

    def resume(self) -> None:
        """SIGCONT after :meth:`pause` (no effect on a node that runs, or is gone)."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def stop(self) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGCONT)   # a paused node's SIGTERM waits for it
            self.proc.terminate()
            self.wait_stopped()

    def wait_stopped(self) -> None:
        """Wait for a node told to stop (SIGTERM); SIGKILL after 5 s."""
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Cluster:
    """Six nodes: three masters with a replica each, once :meth:`start` has returned."""

    def __init__(self, folder: Path, size: int = 6):
        taken: set[int] = set()
        self.nodes = [Node(folder, taken) for _ in range(size)]

    @property
    def url(self) -> str:
        """The value of ``REDIS_CLUSTER_URL`` for this cluster: every node, comma-separated."""
        return "redis://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def start(self, timeout_s: float = 30) -> None:
        for node in self.nodes:
            node.start()
        subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes),
             "--cluster-replicas", "1", "--cluster-yes"],
            check=True, capture_output=True, timeout=60)
        self.wait_ok(timeout_s)
        self.wait_replicated(timeout_s)

    def wait_replicated(self, timeout_s: float = 30) -> None:
        """Wait until every replica has its master's data (``master_link_status:up``)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            infos = [n.client().info("replication") for n in self.nodes if n.alive()]
            replicas = [i for i in infos if i["role"] == "slave"]
            if len(replicas) == len(self.nodes) // 2 and all(i["master_link_status"] == "up" for i in replicas):
                return
            time.sleep(0.1)
        raise RuntimeError(f"the replicas are not in sync after {timeout_s} s")

    def wait_ok(self, timeout_s: float = 30) -> None:
        """Wait until every live node says ``cluster_state:ok`` and knows three masters serving slots."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if all(self._ok(node) for node in self.nodes if node.alive()):
                    return
            except redis.RedisError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the cluster is not ok after {timeout_s} s")

    def _ok(self, node: Node) -> bool:
        client = node.client()
        info = client.execute_command("CLUSTER", "INFO").decode()
        if "cluster_state:ok" not in info:
            return False
        masters = [line for line in client.execute_command("CLUSTER", "NODES").decode().splitlines()
                   if "master" in line and "fail" not in line.split()[2] and len(line.split()) > 8]
        return len(masters) == 3

    def master_of(self, key: str) -> Node:
        """The live node that serves ``key``'s slot now (as a master)."""
        slot = key_slot(key.encode())
        for node in self.nodes:
            if not node.alive() or node.paused:
                continue
            for start, end, *_ in node.client().execute_command("CLUSTER", "SLOTS"):
                if start <= slot <= end:
                    host_port = _[0]
                    port = int(host_port[1])
                    return next(n for n in self.nodes if n.port == port)
        raise RuntimeError(f"no node serves slot {slot}")

    def kill_master_of(self, key: str) -> Node:
        """SIGKILL the master of ``key``'s slot; returns it."""
        node = self.master_of(key)
        node.kill()
        return node

    def wait_for_failover(self, key: str, old: Node, timeout_s: float = 30) -> Node:
        """Wait until another node serves ``key``'s slot and the cluster is ok; returns that node."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                node = self.master_of(key)
                if node is not old and self._ok(node):
                    return node
            except (redis.RedisError, RuntimeError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"no replica took over from port {old.port} after {timeout_s} s")

    def whole(self) -> bool:
        """Whether all six nodes run and every one says the cluster is ok."""
        try:
            return all(node.alive() for node in self.nodes) and all(self._ok(node) for node in self.nodes)
        except redis.RedisError:
            return False

    def stop(self) -> None:
        """Stop every node: all told at once, then each waited for."""
        for node in self.nodes:
            if node.alive():
                assert node.proc is not None
                node.proc.send_signal(signal.SIGCONT)   # a paused node's SIGTERM waits for it
                node.proc.terminate()
        for node in self.nodes:
            node.wait_stopped()


@pytest.fixture
def redis_cluster(tmp_path) -> Iterator[Cluster]:
    """A fresh 3-master, 3-replica Redis Cluster on loopback, stopped after the test: for a test
    that kills a node (the others use :func:`shared_cluster`)."""
    cluster = Cluster(tmp_path / "cluster")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def _session_cluster(tmp_path_factory) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path_factory.mktemp("shared-cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def shared_cluster(_session_cluster) -> Iterator[Cluster]:
    """The session's 3-master, 3-replica Redis Cluster, for a test that kills no node of it: whole
    before the test (every node up, the cluster ok) and still whole after it."""
    assert _session_cluster.whole(), "the shared cluster lost a node: a test that kills one must use redis_cluster"
    yield _session_cluster
    assert _session_cluster.whole(), "a node of the shared cluster died during the test: use redis_cluster"


@pytest.fixture
def site_on_cluster(shared_cluster, settings) -> Iterator[Cluster]:
    """The site configured on the session's Redis Cluster (``REDIS_CLUSTER_URL``, the seek pools
    and the cache there too), its process-wide Redis clients made again for it and after it."""
    from game.round import presence
    from game.round.fanout import transport as fanout_transport

    def forget_clients() -> None:
        fanout_transport.sync_publisher.client = None
        presence._sync_client = None

    settings.REDIS_CLUSTER_URL = shared_cluster.url
    settings.MATCHMAKING_REDIS_URL = "redis+cluster://" + shared_cluster.url.split("://", 1)[1]
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": shared_cluster.url,
                                   "BACKEND": "checkers_site.cluster_cache.RedisClusterCache"}}
    forget_clients()
    try:
        yield shared_cluster
    finally:
        forget_clients()
