"""Shared fixtures: test data paths, players' sessions, a real Redis check."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings

# The Redis Cluster fixtures: a fresh cluster for a test that kills a node, one shared by the others.
from tests.cluster_support import _session_cluster, redis_cluster, shared_cluster, site_on_cluster  # noqa: F401

DATA = Path(__file__).resolve().parent / "data"


def pytest_configure(config):
    """Refuse to run against no Redis: the channel layer tests need a real server."""
    url = urlparse(settings.REDIS_URL)
    try:
        socket.create_connection((url.hostname or "127.0.0.1", url.port or 6379), timeout=2).close()
    except OSError as exc:
        raise pytest.UsageError(
            f"No Redis at {settings.REDIS_URL} ({exc}). Run `make test`, which starts the embedded "
            "one, or set REDIS_URL."
        ) from None


def pytest_collection_modifyitems(config, items):
    """Groups for pytest-xdist's ``--dist loadgroup`` (``make test`` runs the tests on several
    workers): a module whose fixtures live for the whole module runs on one worker, so they are
    made once; the system tests run one at a time, on one worker, as each starts a whole site of
    its own (their deadlines are a site's, not those of two sites fighting for the machine)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        if "tests/system/" in item.nodeid or item.nodeid.startswith("system/"):
            item.add_marker(pytest.mark.xdist_group("system"))
            continue
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if any(d[-1].scope == "module" for d in defs):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.fixture
def data_dir() -> Path:
    """The folder of game records and positions the tests use (their public sources: tests/data/README.md)."""
    return DATA


@pytest.fixture(autouse=True)
def close_game_db_threads():
    """After each test, close the connections of the game sockets' database threads
    (:func:`game.sockets.close_db_connections`), so none outlives the test database."""
    yield
    sockets = sys.modules.get("game.sockets")
    if sockets is not None:
        sockets.close_db_connections()


@pytest.fixture(autouse=True)
def no_outage_windows():
    """Each test starts with no outage window of game events in this process
    (:mod:`game.round.outages`): one that an earlier test opened would credit the clocks."""
    outages = sys.modules.get("game.round.outages")
    if outages is not None:
        outages.tracker.reset()
    yield


@pytest.fixture(scope="session", autouse=True)
def stop_engine_workers():
    """After the session, stop every engine pool's worker processes and wait for them, so no
    worker (nor multiprocessing's resource tracker) outlives the test run."""
    yield
    pool = sys.modules.get("game.engine.pool")
    if pool is not None:
        pool.shutdown_all(wait=True)


@pytest.fixture(scope="session", autouse=True)
def prepared_site():
    """After the session, remove the migrated database and collected static files that the servers
    of the system and browser tests were copied from (:func:`tests.system.processes.prepared`)."""
    yield
    processes = sys.modules.get("tests.system.processes")
    if processes is not None:
        processes.discard_prepared()


@pytest.fixture
def fresh_rate_limits():
    """No log-in or sign-up counted against this machine's address before (and after) the test:
    allauth's rate limits live in the Redis cache under this run's prefix (``CACHES``), shared by
    every test of the run and by the browser tests' server, all at 127.0.0.1."""
    from django.core.cache import cache

    def clear() -> None:
        client = cache._cache.get_client(write=True)  # type: ignore[attr-defined]  # Django's RedisCache
        prefix = settings.CACHES["default"]["KEY_PREFIX"]
        for key in client.scan_iter(match=f"{prefix}:*allauth:rl:*", count=1000):
            client.delete(key)

    clear()
    yield
    clear()
