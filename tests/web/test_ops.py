"""Operations: /healthz and /readyz, /metrics after a played game, structured logs with the
socket's context, and Sentry only with a DSN (checkers_site/ops/)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis.asyncio
import sentry_sdk
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator, WebsocketCommunicator
from django.conf import settings
from django.db import connection
from django.test import AsyncClient, Client, override_settings
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families
from sentry_sdk.transport import Transport

from checkers_site.asgi import application
from checkers_site.ops import errors, health, logs, metrics
from game.engine import EngineBusy, EnginePool
from game.round import actions, fanout
from game.round.fanout import publishing as fanout_publish
from tests.system.processes import free_port
from tests.web.conftest import recv

ROOT = Path(__file__).resolve().parents[2]


# --- health ----------------------------------------------------------------------------------

def test_healthz_is_ok_without_database_session_or_cookie():
    # No django_db mark: any database access would fail the test.
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.content == b"ok\n"
    assert "Set-Cookie" not in response.headers and not response.cookies


@pytest.mark.django_db(transaction=True)
def test_readyz_answers_ok_when_database_and_redis_answer():
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content
    assert response.json() == {"database": "ok", "redis": "ok"}
    assert not response.cookies


@pytest.fixture
def fresh_readiness_client():
    """The readiness check's Redis client is made again from the settings of the test."""
    health._redis = None
    yield
    health._redis = None


@pytest.mark.django_db(transaction=True)
@override_settings(REDIS_URL="redis://127.0.0.1:1/0")
def test_readyz_is_503_when_redis_is_unreachable(fresh_readiness_client, caplog):
    with caplog.at_level(logging.INFO):
        response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json() == {"database": "ok", "redis": "error: ConnectionError"}
    # One warning with the cause; no "Service Unavailable" error line (nor Sentry event) per probe.
    assert [(r.name, r.levelname) for r in caplog.records] == [("checkers_site.ops.health", "WARNING")]


