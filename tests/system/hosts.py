"""Several hosts on this machine, made of Linux network namespaces, for multi-host system tests.

:func:`hosts` builds ``count`` hosts (``ip netns add``), each with its own network stack: a
loopback and one ``eth0``, the end of a veth pair whose other end is on a bridge of the root
namespace.  The bridge has ``10.231.<n>.1/24``, the address the test itself speaks from (its
clients, its checks); host *i* has ``10.231.<n>.<i + 2>``.  ``<n>`` is a subnet no other address
or route of this machine uses, chosen under a lock so that parallel runs each get their own, and
every name (namespaces, links) carries a token of the run.  A process starts inside a host with
``ip netns exec`` (:meth:`Host.command`); it sees only that host's addresses and loopback, so
every byte between two hosts crosses the bridge.  When the block ends, however it ends, every
process still in a host is killed (SIGKILL, by its id), the namespaces are deleted, and with
them their veth pairs, then the bridge.

On the hosts: :class:`HostProcess` (a server inside a host), :class:`Postgres` (a private
PostgreSQL server, initdb'ed for the test with the machine's binaries, trusting the test's
subnet), :class:`PgBouncer` (in front of it, transaction pooling), :class:`RedisNode` and
:class:`HostCluster` (a Redis Cluster of three masters, each with its replica on another host).
"""

from __future__ import annotations

import fcntl
import glob
import ipaddress
import os
import pwd
import random
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import redis
from redis.crc import key_slot

ROOT = Path(__file__).resolve().parents[2]

#: The private range the test's subnets are taken from: ``10.231.<n>.0/24``, n in 1..254.
SUBNETS = "10.231"
#: Held while a run chooses its subnet and puts it on its bridge, so two runs never take the same one.
SUBNET_LOCK = Path(tempfile.gettempdir()) / "checkers-netns-subnet.lock"
#: Milliseconds a Redis Cluster node may be unreachable before the cluster takes it for failed.
NODE_TIMEOUT_MS = 1000


