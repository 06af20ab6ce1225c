"""Browser tests: a real Daphne server in a subprocess and Debian's Chromium driven by Playwright.

The server gets a database of its own (a fresh SQLite file, or a fresh
PostgreSQL database when ``DATABASE_URL`` names PostgreSQL, dropped afterwards)
and the same Redis as the rest of the suite.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_database(tmp_path_factory):
    """Yield a DATABASE_URL for the server: a new SQLite file or a new PostgreSQL database."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp_path_factory.mktemp('browser-db') / 'db.sqlite3'}"
        return
    import psycopg

    parsed = urlparse(url)
    name = f"checkers_browser_{uuid.uuid4().hex[:8]}"
    admin = urlunparse(parsed._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunparse(parsed._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def server_env(tmp_path_factory):
    gen = _server_database(tmp_path_factory)
    database_url = next(gen)
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": "checkers_site.settings",
        "DATABASE_URL": database_url,
        "DJANGO_SECRET_KEY": "browser-test-secret-key",
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
    })
    env.setdefault("REDIS_URL", "redis://127.0.0.1:6380/0")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    static = tmp_path_factory.mktemp("static")
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput"], cwd=ROOT,
                   env={**env, "DJANGO_STATIC_ROOT": str(static)}, check=True, capture_output=True)
    env["DJANGO_STATIC_ROOT"] = str(static)
    yield env
    try:
        next(gen)
    except StopIteration:
        pass


class Server:
    """A Daphne process serving the site on a loopback port; can be killed and started again."""

    def __init__(self, env: dict, log_path: Path):
        self.env = env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.proc = None

    def start(self) -> None:
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port),
             "checkers_site.asgi:application"],
            cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daphne exited: {self.log_path.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("daphne did not start within 30 s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def server(server_env, tmp_path_factory):
    srv = Server(server_env, tmp_path_factory.mktemp("daphne") / "daphne.log")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (`.ci/run` does).")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def new_context(browser):
    """Factory for fresh browser contexts (separate cookies: separate people); all closed afterwards."""
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1100, "height": 850})
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()