@pytest.fixture
def silent_server():
    """A TCP server that accepts connections and never answers (a hung Redis)."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve():
        server.settimeout(0.1)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(server.accept()[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


@pytest.mark.django_db(transaction=True)
async def test_readyz_gives_up_on_a_hung_redis_within_its_timeout(silent_server, fresh_readiness_client):
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{silent_server}/0"):
        started = time.monotonic()
        response = await AsyncClient().get("/readyz")
        elapsed = time.monotonic() - started
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok"
    assert body["redis"] in ("timeout", "error: TimeoutError"), body
    assert elapsed < health.CHECK_TIMEOUT_S + 0.5


# --- metrics ---------------------------------------------------------------------------------

def scrape(client: Client | None = None, **extra) -> dict[tuple[str, tuple], float]:
    response = (client or Client()).get("/metrics", **extra)
    assert response.status_code == 200, response.status_code
    assert response["Content-Type"].startswith("text/plain")
    return parse(response.content.decode())


def parse(text: str) -> dict[tuple[str, tuple], float]:
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_answer_loopback_or_the_token_only():
    assert Client().get("/metrics").status_code == 200
    outsider = Client(REMOTE_ADDR="203.0.113.9")
    assert outsider.get("/metrics").status_code == 403
    with override_settings(METRICS_TOKEN="s3cret-token"):
        assert outsider.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
        ok = outsider.get("/metrics", headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200 and not ok.cookies
    with override_settings(METRICS_ENABLED=False):
        assert Client().get("/metrics").status_code == 404


async def ascrape() -> dict:
    response = await AsyncClient().get("/metrics")
    assert response.status_code == 200
    return parse(response.content.decode())


@pytest.mark.django_db(transaction=True)
async def test_metrics_count_a_played_game(alice, bob, carol):
    before = await ascrape()
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    c, _ = await carol.connect(game.id)
    connected = await ascrape()
    assert value(connected, "checkers_open_sockets", kind="game") == \
        value(before, "checkers_open_sockets", kind="game") + 3
    v = snap["v"]
    for mover, move in ((a, "11-15"), (b, "22-18"), (a, "15x22"), (b, "25x18")):
        await mover.send_json_to({"type": "move", "move": move, "v": v})
        for comm in (a, b, c):
            assert (await recv(comm))["move"] == move
        v += 1
    # Refused: an illegal move, a move out of turn, a spectator's move; a claim against a present player.
    for sender, move, code in ((a, "9-13-17", "illegal_move"), (b, "24-20", "not_your_turn"),
                               (c, "9-14", "not_seated")):
        await sender.send_json_to({"type": "move", "move": move, "v": v})
        assert (await recv(sender))["code"] == code
    await b.send_json_to({"type": "claim_win"})
    assert (await recv(b))["code"] == "opponent_present"
    after = await ascrape()
    for comm in (a, b, c):
        await comm.disconnect()
    closed = await ascrape()

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("checkers_moves_accepted_total") == 4
    assert moved("checkers_move_seconds_count") == 4
    assert moved("checkers_move_seconds_sum") > 0
    assert moved("checkers_moves_refused_total", code="illegal_move") == 1
    assert moved("checkers_moves_refused_total", code="not_your_turn") == 1
    assert moved("checkers_moves_refused_total", code="not_seated") == 1
    assert moved("checkers_claims_total", outcome="opponent_present") == 1
    assert moved("checkers_events_published_total") >= 4  # the moves (and any audience notices)
    assert moved("checkers_event_publish_failures_total", when="first") == 0
    assert value(closed, "checkers_open_sockets", kind="game") == value(before, "checkers_open_sockets", kind="game")


@pytest.mark.django_db(transaction=True)
async def test_lobby_sockets_are_counted_while_open(alice):
    before = sample("checkers_open_sockets", kind="lobby")
    comm = WebsocketCommunicator(application, "/ws/lobby/", headers=alice.headers())
    assert (await comm.connect(timeout=5))[0]
    await comm.receive_json_from(timeout=5)  # the pools' counts, sent just before the socket is counted
    assert await eventually(lambda: sample("checkers_open_sockets", kind="lobby") == before + 1)
    await comm.disconnect()
    assert sample("checkers_open_sockets", kind="lobby") == before


async def eventually(check, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def sample(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.django_db(transaction=True)
async def test_failed_publishes_and_republishes_are_counted(monkeypatch):
    """The hub's Redis refuses the first publish (a server nobody serves); the republish, once the
    working Redis is back, goes out: one failure and one republish counted."""
    monkeypatch.setattr(fanout_publish, "REPUBLISH_AFTER_S", (0.05,))
    failed, again = sample("checkers_event_publish_failures_total", when="first"), \
        sample("checkers_events_republished_total")
    from game.round.events import AudienceEvent
    hub = fanout.hub()
    working = hub.client
    hub.client = redis.asyncio.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1)
    try:
        assert not await fanout.publish("g", [AudienceEvent(game_v=1, spectators=0, online={"B": True, "W": False})])
    finally:
        await hub.client.aclose()
        hub.client = working
    assert sample("checkers_event_publish_failures_total", when="first") == failed + 1
    assert await eventually(lambda: sample("checkers_events_republished_total") == again + 1, timeout=5)


async def test_resubscriptions_and_resyncs_are_counted():
    class Member:
        resynced = 0

        def resync(self):
            self.resynced += 1

    hub = fanout.Hub(settings.REDIS_URL)
    members = [Member(), Member()]
    hub.round("g").members.update(members)
    resubscribed, resyncs = sample("checkers_resubscriptions_total"), sample("checkers_resyncs_total")
    line = hub.line_of("g")
    await line._subscribed()  # the first: nothing missed
    assert sample("checkers_resyncs_total") == resyncs
    await line._subscribed()
    assert [m.resynced for m in members] == [1, 1]
    assert sample("checkers_resubscriptions_total") == resubscribed + 1
    assert sample("checkers_resyncs_total") == resyncs + 2
    await hub.close()


def slow(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


async def test_engine_pool_queue_wait_and_refusals_are_observed():
    pool = EnginePool(workers=1, kind="thread", max_waiting=1, observer=metrics.EngineObserver("test"))
    waits = sample("checkers_engine_wait_seconds_count", pool="test")
    first = asyncio.ensure_future(pool.run(slow, 0.2))
    await asyncio.sleep(0.05)
    second = asyncio.ensure_future(pool.run(slow, 0.0))
    await asyncio.sleep(0.05)
    assert sample("checkers_engine_in_flight", pool="test") == 2
    assert sample("checkers_engine_queue_length", pool="test") == 1
    with pytest.raises(EngineBusy):
        await pool.run(slow, 0.0)
    assert sample("checkers_engine_busy_total", pool="test") == 1
    assert await first == 0.2 and await second == 0.0
    assert sample("checkers_engine_in_flight", pool="test") == 0
    assert sample("checkers_engine_queue_length", pool="test") == 0
    assert sample("checkers_engine_wait_seconds_count", pool="test") == waits + 2
    # The second waited for the first (about 0.15 s).
    assert sample("checkers_engine_wait_seconds_sum", pool="test") >= 0.1
    pool.shutdown(wait=True)


def test_several_processes_add_up_in_multiprocess_mode(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "checkers_site.settings_test",
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    prelude = "import django; django.setup(); from checkers_site.ops import metrics; "
    for _ in range(2):  # two server processes, each with a socket open when it exits
        subprocess.run([sys.executable, "-c", prelude + "metrics.start_process(); metrics.move_accepted(0); "
                        "metrics.move_refused('illegal_move'); metrics.game_sockets.inc()"],
                       cwd=ROOT, env=env, check=True, timeout=60)
    out = subprocess.run([sys.executable, "-c", prelude + "metrics.game_sockets.inc(); "
                          "import sys; sys.stdout.write(metrics.exposition().decode())"],
                         cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=60).stdout
    samples = parse(out)
    assert value(samples, "checkers_moves_accepted_total") == 2
    assert value(samples, "checkers_moves_refused_total", code="illegal_move") == 2
    assert value(samples, "checkers_move_seconds_count") == 2
    # The gauge counts the live process only: the two that exited took their sockets with them.
    assert value(samples, "checkers_open_sockets", kind="game") == 1


@pytest.mark.django_db(transaction=True)
def test_database_pool_usage_is_shown_on_postgresql():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    samples = scrape()
    if connection.vendor != "postgresql":
        assert not any(name.startswith("checkers_db_pool") for name, _ in samples)
        return
    assert value(samples, "checkers_db_pool_connections", state="max") == settings.DATABASES["default"][
        "OPTIONS"]["pool"]["max_size"]
    assert value(samples, "checkers_db_pool_connections", state="size") >= 1
    assert value(samples, "checkers_db_pool_requests_total") >= 1


# --- logs ------------------------------------------------------------------------------------

@pytest.fixture
def json_lines():
    """Lines logged by every logger while the test runs, as the production handler writes them."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(logs.ContextFilter())
    handler.setFormatter(logs.JsonFormatter())
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    loggers = [logging.getLogger(name) for name in ("checkers_site.handshakes", "game.round.socket", "django")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)

    def read() -> list[dict]:
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    yield read
    root.removeHandler(handler)
    root.setLevel(old_level)
    for logger, level in zip(loggers, levels, strict=True):
        logger.setLevel(level)


