"""The engine pool's worker processes never outlive the process that started them."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
START = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
OWNER = f"""
import sys, time
from game.engine import EnginePool, levels
if __name__ == "__main__":
    pool = EnginePool(workers=2, kind="process")
    pool.call(levels.analyse, {START!r}, 20)
    print("ready", flush=True)
    time.sleep(60)
"""


def multiprocessing_children(pid: int) -> list[psutil.Process]:
    return [child for child in psutil.Process(pid).children(recursive=True)
            if any(word in " ".join(child.cmdline()) for word in ("spawn_main", "resource_tracker"))]


def alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_workers_exit_when_their_owner_is_killed():
    owner = subprocess.Popen([sys.executable, "-c", OWNER], cwd=ROOT, stdout=subprocess.PIPE)
    helpers: list[psutil.Process] = []
    try:
        assert owner.stdout.readline().strip() == b"ready"
        helpers = multiprocessing_children(owner.pid)
        assert any("spawn_main" in " ".join(p.cmdline()) for p in helpers)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        deadline = time.monotonic() + 5
        while any(alive(p) for p in helpers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in helpers if alive(p)]
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        for process in helpers:
            if alive(process):
                process.kill()
        owner.stdout.close()


def test_shutdown_with_wait_leaves_no_worker():
    from game.engine import EnginePool, levels
    from game.engine.pool import shutdown_all

    # This process's own workers only: a server that another test started (a child of this
    # process) has engine workers of its own, which are its business.
    before = {p.pid for p in psutil.Process().children()}
    pool = EnginePool(workers=2, kind="process")
    pool.call(levels.analyse, START, 20)
    workers = [p for p in psutil.Process().children()
               if p.pid not in before and "spawn_main" in " ".join(p.cmdline())]
    assert workers
    shutdown_all(wait=True)
    assert not [p for p in workers if alive(p)]
