"""The log-in and sign-up pages while the Redis of the cache (allauth's rate limits) is stopped: they
work as with it, uncounted, and quickly (checkers_site/cache.py, docs/accounts.md "Rate limits").
A Redis server of the test's own is started, used, then stopped."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.system.processes import RedisServer
from tests.web.test_accounts import PASSWORD, log_out, sign_up

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def own_cache_redis(tmp_path, settings):
    """The cache on a Redis server of this test's own (started; the test stops it)."""
    server = RedisServer(tmp_path / "redis.log")
    server.start()
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": server.url}}
    try:
        yield server
    finally:
        server.stop()


def timed(call, *args, **kwargs):
    started = time.monotonic()
    response = call(*args, **kwargs)
    return response, time.monotonic() - started


@pytest.mark.alone
def test_log_in_and_sign_up_work_while_the_caches_redis_is_stopped(own_cache_redis):
    client = Client(raise_request_exception=False)
    assert client.get("/").status_code == 200
    sign_up(client, "Tess")                                   # counted in the Redis, running
    log_out(client)
    own_cache_redis.stop()
    for path in ("/accounts/login/", "/accounts/signup/"):
        response, seconds = timed(client.get, path)
        assert response.status_code == 200 and seconds < 3, (path, response.status_code, seconds)
    wrong, seconds = timed(client.post, "/accounts/login/", {"login": "Tess", "password": "not-it"})
    assert wrong.status_code == 200 and seconds < 3
    assert b"The username and/or password you specified are not correct" in wrong.content
    right, seconds = timed(client.post, "/accounts/login/", {"login": "Tess", "password": PASSWORD})
    assert right.status_code == 302 and seconds < 3
    assert client.session["account"] == "Tess"
    log_out(client)
    newcomer = Client(raise_request_exception=False)
    assert newcomer.get("/").status_code == 200
    response, seconds = timed(newcomer.post, "/accounts/signup/", {
        "username": "Uma", "email": "", "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 302 and seconds < 3, response.status_code
    assert User.objects.filter(username="Uma").exists() and newcomer.session["account"] == "Uma"