@pytest.mark.django_db(transaction=True)
async def test_a_refused_handshake_is_one_json_line_with_its_fields(alice, json_lines):
    comm = WebsocketCommunicator(application, "/ws/game/abcdefghij/", headers=alice.headers())
    comm.scope["client"] = ["198.51.100.7", 41000]
    assert (await comm.connect(timeout=5))[0]
    while (await comm.receive_output(timeout=5))["type"] != "websocket.close":
        pass
    await comm.disconnect()
    lines = [line for line in json_lines() if line.get("event") == "websocket_refused"]
    assert len(lines) == 1, json_lines()
    line = lines[0]
    assert line["level"] == "WARNING" and line["logger"] == "checkers_site.handshakes"
    assert line["path"] == "/ws/game/abcdefghij/" and line["client"] == "198.51.100.7"
    assert line["close_code"] == 4404 and line["reason"] == "no such game"
    assert line["game_id"] == "abcdefghij"
    assert line["message"].startswith("websocket refused: path='/ws/game/abcdefghij/'")
    assert "time" in line
    text = json.dumps(json_lines())
    assert alice.cookie not in text and alice.player_id not in text and settings.SESSION_COOKIE_NAME not in text


@pytest.mark.django_db(transaction=True)
async def test_socket_lines_carry_the_game_seat_and_close_code(alice, bob, json_lines):
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    b, _ = await bob.connect(game.id)
    await b.disconnect(code=4000)
    closed = [line for line in json_lines() if line["message"] == "game socket closed"]
    assert len(closed) == 1, json_lines()
    assert closed[0]["game_id"] == game.id and closed[0]["seat"] == "W" and closed[0]["close_code"] == 4000
    assert bob.cookie not in json.dumps(json_lines())


@pytest.mark.django_db(transaction=True)
async def test_request_lines_carry_method_and_path_not_the_query(json_lines):
    response = await HttpCommunicator(application, "GET", "/no-such-page/?token=hidden",
                                      headers=[(b"host", b"127.0.0.1:8000")]).get_response()
    assert response["status"] == 404
    lines = [line for line in json_lines() if line["logger"] == "django.request"]
    assert lines, json_lines()
    assert lines[0]["method"] == "GET" and lines[0]["path"] == "/no-such-page/"
    assert "hidden" not in json.dumps(lines) and "request" not in lines[0]


