"""Operations of page requests: each request timed by view, method and status on /metrics; a Host the
site does not serve logged as one warning, not an error; Daphne's access lines in the site's JSON
(checkers_site/ops/, checkers_site/serve.py)."""

from __future__ import annotations

import io
import json
import logging

import pytest
import sentry_sdk
from django.core import mail
from django.test import Client

from checkers_site.ops import errors, logs
from checkers_site.serve import SiteAccessLog
from tests.web.test_ops import Recording, scrape, value

REQUESTS = "checkers_http_request_seconds"


# --- request metrics ---------------------------------------------------------------------------

@pytest.mark.django_db
def test_each_request_is_timed_by_view_method_and_status():
    before = scrape()
    client = Client()
    assert client.get("/").status_code == 200
    assert client.get("/").status_code == 200
    assert client.get("/no-such-page").status_code == 404
    assert client.post("/tv").status_code == 405
    after = scrape()

    def served(view: str, method: str, status: str, sample: str = "_count", **more: str) -> float:
        labels = {"view": view, "method": method, "status": status, **more}
        return value(after, REQUESTS + sample, **labels) - value(before, REQUESTS + sample, **labels)

    assert served("home", "GET", "200") == 2
    assert served("home", "GET", "200", "_bucket", le="+Inf") == 2
    assert served("home", "GET", "200", "_sum") > 0
    assert served("unresolved", "GET", "404") == 1
    assert served("tv", "POST", "405") == 1
    # The operations endpoints are not counted (a scrape every few seconds would swamp the rest).
    assert not any(name == REQUESTS + "_count" and ("view", "unresolved") in labels and ("status", "200") in labels
                   for name, labels in after)


# --- a Host the site does not serve -----------------------------------------------------------

@pytest.fixture
def sentry_recording():
    """Sentry started with a transport that keeps what it would send; stopped afterwards."""
    transport = Recording()
    errors.init_sentry("http://public@127.0.0.1:9/1", environment="test", transport=transport)
    try:
        yield transport
    finally:
        sentry_sdk.get_client().close(timeout=0)
        sentry_sdk.get_global_scope().set_client(None)


def test_a_host_the_site_does_not_serve_is_one_warning_without_traceback_nor_report(caplog, sentry_recording):
    with caplog.at_level(logging.INFO):
        response = Client().get("/", HTTP_HOST="scanner.example")
    assert response.status_code == 400
    records = [r for r in caplog.records if r.name.startswith("django")]
    assert [(r.name, r.levelname) for r in records] == [("django.security.DisallowedHost", "WARNING")]
    (record,) = records
    assert record.exc_info is None and record.exc_text is None
    assert "scanner.example" in record.getMessage()
    line = json.loads(logs.JsonFormatter().format(record))
    assert line["level"] == "WARNING" and "exc_info" not in line
    sentry_sdk.get_client().flush(timeout=2)
    events = [item for envelope in sentry_recording.envelopes for item in envelope.items if item.type == "event"]
    assert events == []
    assert mail.outbox == []


# --- Daphne's access lines ------------------------------------------------------------------------

def test_access_lines_are_the_sites_json():
    stream = io.StringIO()
    access = SiteAccessLog(stream, json_lines=True)
    access("http", "complete", {"path": "/@/alice\n" + "x" * 300, "status": 200, "method": "GET",
                                "client": "203.0.113.7:5555", "time_taken": 0.01234, "size": 5120})
    access("websocket", "connecting", {"path": "/ws/game/abc/", "client": "203.0.113.7:5556"})
    access("websocket", "rejected", {"path": "/ws/game/abc/", "client": "203.0.113.7:5556"})
    access("http", "unknown action", {"path": "/"})
    first, second, third = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first.pop("time").endswith("+00:00")
    assert first == {"level": "INFO", "logger": "checkers_site.access", "message": "request served",
                     "client": "203.0.113.7:5555", "path": "/@/alice\\n" + "x" * (logs.MAX_PATH_LOGGED - 10) + "…",
                     "method": "GET", "status": 200, "bytes": 5120, "duration_ms": 12.3}
    assert {k: second[k] for k in ("level", "logger", "message", "path", "client")} == {
        "level": "INFO", "logger": "checkers_site.access", "message": "websocket connecting",
        "path": "/ws/game/abc/", "client": "203.0.113.7:5556"}
    assert third["message"] == "websocket rejected"


def test_access_lines_as_text_stay_daphnes():
    stream = io.StringIO()
    SiteAccessLog(stream)("http", "complete", {"path": "/a b", "status": 404, "method": "GET",
                                               "client": "127.0.0.1:5555", "time_taken": 0.1, "size": 10})
    line = stream.getvalue()
    assert line.startswith("127.0.0.1:5555 - - [") and line.endswith('] "GET /a%20b" 404 10\n')
