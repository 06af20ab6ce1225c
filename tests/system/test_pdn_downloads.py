"""Whole-archive PDN downloads through the shipped nginx and two Daphne processes, black box: several
at once, from several addresses, each arrives whole or is refused with an error status; one that
cannot finish is visibly incomplete (the chunked body never ends), never a shorter file that looks
whole.  Daphne runs with a short ``--http-timeout`` (10 s; 60 in deploy/systemd/checkers@.service)
and the site's deadline under it (8 s).  The archive here is 2,000 games, seeded in seconds; the
20,000-game figures come from bench/pdn_download.py."""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.system.processes import ROOT, Daphne, Nginx, RedisServer, server_database, site_env

pytestmark = [pytest.mark.skipif(shutil.which("nginx") is None,
                                 reason="nginx is not installed (`apt-get install nginx`; .ci/run does)"),
              pytest.mark.timeout(600)]   # the archive is seeded first: a minute or two on a busy machine

#: Daphne's --http-timeout here, and the site's deadline under it (seconds).
HTTP_TIMEOUT_S = 10
DEADLINE_S = 8
GAMES = 2000
#: Client addresses of the downloads (loopback: nginx sees each as its own client).
SOURCES = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"]


class TimedDaphne(Daphne):
    """Daphne as in production (tests/system/processes.py), with ``--http-timeout``."""

    def command(self) -> list[str]:
        command = super().command()
        return [*command[:-1], "--http-timeout", str(HTTP_TIMEOUT_S), command[-1]]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pdn-downloads")
    redis = RedisServer(tmp / "redis.log")
    redis.start()
    try:
        with server_database(tmp) as database_url:
            env = {**site_env(database_url, redis.url, tmp / "static"), "PDN_DOWNLOAD_DEADLINE_S": str(DEADLINE_S),
                   "PDN_RATE_LIMIT_SESSION": "", "PDN_RATE_LIMIT_ANONYMOUS": "", "DATABASE_LOCK_TIMEOUT_MS": "60000"}
            seeded = subprocess.run([sys.executable, "-m", "tests.system.archive_seed", "--username", "marathon",
                                     "--games", str(GAMES)], cwd=ROOT, env=env, check=True, capture_output=True,
                                    text=True, timeout=600)
            daphnes = [TimedDaphne(tmp / f"daphne-{i}.log", env) for i in range(2)]
            nginx = Nginx(tmp / "nginx.log", [d.port for d in daphnes])
            try:
                for server in [*daphnes, nginx]:
                    server.start()
                yield {"port": nginx.port, "database_url": database_url, "daphnes": daphnes,
                       "seeded": json.loads(seeded.stdout.strip().splitlines()[-1])}
            finally:
                nginx.stop()
                for daphne in daphnes:
                    daphne.stop()
    finally:
        redis.stop()


def download(port: int, source: str) -> dict:
    """GET the archive from ``source``; ``{"status", "body", "error"}`` (``error``: the body could not
    be read to its end, as a browser would report it)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120, source_address=(source, 0))
    try:
        connection.request("GET", "/@/marathon/games.pdn")
        response = connection.getresponse()
        try:
            body = response.read()
            return {"status": response.status, "body": body, "error": None,
                    "chunked": response.getheader("Transfer-Encoding") == "chunked"}
        except (http.client.IncompleteRead, ConnectionError) as exc:
            return {"status": response.status, "body": b"", "error": type(exc).__name__, "chunked": True}
    finally:
        connection.close()


def whole(body: bytes) -> bool:
    """The file holds every seeded game, each ending with its result and a blank line."""
    text = body.decode()
    return text.count("[Event ") == GAMES and text.endswith(("1-0\n\n", "0-1\n\n", "1/2-1/2\n\n"))


def test_concurrent_downloads_are_each_whole_or_refused(site):
    """Four at once from four addresses: each is whole, refused with an error status, or (on a
    machine too busy to write them all before the deadline) visibly incomplete; none is a 200
    whose body ends cleanly short of the archive, which is what a player took for the whole
    file.  Then one alone arrives whole."""
    assert site["seeded"]["games"] == GAMES
    with concurrent.futures.ThreadPoolExecutor(len(SOURCES)) as pool:
        results = list(pool.map(lambda source: download(site["port"], source), SOURCES))
    for result in results:
        if result["status"] == 200 and result["error"] is None:
            assert result["chunked"] and whole(result["body"]), (len(result["body"]), result["body"][-200:])
        elif result["status"] == 200:
            assert result["error"] in ("IncompleteRead", "ConnectionResetError"), result["error"]
        else:
            assert result["status"] in (429, 503), result["status"]
    alone = download(site["port"], SOURCES[0])
    assert alone["status"] == 200 and alone["error"] is None and whole(alone["body"])


@pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")),
                    reason="holds a PostgreSQL table lock to stall the download")
def test_a_download_that_cannot_finish_is_visibly_incomplete(site):
    """The moves' table is held (as a long migration or a stuck transaction would) past Daphne's
    --http-timeout: the process aborts the response, and the client reports the download failed
    (a 200 whose chunked body never ends, or an error status), instead of a complete-looking
    empty or short file."""
    import psycopg

    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with psycopg.connect(site["database_url"]) as conn:
            conn.execute("LOCK TABLE game_move IN ACCESS EXCLUSIVE MODE")
            held.set()
            release.wait(HTTP_TIMEOUT_S + 20)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        started = time.monotonic()
        result = download(site["port"], SOURCES[0])
        took = time.monotonic() - started
    finally:
        release.set()
        holder.join()
    # Nothing of the body could be written before the cut (headers go out with the first bytes),
    # so nginx may try the other process too (a GET that failed before any byte): whichever
    # answers last, the client is told the download failed, and never gets a file that looks whole.
    assert (result["status"] == 200 and result["error"] is not None) or result["status"] >= 500, result
    assert took >= HTTP_TIMEOUT_S
    logs = "".join(Path(d.log_path).read_text() for d in site["daphnes"])
    assert re.search(r"aborted: the response was not finished within --http-timeout", logs)
    assert download(site["port"], SOURCES[1])["status"] == 200      # and the next one goes through whole
