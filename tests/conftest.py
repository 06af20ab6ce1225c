"""Shared fixtures: test data paths, players' sessions, a real Redis check."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings
from django.utils import translation

# The Redis Cluster fixtures: a fresh cluster for a test that kills a node, one shared by the others.
from tests.cluster_support import _session_cluster, redis_cluster, shared_cluster, site_on_cluster  # noqa: F401

DATA = Path(__file__).resolve().parent / "data"


#: The folder of the locks that let a test marked ``alone`` run while no other does (:func:`turn`),
#: made by the pytest-xdist controller for its workers.
TURNS = "CHECKERS_TEST_TURNS"


def pytest_configure(config):
    """Refuse to run against no Redis: the channel layer tests need a real server.  Under
    pytest-xdist, the controller makes the folder of the workers' locks (:func:`turn`)."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        os.environ[TURNS] = tempfile.mkdtemp(prefix="checkers-test-turns-")
    url = urlparse(settings.REDIS_URL)
    try:
        socket.create_connection((url.hostname or "127.0.0.1", url.port or 6379), timeout=2).close()
    except OSError as exc:
        raise pytest.UsageError(
            f"No Redis at {settings.REDIS_URL} ({exc}). Run `make test`, which starts the embedded "
            "one, or set REDIS_URL."
        ) from None


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput") and os.environ.get(TURNS):
        shutil.rmtree(os.environ.pop(TURNS), ignore_errors=True)


class Turn:
    """Under pytest-xdist, a test's turn on the shared machine's Redis: a test marked ``alone``
    (it kills every client's subscription, pauses Redis, reads its command counts, or holds server
    processes to deadlines of a second or two) waits until the tests running elsewhere end and runs
    while no other starts; the others run side by side.  A test waiting to run alone goes first
    (the gate), so it is not kept waiting by a stream of others.  Without workers, nothing to wait
    for."""

    def __init__(self, alone: bool):
        self.alone = alone
        self.files: tuple = ()

    def take(self) -> None:
        folder = os.environ.get(TURNS)
        if not folder:
            return
        gate = open(os.path.join(folder, "gate"), "a")  # noqa: SIM115 - held until give()
        running = open(os.path.join(folder, "running"), "a")  # noqa: SIM115
        self.files = (gate, running)
        fcntl.flock(gate, fcntl.LOCK_EX)
        if not self.alone:
            fcntl.flock(gate, fcntl.LOCK_UN)
        fcntl.flock(running, fcntl.LOCK_EX if self.alone else fcntl.LOCK_SH)

    def give(self) -> None:
        """End the turn (once; closing the files drops their locks)."""
        files, self.files = self.files, ()
        for file in reversed(files):
            file.close()


_turns: dict[str, Turn] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Each test that uses the shared Redis, and each marked ``alone`` (its set-up, call and
    tear-down), in its :class:`Turn`."""
    alone = item.get_closest_marker("alone") is not None
    if not alone and _path(item).startswith(OWN_REDIS):
        return (yield)
    turn = _turns[item.nodeid] = Turn(alone)
    turn.take()
    try:
        return (yield)
    finally:
        _turns.pop(item.nodeid, None)
        turn.give()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """The worker's last test ends its turn before its tear-down, which tears down the session's
    fixtures too (the test database, the servers): nothing there needs the turn, and it may take a
    while on a busy machine (a dropped PostgreSQL database waits for a checkpoint)."""
    if nextitem is None and item.nodeid in _turns:
        _turns.pop(item.nodeid).give()
    return (yield)


#: Where a test's path starts, in the order the workers are handed them (see below); the rest after.
FIRST = ("tests/system/", "tests/engine/", "tests/rules/", "tests/browser/")
#: Tests that use no Redis but their own (or none): they run beside a test marked ``alone``.
OWN_REDIS = ("tests/system/", "tests/engine/", "tests/rules/", "tests/test_")


def _path(item) -> str:
    return item.nodeid if item.nodeid.startswith(("tests/", "game/")) else f"tests/{item.nodeid}"


@pytest.fixture(autouse=True)
def site_language():
    """Each test starts and ends in the site's default language: a request of the test client in
    French or Spanish leaves that language active in the test's thread (Django's LocaleMiddleware
    activates it and nothing deactivates it), where a lazy message would then be read in it."""
    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.activate(settings.LANGUAGE_CODE)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """For pytest-xdist's ``--dist loadgroup`` (``make test`` runs the tests on several workers):

    - a module whose fixtures live for the whole module, and each browser test module (the browser
      is opened once a package), runs on one worker, so they are made once;
    - the workers are handed first the long tests that wait on processes of their own (system,
      browser) and those that use no Redis (engine, rules), then the rest, and last the tests
      marked ``alone`` (one group, on one worker): the long tests do not all start at the end, and
      what runs alone does so when the machine is quiet, every other test done or waiting.
    """
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        path = _path(item)
        if item.get_closest_marker("alone") is not None:
            item.add_marker(pytest.mark.xdist_group("alone"))
            continue
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info is not None else ()
        if path.startswith("tests/browser/") or any(d[-1].scope == "module" for d in defs):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))

    def rank(item) -> int:
        if item.get_closest_marker("alone") is not None:
            return len(FIRST) + 1
        path = _path(item)
        return next((n for n, start in enumerate(FIRST) if path.startswith(start)), len(FIRST))

    items.sort(key=rank)


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