def unavailable() -> str:
    """Why hosts cannot be made here (not root, no ``ip``, no network namespaces), or ``""``."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "`ip` is missing (`apt-get install iproute2`)"
    if not os.path.exists("/proc/self/ns/net"):
        return "this kernel has no network namespaces"
    if not postgres_binaries():
        return "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin (`apt-get install postgresql`)"
    if shutil.which("setpriv") is None:
        return "`setpriv` is missing (`apt-get install util-linux`)"
    return ""


def postgres_binaries() -> Path | None:
    """The folder of the machine's newest PostgreSQL server binaries (``initdb``, ``postgres``), or None."""
    def major(folder: Path) -> int:
        version = folder.parent.name
        return int(version) if version.isdigit() else 0

    folders = [Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/postgres")]
    return max(folders, key=major) if folders else None


def ip(*args: str, check: bool = True) -> str:
    """Run ``ip args...``; its output.  Raises CalledProcessError (with ip's message) when ``check``."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)
    return done.stdout


def wait_for_address(address: str, port: int, proc: subprocess.Popen | None = None,
                     timeout_s: float = 30) -> None:
    """Wait until something accepts connections on ``address:port``; raise if ``proc`` exits first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{' '.join(map(str, proc.args))} exited with {proc.returncode}")
        try:
            socket.create_connection((address, port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {address}:{port} after {timeout_s} s")


@dataclass
class Host:
    """One host: the network namespace ``namespace`` with ``address`` on its ``eth0``."""

    name: str
    namespace: str
    address: str
    veth: str            # the pair's end on the bridge, in the root namespace

    def command(self, argv: list[str], user: str | None = None) -> list[str]:
        """``argv`` run inside this host (``ip netns exec``), as ``user`` when given (``setpriv``);
        both exec the next program, so the process started is the program itself."""
        as_user = ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups"] if user else []
        return ["ip", "netns", "exec", self.namespace, *as_user, *argv]

    def pids(self) -> list[int]:
        """Every process running inside this host."""
        return [int(p) for p in ip("netns", "pids", self.namespace, check=False).split()]


@dataclass
class Network:
    """The hosts of one test and the bridge between them; ``gateway`` is the test's own address."""

    token: str
    bridge: str
    subnet: ipaddress.IPv4Network
    gateway: str
    hosts: list[Host] = field(default_factory=list)


def _used_subnets() -> set[int]:
    """The ``n`` of every ``10.231.<n>.x`` that an address or a route of this machine already uses."""
    used = set()
    for line in ip("-4", "-o", "addr", "show").splitlines() + ip("-4", "route", "show").splitlines():
        for word in line.split():
            if word.startswith(SUBNETS + "."):
                with suppress(IndexError, ValueError):
                    used.add(int(word.split("/")[0].split(".")[2]))
    return used


@contextmanager
def hosts(count: int = 3) -> Iterator[Network]:
    """``count`` hosts on one bridge (see the module's text); everything is removed afterwards,
    also when the block raises.  Raises RuntimeError when no subnet is free, CalledProcessError
    when ``ip`` refuses a step."""
    token = secrets.token_hex(3)
    network = Network(token=token, bridge=f"ckr{token}br", subnet=ipaddress.IPv4Network("0.0.0.0/32"),
                      gateway="")
    try:
        with open(SUBNET_LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            free = sorted(set(range(1, 255)) - _used_subnets(), key=lambda _: random.random())
            if not free:
                raise RuntimeError(f"no free subnet left in {SUBNETS}.0.0/16")
            network.subnet = ipaddress.IPv4Network(f"{SUBNETS}.{free[0]}.0/24")
            network.gateway = str(network.subnet.network_address + 1)
            ip("link", "add", network.bridge, "type", "bridge")
            ip("addr", "add", f"{network.gateway}/24", "dev", network.bridge)
            ip("link", "set", network.bridge, "up")
        for i in range(count):
            host = Host(name=f"h{i + 1}", namespace=f"checkers-{token}-h{i + 1}",
                        address=str(network.subnet.network_address + 2 + i), veth=f"ckr{token}h{i + 1}")
            ip("netns", "add", host.namespace)
            network.hosts.append(host)
            peer = f"ckr{token}p{i + 1}"
            ip("link", "add", host.veth, "type", "veth", "peer", "name", peer)
            ip("link", "set", peer, "netns", host.namespace)
            ip("link", "set", host.veth, "master", network.bridge, "up")
            inside = ["-n", host.namespace]
            ip(*inside, "link", "set", peer, "name", "eth0")
            ip(*inside, "addr", "add", f"{host.address}/24", "dev", "eth0")
            ip(*inside, "link", "set", "eth0", "up")
            ip(*inside, "link", "set", "lo", "up")
        yield network
    finally:
        remove(network)


def remove(network: Network) -> None:
    """Kill every process left in the network's hosts (SIGKILL, by id), delete the namespaces (which
    deletes their veth pairs), any veth end left, and the bridge.  Errors of ``ip`` are ignored:
    a step that was never taken has nothing to undo."""
    for host in network.hosts:
        for _ in range(50):
            pids = host.pids()
            if not pids:
                break
            for pid in pids:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        ip("netns", "del", host.namespace, check=False)
    for host in network.hosts:
        ip("link", "del", host.veth, check=False)
    ip("link", "del", network.bridge, check=False)


class HostProcess:
    """A server inside ``host``, listening on ``host.address:port``, its output in ``log_path``."""

    def __init__(self, host: Host, port: int, log_path: Path, argv: list[str], env: dict | None = None,
                 user: str | None = None):
        self.host = host
        self.port = port
        self.log_path = log_path
        self.argv = argv
        self.env = env
        self.user = user
        self.proc: subprocess.Popen | None = None

    def start(self, timeout_s: float = 30) -> None:
        """Start it and wait until it accepts connections; raises RuntimeError if it exits first."""
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.host.command(self.argv, self.user), cwd=ROOT, env=self.env,
                                         stdout=log, stderr=subprocess.STDOUT)
        wait_for_address(self.host.address, self.port, self.proc, timeout_s)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.proc is not None and self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """``sig``, then SIGKILL after 10 s."""
        if self.proc is not None and self.alive():
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def daphne(host: Host, port: int, log_path: Path, env: dict) -> HostProcess:
    """The site served by one Daphne process on ``host:port``, started as in production
    (docs/deploy.md, "Production"; 10 s for a websocket's handshake, as
    ``deploy/systemd/checkers@.service``), with ``env`` as its environment."""
    import sys

    return HostProcess(host, port, log_path, [sys.executable, "-m", "checkers_site.serve", "--proxy-headers",
                                              "-b", host.address, "-p", str(port),
                                              "--websocket_connect_timeout", "10",
                                              "checkers_site.asgi:application"], env=env)


def plain_redis(host: Host, port: int, folder: Path) -> HostProcess:
    """A Redis server on ``host:port`` keeping nothing on disk."""
    return HostProcess(host, port, folder / f"redis-{host.name}-{port}.log",
                       ["redis-server", "--port", str(port), "--bind", host.address, "--protected-mode", "no",
                        "--save", "", "--appendonly", "no", "--dir", str(folder)])


class Postgres(HostProcess):
    """A private PostgreSQL server on ``host:5432`` (the machine's newest ``initdb`` and ``postgres``,
    run as the ``postgres`` user), trusting every address of ``subnet``; its data in a folder of
    its own (the postgres user cannot enter pytest's), removed by :meth:`stop`."""

    def __init__(self, host: Host, subnet: ipaddress.IPv4Network, log_path: Path, port: int = 5432):
        binaries = postgres_binaries()
        if binaries is None:
            raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql/*/bin")
        self.bin = binaries
        self.data = Path(tempfile.mkdtemp(prefix="checkers-pg-"))
        account = pwd.getpwnam("postgres")
        os.chown(self.data, account.pw_uid, account.pw_gid)
        subprocess.run(["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups",
                        str(self.bin / "initdb"), "-D", str(self.data / "db"), "-U", "postgres",
                        "--auth=trust", "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
        with open(self.data / "db" / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {subnet} trust\n")
        super().__init__(host, port, log_path, [
            str(self.bin / "postgres"), "-D", str(self.data / "db"), "-c", f"listen_addresses={host.address}",
            "-c", f"port={port}", "-c", f"unix_socket_directories={self.data}", "-c", "fsync=off",
            "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200"],
            user="postgres")

    def start(self, timeout_s: float = 30) -> None:
        """Start it and wait until it takes connections: it listens before it has finished
        starting up (and answers "the database system is starting up" until then).  Raises
        RuntimeError if it exits first, psycopg's OperationalError if it is not up in time."""
        import psycopg

        deadline = time.monotonic() + timeout_s
        super().start(timeout_s)
        while True:
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline or not self.alive():
                    raise
                time.sleep(0.05)

    def url(self, database: str) -> str:
        return f"postgres://postgres@{self.host.address}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create database ``name``; its URL."""
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self, sig: int = signal.SIGINT) -> None:
        """Fast shutdown (SIGINT: clients are disconnected), then the data folder is removed."""
        try:
            super().stop(sig)
        finally:
            shutil.rmtree(self.data, ignore_errors=True)


def pgbouncer_binary() -> str | None:
    """The machine's ``pgbouncer`` (Debian puts it in /usr/sbin), or None."""
    found = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    return found if os.path.exists(found) else None


class PgBouncer(HostProcess):
    """PgBouncer on ``host:port`` in front of ``postgres`` (every database of it), in transaction
    pooling as in production: ``pool_size`` server connections a database, at most ``clients``
    client connections, every client trusted (only the test's subnet reaches it).  It runs as the
    ``postgres`` user (PgBouncer refuses root), its configuration in a folder of its own that
    :meth:`stop` removes."""

    def __init__(self, host: Host, postgres: Postgres, log_path: Path, port: int = 6432, pool_size: int = 20,
                 clients: int = 1000):
        binary = pgbouncer_binary()
        if binary is None:
            raise RuntimeError("PgBouncer is not installed (`apt-get install pgbouncer`)")
        self.folder = Path(tempfile.mkdtemp(prefix="checkers-pgbouncer-"))
        (self.folder / "users.txt").write_text('"postgres" ""\n')
        (self.folder / "pgbouncer.ini").write_text(
            f"[databases]\n* = host={postgres.host.address} port={postgres.port}\n"
            f"[pgbouncer]\nlisten_addr = {host.address}\nlisten_port = {port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {self.folder / 'users.txt'}\npool_mode = transaction\n"
            f"max_client_conn = {clients}\ndefault_pool_size = {pool_size}\n")
        account = pwd.getpwnam("postgres")
        for path in (self.folder, *self.folder.iterdir()):
            os.chown(path, account.pw_uid, account.pw_gid)
        super().__init__(host, port, log_path, [binary, str(self.folder / "pgbouncer.ini")], user="postgres")

    def url(self, database: str) -> str:
        return f"postgres://postgres@{self.host.address}:{self.port}/{database}"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop it (SIGTERM, then SIGKILL after 10 s), then remove its folder."""
        try:
            super().stop(sig)
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


class RedisNode(HostProcess):
    """One ``redis-server`` of a cluster on ``host:port``, its data and log under ``folder``."""

    def __init__(self, host: Host, port: int, folder: Path):
        self.folder = folder / f"{host.name}-{port}"
        self.folder.mkdir(parents=True)
        super().__init__(host, port, self.folder / "redis.log", [
            "redis-server", "--port", str(port), "--bind", host.address, "--protected-mode", "no",
            "--cluster-enabled", "yes", "--cluster-config-file", str(self.folder / "nodes.conf"),
            "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "", "--appendonly", "no",
            # A replica takes over however long it has been cut off from its master.
            "--cluster-replica-validity-factor", "0",
            # A replica's first copy of its master is sent at once, not after the default 5 s.
            "--repl-diskless-sync-delay", "0", "--dir", str(self.folder)])

    @property
    def where(self) -> str:
        return f"{self.host.address}:{self.port}"

    def client(self) -> redis.Redis:
        return redis.Redis(host=self.host.address, port=self.port, socket_timeout=2, socket_connect_timeout=1)


class HostCluster:
    """A Redis Cluster over ``hosts``: a master on port 7000 of each, and on port 7001 of each the
    replica of the previous host's master, so that every master's replica is on another host."""

    def __init__(self, hosts: list[Host], folder: Path):
        if len(hosts) < 2:
            raise ValueError("a cluster over hosts needs two hosts or more")
        self.masters = [RedisNode(h, 7000, folder) for h in hosts]
        self.replicas = [RedisNode(h, 7001, folder) for h in hosts]
        self.nodes = self.masters + self.replicas

    @property
    def url(self) -> str:
        """The value of ``REDIS_CLUSTER_URL`` for this cluster: every node, comma-separated."""
        return "redis://" + ",".join(n.where for n in self.nodes)

    def start(self, timeout_s: float = 30) -> None:
        """Start every node, make the masters a cluster, give each its replica, wait until all is in sync."""
        for node in self.nodes:
            node.start()
        subprocess.run(["redis-cli", "--cluster", "create", *(m.where for m in self.masters), "--cluster-yes"],
                       check=True, capture_output=True, timeout=60)
        self.wait_ok(timeout_s, self.masters)
        # Each replica meets the cluster, then follows its master once it knows it (what
        # `redis-cli --cluster add-node --cluster-slave` does, for the three replicas at once).
        pairs = [(replica, self.masters[i - 1]) for i, replica in enumerate(self.replicas)]
        ids = {master.where: master.client().execute_command("CLUSTER", "MYID").decode() for _, master in pairs}
        for replica, master in pairs:
            replica.client().execute_command("CLUSTER", "MEET", master.host.address, master.port)
        deadline = time.monotonic() + timeout_s
        waiting = list(pairs)
        while waiting:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{', '.join(r.where for r, _ in waiting)} did not join the cluster "
                                   f"after {timeout_s} s")
            for replica, master in list(waiting):
                with suppress(redis.ResponseError):   # "Unknown node": it has not met it yet
                    replica.client().execute_command("CLUSTER", "REPLICATE", ids[master.where])
                    waiting.remove((replica, master))
            time.sleep(0.05)
        self.wait_ok(timeout_s)
        self.wait_replicated(timeout_s)

    def wait_replicated(self, timeout_s: float = 30) -> None:
        """Wait until every replica has its master's data (``master_link_status:up``)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with suppress(redis.RedisError):
                infos = [n.client().info("replication") for n in self.replicas]
                if all(i["role"] == "slave" and i["master_link_status"] == "up" for i in infos):
                    return
            time.sleep(0.1)
        raise RuntimeError(f"the replicas are not in sync after {timeout_s} s")

    def wait_ok(self, timeout_s: float = 30, nodes: list[RedisNode] | None = None) -> None:
        """Wait until every live node (of ``nodes``, default all) says ``cluster_state:ok`` and knows
        every master serving slots."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with suppress(redis.RedisError):
                if all(self._ok(node) for node in nodes or self.nodes if node.alive()):
                    return
            time.sleep(0.1)
        raise RuntimeError(f"the cluster is not ok after {timeout_s} s")

    def _ok(self, node: RedisNode) -> bool:
        client = node.client()
        if "cluster_state:ok" not in client.execute_command("CLUSTER", "INFO").decode():
            return False
        masters = [line for line in client.execute_command("CLUSTER", "NODES").decode().splitlines()
                   if "master" in line and "fail" not in line.split()[2] and len(line.split()) > 8]
        return len(masters) == len(self.masters)

    def master_of(self, key: str) -> RedisNode:
        """The live node that serves ``key``'s slot now (as a master)."""
        slot = key_slot(key.encode())
        for node in self.nodes:
            if not node.alive():
                continue
            for start, end, master, *_ in node.client().execute_command("CLUSTER", "SLOTS"):
                if start <= slot <= end:
                    where = f"{master[0].decode()}:{int(master[1])}"
                    return next(n for n in self.nodes if n.where == where)
        raise RuntimeError(f"no node serves slot {slot}")

    def replica_of(self, master: RedisNode) -> RedisNode:
        """The node that replicates ``master`` now."""
        master_id = master.client().execute_command("CLUSTER", "MYID").decode()
        for node in self.nodes:
            if node.alive() and node.client().info("replication")["role"] == "slave":
                fields = next(line.split() for line in node.client().execute_command("CLUSTER", "NODES")
                              .decode().splitlines() if "myself" in line.split()[2])
                if fields[3] == master_id:
                    return node
        raise RuntimeError(f"{master.where} has no replica")

    def wait_for_failover(self, key: str, old: RedisNode, timeout_s: float = 30) -> RedisNode:
        """Wait until another node serves ``key``'s slot and the cluster is ok; returns that node."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with suppress(redis.RedisError, RuntimeError):
                node = self.master_of(key)
                if node is not old and self._ok(node):
                    return node
            time.sleep(0.1)
        raise RuntimeError(f"no replica took over from {old.where} after {timeout_s} s")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
