"""`make run` starts a worker of the task queues beside the site (the Makefile's run target): the
worker's command, as the Makefile writes it, is accepted and works its queues (on a Redis of the
test's own, so that it takes no job another test queued)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.system.processes import RedisServer

ROOT = Path(__file__).resolve().parent.parent


def test_the_worker_that_make_run_starts_accepts_its_arguments(tmp_path):
    recipe = re.search(r"manage\.py (rqworker [^&]*)&", (ROOT / "Makefile").read_text())
    assert recipe is not None, "make run starts no rqworker"
    arguments = recipe.group(1).split()
    assert {"default", "reviews", "tournaments", "--with-scheduler"} <= set(arguments)
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    try:
        worker = subprocess.run([sys.executable, "manage.py", *arguments, "--burst"], cwd=ROOT,
                                env={**os.environ, "RQ_REDIS_URL": redis.url}, capture_output=True, text=True,
                                timeout=120)
    finally:
        redis.stop()
    assert worker.returncode == 0, worker.stderr[-2000:]
