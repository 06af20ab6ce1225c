"""Engine worker processes do not outlive their Daphne process.

Daphne runs the engine's searches in worker processes (``ENGINE_POOL=process``).  A Daphne process
killed with SIGKILL cannot stop them; each worker notices that its parent is gone and exits within
a second, and multiprocessing's resource tracker follows once the last of them is gone.
"""

from __future__ import annotations

import http.cookiejar
import json
import signal
import time
import urllib.request

import psutil
import pytest

from tests.system.processes import Daphne, RedisServer, server_database, site_env

START = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"


@pytest.fixture
def daphne(tmp_path):
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    with server_database(tmp_path) as database_url:
        env = site_env(database_url, redis.url, tmp_path / "static")
        env.update({"ENGINE_POOL": "process", "ENGINE_WORKERS": "2"})
        server = Daphne(tmp_path / "daphne.log", env)
        server.start()
        try:
            yield server
        finally:
            server.stop()
            redis.stop()


def analyse(port: int) -> dict:
    """One search on the analysis board, as its page asks for it."""
    base = f"http://127.0.0.1:{port}"
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(base + "/analysis", timeout=10).read()
    token = next(c.value for c in jar if c.name == "csrftoken")
    request = urllib.request.Request(
        base + "/analysis/search", data=json.dumps({"fen": START, "time_ms": 100}).encode(),
        headers={"Content-Type": "application/json", "X-CSRFToken": token, "Referer": base + "/analysis"})
    return json.loads(opener.open(request, timeout=30).read())


def engine_processes(pid: int) -> list[psutil.Process]:
    """The multiprocessing children of ``pid``: spawned workers and the resource tracker."""
    return [child for child in psutil.Process(pid).children(recursive=True)
            if any(word in " ".join(child.cmdline()) for word in ("spawn_main", "resource_tracker"))]


def alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_engine_workers_exit_when_daphne_is_killed(daphne):
    assert "move" in analyse(daphne.port)
    helpers = engine_processes(daphne.proc.pid)
    assert any("spawn_main" in " ".join(p.cmdline()) for p in helpers), helpers
    try:
        daphne.kill()
        deadline = time.monotonic() + 5
        while any(alive(p) for p in helpers) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [" ".join(p.cmdline()) for p in helpers if alive(p)]
        assert not left, f"still running 5 s after Daphne was killed: {left}"
    finally:
        for process in helpers:
            if alive(process):
                process.send_signal(signal.SIGKILL)
