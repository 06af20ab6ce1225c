"""The deploy files run the site: the systemd units' commands serve it and keep it tidy, with the
metrics folder the Daphne processes share; the repository's nginx sends pages compressed with the
site's security headers, static files as their precompressed Brotli or gzip copies (the hashed
ones cached a year), and drops requests for a host the site does not serve."""

from __future__ import annotations

import contextlib
import gzip
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.system.processes import Process, RedisServer, running_site, server_database, site_env

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
APP = "/srv/checkers/app"


def unit(name: str) -> dict[str, dict[str, str]]:
    """A unit file's sections and keys (continued lines joined)."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in (UNITS / name).read_text().replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
        else:
            key, value = line.split("=", 1)
            current[key] = value
    return sections


def command(exec_start: str, port: int | None = None) -> list[str]:
    """A unit's ExecStart for this checkout: its virtualenv's python, the instance as ``port``."""
    words = exec_start.split()
    assert words[0] == f"{APP}/.venv/bin/python"
    return [sys.executable, *(str(port) if w == "%i" else w for w in words[1:])]


def get(url: str, **headers: str):
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
        return response.status, dict(response.headers), response.read()


def test_units_hang_together():
    daphne, target = unit("checkers@.service"), unit("checkers.target")
    assert daphne["Install"]["WantedBy"] == "checkers.target"
    assert daphne["Unit"]["PartOf"] == "checkers.target"
    # The metrics folder: made by its own unit before any process starts, emptied only when all restart.
    metrics = unit("checkers-metrics.service")
    assert daphne["Unit"]["Requires"] == "checkers-metrics.service"
    assert "checkers-metrics.service" in daphne["Unit"]["After"].split()
    assert metrics["Unit"]["PartOf"] == "checkers.target"
    assert (metrics["Service"]["Type"], metrics["Service"]["RemainAfterExit"]) == ("oneshot", "yes")
    assert metrics["Service"]["User"] == daphne["Service"]["User"]
    assert daphne["Service"]["Environment"] == f"PROMETHEUS_MULTIPROC_DIR=/run/{metrics['Service']['RuntimeDirectory']}"
    assert daphne["Service"]["WorkingDirectory"] == APP
    assert daphne["Service"]["Restart"] == "always"
    assert "-b 127.0.0.1 -p %i" in daphne["Service"]["ExecStart"]
    assert target["Install"]["WantedBy"] == "multi-user.target"
    service, timer = unit("checkers-housekeeping.service"), unit("checkers-housekeeping.timer")
    assert service["Service"]["Type"] == "oneshot"
    assert "manage.py housekeeping" in service["Service"]["ExecStart"]
    assert timer["Timer"]["OnCalendar"] == "hourly"
    assert timer["Install"]["WantedBy"] == "timers.target"
    arenas, arenas_timer = unit("checkers-arenas.service"), unit("checkers-arenas.timer")
    assert arenas["Service"]["Type"] == "oneshot" and "manage.py schedule_arenas" in arenas["Service"]["ExecStart"]
    assert arenas_timer["Timer"]["OnCalendar"] == "*:05"
    assert arenas_timer["Install"]["WantedBy"] == "timers.target"
    env_keys = {line.split("=", 1)[0] for line in (UNITS / "env.example").read_text().splitlines()
                if line and not line.startswith("#")}
    assert {"DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL"} <= env_keys


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_systemd_accepts_the_units(tmp_path):
    for path in UNITS.glob("checkers*"):
        shutil.copy(path, tmp_path)
    names = ["checkers@8001.service", "checkers.target", "checkers-metrics.service", "checkers-housekeeping.service",
             "checkers-housekeeping.timer", "checkers-arenas.service", "checkers-arenas.timer"]
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *names], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    # The paths of a production host do not exist here; anything else is an error in a unit.
    problems = [line for line in (result.stdout + result.stderr).splitlines()
                if line.strip() and "is not executable" not in line and "/srv/checkers" not in line]
    assert not problems, problems


class UnitDaphne(Process):
    """The Daphne process of ``checkers@<port>.service``, started with the unit's own command."""

    def command(self) -> list[str]:
        return command(unit("checkers@.service")["Service"]["ExecStart"], self.port)