def test_text_format_shows_the_context():
    record = logging.LogRecord("game.round.socket", logging.INFO, __file__, 1, "hello %s", ("there",), None)
    with logs.bound(game_id="abcdefghij", seat="B"):
        logs.ContextFilter().filter(record)
    assert logs.context() == {}
    text = logs.TextFormatter().format(record)
    assert text.endswith("INFO game.round.socket: hello there [game_id=abcdefghij seat=B]")


@pytest.mark.django_db(transaction=True)
async def test_a_path_with_control_characters_cannot_forge_a_text_log_line():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.TextFormatter())
    handler.addFilter(logs.ContextFilter())
    django_request = logging.getLogger("django.request")
    django_request.addHandler(handler)
    forged = "/nothing\n2026-12-03 08:00:00,000 ERROR django.security: FORGED\x00\u2028/"
    try:
        response = await HttpCommunicator(application, "GET", forged,
                                          headers=[(b"host", b"127.0.0.1:8000")]).get_response()
    finally:
        django_request.removeHandler(handler)
    assert response["status"] == 404
    text = stream.getvalue()
    assert text.count("\n") == 1 and "\x00" not in text and "\u2028" not in text, text
    assert text.startswith(text.split(" ERROR ")[0]) and "WARNING django.request: Not Found" in text
    assert "FORGED\\x00\\u2028/" in text   # written as escapes, in Django's part and in the context's
    # A newline in a bound path (a socket's, which no HTTP parser cleaned) is written as an escape too.
    record = logging.LogRecord("game.round.socket", logging.INFO, __file__, 1, "game socket closed", (), None)
    with logs.bound(path="/ws/game/x\n2026-12-03 08:00:00,000 ERROR FORGED/"):
        logs.ContextFilter().filter(record)
    line = logs.TextFormatter().format(record)
    assert "\n" not in line and line.endswith("[path=/ws/game/x\\n2026-12-03 08:00:00,000 ERROR FORGED/]")


def test_logging_setting_picks_json_or_text():
    assert logs.logging_config("json", "INFO")["handlers"]["console"]["formatter"] == "json"
    assert logs.logging_config("text", "DEBUG")["handlers"]["console"]["formatter"] == "text"
    assert ("text" if settings.DEBUG else "json") == settings.LOG_FORMAT
    assert settings.LOGGING["handlers"]["console"]["filters"] == ["context"]


# --- errors (Sentry) -------------------------------------------------------------------------

class Recording(Transport):
    """A Sentry transport that keeps the envelopes instead of sending them."""

    def __init__(self, options=None):
        super().__init__(options)
        self.envelopes: list = []

    def capture_envelope(self, envelope):
        self.envelopes.append(envelope)


def test_sentry_is_off_without_a_dsn():
    assert not settings.SENTRY_DSN
    assert not sentry_sdk.get_client().is_active()
    assert errors.init_sentry("") is False
    assert not sentry_sdk.get_client().is_active()


def test_sentry_reports_with_a_dsn_and_no_personal_data():
    transport = Recording()
    try:
        assert errors.init_sentry("http://public@127.0.0.1:9/1", environment="test", transport=transport)
        client = sentry_sdk.get_client()
        assert client.is_active()
        assert not client.should_send_default_pii()
        assert client.options["include_local_variables"] is False
        assert client.options["environment"] == "test"
        assert "django" in client.integrations
        sentry_sdk.capture_message("a test error")
        client.flush(timeout=2)
        events = [item.payload.json for envelope in transport.envelopes for item in envelope.items
                  if item.type == "event"]
        assert [event["message"] for event in events] == ["a test error"]
    finally:
        sentry_sdk.get_client().close(timeout=0)
        sentry_sdk.get_global_scope().set_client(None)
    assert not sentry_sdk.get_client().is_active()


def test_settings_start_sentry_when_the_environment_has_a_dsn():
    code = ("import django, sentry_sdk; django.setup(); c = sentry_sdk.get_client(); "
            "print(c.is_active(), c.should_send_default_pii(), c.options['environment'])")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "checkers_site.settings_test",
           "SENTRY_DSN": "http://public@127.0.0.1:9/1", "SENTRY_ENVIRONMENT": "staging"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.split() == ["True", "False", "staging"]
    env.pop("SENTRY_DSN")
    out = subprocess.run([sys.executable, "-c", code.replace(", c.should_send_default_pii(), "
                                                             "c.options['environment']", "")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False"]

