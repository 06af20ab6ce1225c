"""HTTP requests a real Daphne process (``checkers_site.serve``) cannot read, and long paths in its
logs.

Twisted closed the connection without a word on a request line over 16 KiB; it is answered 414
with a text body (a header line over it: 431; a request line that is no request: 400, also with a
body).  A long path is shown once a log line, cut (the access log, Django's 404 line), and every
line is one JSON object of the site's format.
"""

from __future__ import annotations

import contextlib
import json
import socket

import pytest

from checkers_site.handshakes import MAX_LOGGED
from tests.system.processes import Daphne, RedisServer, server_database, site_env


@pytest.fixture(scope="module")
def daphne(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("http-faults")
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    with server_database(tmp_path) as database_url:
        env = site_env(database_url, redis.url, tmp_path / "static")
        server = Daphne(tmp_path / "daphne.log", env)
        server.start()
        try:
            yield server
        finally:
            server.stop()
            redis.stop()


def exchange(port: int, request: bytes) -> bytes:
    """Send ``request`` on a new connection and read everything until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(request)   # (it may answer and close before reading it all)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def status_and_body(answer: bytes) -> tuple[str, dict[str, str], str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return lines[0], headers, body.decode()


@pytest.mark.parametrize("length", [17_000, 100_000])
def test_a_request_line_over_16_kib_is_answered_414_with_a_body(daphne, length):
    answer = exchange(daphne.port, b"GET /" + b"a" * length + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    status, headers, body = status_and_body(answer)
    assert status == "HTTP/1.1 414 URI Too Long", answer[:200]
    assert headers["Content-Type"].startswith("text/plain") and headers["Connection"] == "close"
    assert body == "The request line is longer than 16384 bytes.\n"
    assert int(headers["Content-Length"]) == len(body.encode())


def test_a_header_line_over_16_kib_is_answered_431(daphne):
    answer = exchange(daphne.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"b" * 17_000 + b"\r\n\r\n")
    status, _, body = status_and_body(answer)
    assert status == "HTTP/1.1 431 Request Header Fields Too Large", answer[:200]
    assert "header" in body


def test_headers_over_16_kib_together_are_answered_431(daphne):
    pads = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"c" * 1000) for i in range(20))
    status, _, body = status_and_body(exchange(daphne.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + pads + b"\r\n"))
    assert status == "HTTP/1.1 431 Request Header Fields Too Large"
    assert "16384 bytes" in body


def test_a_request_line_that_is_no_request_is_answered_400_with_a_body(daphne):
    status, _, body = status_and_body(exchange(daphne.port, b"HELLO\r\n\r\n"))
    assert status == "HTTP/1.1 400 Bad Request"
    assert body == "The request could not be read.\n"


def test_the_site_still_answers_after_them(daphne):
    status, _, _ = status_and_body(exchange(daphne.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                            b"Connection: close\r\n\r\n"))
    assert status == "HTTP/1.1 200 OK"


def test_a_long_path_is_logged_cut_and_every_line_is_the_sites_json(daphne):
    """Each line about the request shows the path cut to 200 characters: the access line once, and
    Django's 404 line in its message and its ``path`` field (it was all of it, twice).  Every line
    the process writes, its access lines (requests and websocket steps) as the site's own, is one
    JSON object of the site's format."""
    marker = "zq" + "x" * 3000
    status, _, _ = status_and_body(exchange(daphne.port, f"GET /{marker} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                         "Connection: close\r\n\r\n".encode()))
    assert status == "HTTP/1.1 404 Not Found"
    exchange(daphne.port, b"GET /ws/game/nosuchgame1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
                          b"Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
    daphne.stop()               # its output is all written
    try:
        every = [json.loads(line) for line in daphne.log_path.read_text().splitlines()]   # each one, or this fails
    finally:
        daphne.start()
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in every)
    records = [r for r in every if "zq" in json.dumps(r)]
    assert records, "the request left no log line"
    for record in records:
        assert "x" * MAX_LOGGED not in json.dumps(record), json.dumps(record)[:300]
    (access,) = [r for r in records if r["logger"] == "checkers_site.access"]
    assert (access["method"], access["status"], access["message"]) == ("GET", 404, "request served")
    assert access["path"] == "/" + marker[:MAX_LOGGED - 1] + "…" and access["duration_ms"] >= 0
    assert json.dumps(access).count("zq") == 1
    (django,) = [r for r in records if r["logger"] == "django.request"]
    assert django["status_code"] == 404
    assert django["path"] == "/" + marker[:MAX_LOGGED - 1] + "…"
    assert django["message"] == "Not Found: " + django["path"]
    steps = {r["message"] for r in every if r["logger"] == "checkers_site.access"
             and r["path"] == "/ws/game/nosuchgame1/"}
    assert "websocket connecting" in steps, steps
