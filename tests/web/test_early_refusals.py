"""A client refused a new game or a search is refused again at once by the process that refused it,
before the session, CSRF, database or Redis work (game/http_limits.py, ``early_refusals``), and
each such refusal is held a moment under ASGI (a client that asks again at once is slowed)."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from channels.testing import HttpCommunicator
from django.test import Client, override_settings

from checkers_site.asgi import application
from game import http_limits

pytestmark = pytest.mark.django_db(transaction=True)

START = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"


@pytest.fixture(autouse=True)
def fresh_blocks():
    http_limits.blocked.until.clear()
    yield
    http_limits.blocked.until.clear()


def an_address() -> str:
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"


def search(client: Client, token: str | None):
    headers = {"HTTP_X_CSRFTOKEN": token} if token else {}
    return client.post("/analysis/search", data=json.dumps({"fen": START, "time_ms": 1}),
                       content_type="application/json", **headers)


@override_settings(ANALYSIS_RATE_LIMIT_SESSION="2/minute", ANALYSIS_RATE_LIMIT_ADDRESS="")
def test_a_refused_session_is_refused_again_before_the_csrf_check():
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=an_address())
    client.get("/")  # a session with a player id, and its CSRF cookie
    token = client.cookies["csrftoken"].value
    assert [search(client, token).status_code for _ in range(3)] == [200, 200, 429]
    # Without its CSRF token the request would be 403 once it reached the CSRF check: it does not.
    again = search(client, None)
    assert again.status_code == 429 and again.json()["error"] == "rate_limited"
    assert 1 <= int(again["Retry-After"]) <= 60
    other = Client(enforce_csrf_checks=True, REMOTE_ADDR=an_address())
    other.get("/analysis")
    assert search(other, None).status_code == 403          # nobody else is concerned


@override_settings(GAME_CREATE_RATE_LIMIT_SESSION="", GAME_CREATE_RATE_LIMIT_ADDRESS="2/minute")
def test_a_refused_address_is_refused_again_whatever_its_sessions():
    address = an_address()
    form = {"name": "alice", "color": "B", "time_control": "untimed"}
    codes = [Client(REMOTE_ADDR=address).post("/", form).status_code for _ in range(3)]
    assert codes == [302, 302, 429]
    fresh = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)   # a new session, no CSRF token
    refused = fresh.post("/", form)
    assert refused.status_code == 429 and b"Too many new games" in refused.content
    assert fresh.post("/computer", {"level": "1"}).status_code == 429   # the same rule
    assert Client(REMOTE_ADDR=address).get("/").status_code == 200       # pages are not limited
    assert Client(REMOTE_ADDR=an_address()).post("/", form).status_code == 302


@pytest.mark.asyncio
@override_settings(GAME_CREATE_RATE_LIMIT_SESSION="", GAME_CREATE_RATE_LIMIT_ADDRESS="1/minute")
async def test_an_early_refusal_is_held_a_moment_under_asgi(monkeypatch):
    monkeypatch.setattr(http_limits, "HOLD_S", 0.4)
    address = an_address()
    http_limits.blocked.note(http_limits.GAME_CREATE, "address", address, 30)

    async def post(path: str) -> tuple[int, float]:
        comm = HttpCommunicator(application, "POST", path, body=b"name=x&color=B",
                                headers=[(b"host", b"127.0.0.1:8000"),
                                         (b"content-type", b"application/x-www-form-urlencoded")])
        comm.scope["client"] = [address, 40000]
        started = time.monotonic()
        response = await comm.get_response(timeout=10)
        return response["status"], time.monotonic() - started

    status, took = await post("/")
    assert status == 429 and took >= 0.4
    status, took = await post("/healthz")              # not a limited request: not held
    assert took < 0.4
