"""scripts/embedded_redis.py: ``stop --all`` (what ``make clean`` runs) stops every embedded Redis
the project started, on any port, and removes only the pid files of servers that no longer run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.system.processes import free_port

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "embedded_redis.py"


def script(var: Path, *args: str, port: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "EMBEDDED_REDIS_VAR": str(var)}
    if port is not None:
        env["EMBEDDED_REDIS_PORT"] = str(port)
    return subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True,
                          text=True, timeout=30)


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rpartition(")")[2].split()[0] != "Z"


def test_stop_all_stops_every_port_and_keeps_other_processes(tmp_path):
    ports = [free_port(), free_port()]
    pids = []
    other = subprocess.Popen(["sleep", "60"])   # a live process that is no Redis, in a stale pid file
    try:
        for port in ports:
            assert script(tmp_path, "start", port=port).returncode == 0
            pids.append(int((tmp_path / f"redis-{port}.pid").read_text()))
        (tmp_path / "redis-1.pid").write_text(f"{other.pid}\n")
        (tmp_path / "redis-2.pid").write_text("999999999\n")   # a server long gone
        result = script(tmp_path, "stop", "--all")
        assert result.returncode == 0, result.stderr
        deadline = time.monotonic() + 5
        while any(running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in pids if running(pid)]
        for port in ports:
            assert script(tmp_path, "status", port=port).stdout.strip() == "down"
        assert other.poll() is None, "a process that is no embedded Redis was killed"
        assert sorted(p.name for p in tmp_path.glob("*.pid")) == []
    finally:
        other.kill()
        other.wait()
        for pid in pids:
            if running(pid):
                os.kill(pid, 9)


def test_stop_without_all_stops_only_its_port(tmp_path):
    first, second = free_port(), free_port()
    try:
        for port in (first, second):
            assert script(tmp_path, "start", port=port).returncode == 0
        assert script(tmp_path, "stop", port=first).returncode == 0
        assert script(tmp_path, "status", port=first).stdout.strip() == "down"
        assert script(tmp_path, "status", port=second).stdout.strip() == "up"
        assert not (tmp_path / f"redis-{first}.pid").exists()
        assert (tmp_path / f"redis-{second}.pid").exists()
    finally:
        script(tmp_path, "stop", "--all")