def test_the_daphne_unit_serves_the_site_and_housekeeping_runs(tmp_path):
    """The unit's command, in the unit's environment with its metrics folder here (as
    checkers-metrics.service makes it): the site answers, and its metrics are written there."""
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    folder = tmp_path / "metrics"
    folder.mkdir()
    try:
        with server_database(tmp_path) as database_url:
            env = site_env(database_url, redis.url, tmp_path / "static")
            name, _, value = unit("checkers@.service")["Service"]["Environment"].partition("=")
            daphne = UnitDaphne(tmp_path / "daphne.log", {**env, name: value.replace("/run/checkers-metrics",
                                                                                     str(folder))})
            daphne.start()
            try:
                status, headers, _ = get(f"http://127.0.0.1:{daphne.port}/")
                assert status == 200
                assert "script-src 'self'" in headers["Content-Security-Policy"]
                status, _, body = get(f"http://127.0.0.1:{daphne.port}/metrics")
                assert status == 200
                assert re.search(rb'^checkers_http_request_seconds_count\{[^}]*view="home"[^}]*\} 1\.0$', body, re.M)
                assert any(folder.glob("histogram_*.db")), sorted(p.name for p in folder.iterdir())
            finally:
                daphne.stop()
            housekeeping = command(unit("checkers-housekeeping.service")["Service"]["ExecStart"])
            result = subprocess.run(housekeeping, cwd=ROOT, env=env, capture_output=True, text=True,
                                    timeout=60)
            assert result.returncode == 0, result.stderr
            assert "housekeeping: aborted 0 waiting games" in result.stdout
    finally:
        redis.stop()


def test_the_arenas_unit_creates_the_coming_hourly_arenas_once(tmp_path):
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    try:
        with server_database(tmp_path) as database_url:
            env = site_env(database_url, redis.url, tmp_path / "static")
            schedule = command(unit("checkers-arenas.service")["Service"]["ExecStart"])
            for _ in range(2):     # the timer and the hourly job may both run: the arenas are made once
                result = subprocess.run(schedule, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
                assert result.returncode == 0, result.stderr
                assert result.stdout.strip().endswith("6 scheduled arenas and 1 daily Swiss to come")
    finally:
        redis.stop()


@pytest.mark.skipif(shutil.which("nginx") is None,
                    reason="nginx is not installed (`make test` and .ci/run install it)")
def test_the_front_compresses_pages_and_serves_precompressed_static_files(tmp_path):
    with running_site(tmp_path, daphnes=1) as site:
        base = f"http://127.0.0.1:{site['nginx'].port}"
        status, headers, body = get(f"{base}/", **{"Accept-Encoding": "gzip, br"})
        assert status == 200
        assert headers["Content-Encoding"] == "gzip"  # the page: Django's GZipMiddleware
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        assert headers["Referrer-Policy"] == "same-origin"
        assert "camera=()" in headers["Permissions-Policy"]
        html = gzip.decompress(body).decode()
        script = re.search(r'src="(/static/js/home\.[0-9a-f]+\.js)"', html)
        assert script, html[:2000]
        for accepted, encoding in (("br", "br"), ("gzip", "gzip"), ("gzip, br", "br")):
            status, headers, _ = get(base + script[1], **{"Accept-Encoding": accepted})
            assert (status, headers.get("Content-Encoding")) == (200, encoding), (accepted, headers)
        status, headers, plain = get(base + script[1])
        assert status == 200 and "Content-Encoding" not in headers and b"start" in plain
        # Hashed names never change: kept a year; the unhashed originals are asked for again.
        assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
        status, headers, _ = get(f"{base}/static/js/home.js")
        assert status == 200 and headers["Cache-Control"] == "no-cache"
        # A host the site does not serve: the connection is closed without an answer.
        assert raw_answer(site["nginx"].port, "scanner.example") == b""
        assert raw_answer(site["nginx"].port, "localhost").startswith(b"HTTP/1.1 200 OK")


def raw_answer(port: int, host: str) -> bytes:
    """All that nginx on ``port`` answers to ``GET /healthz`` for ``host`` before it closes (or
    resets) the connection."""
    chunks = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    return b"".join(chunks)
