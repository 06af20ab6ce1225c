"""A burst of lobby sockets waits for Redis connections instead of failing: honest seekers are
still paired, and nobody's seek is lost."""

from __future__ import annotations

import asyncio
import copy

import pytest
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings

from checkers_site.asgi import application
from tests.web.conftest import make_browser
from tests.web.test_matchmaking import POOL, matchmaking_prefix, next_message, open_lobby, seek  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

#: Connections the channel layer may hold in this test: far fewer than the burst needs at once.
POOL_CONNECTIONS = 4
BURST = 60


@pytest.fixture
def small_channel_layer_pool(settings):
    layers = copy.deepcopy(django_settings.CHANNEL_LAYERS)
    layers["default"]["CONFIG"]["hosts"][0]["max_connections"] = POOL_CONNECTIONS
    settings.CHANNEL_LAYERS = layers
    channel_layers.backends = {}
    yield
    channel_layers.backends = {}


@pytest.mark.alone
async def test_a_burst_of_lobby_sockets_does_not_cost_an_honest_pairing(alice, bob, small_channel_layer_pool):
    crowd = [make_browser(f"guest{i}") for i in range(BURST)]

    async def arrive(browser):
        comm = WebsocketCommunicator(application, "/ws/lobby/", headers=browser.headers())
        connected, _ = await comm.connect(timeout=20)
        assert connected
        return comm

    burst = asyncio.gather(*(arrive(browser) for browser in crowd))
    a, b = await open_lobby(alice), await open_lobby(bob)
    crowd_sockets = await burst
    await seek(a)
    # Every socket of the burst joined the pool's group: the count Alice's seek changed reaches it.
    for comm in crowd_sockets:
        assert await pushed_count(comm) == 1
    await seek(b)
    paired = [await next_message(a, timeout=20), await next_message(b, timeout=20)]
    assert [m["type"] for m in paired] == ["paired", "paired"], paired
    assert paired[0]["game"] == paired[1]["game"]
    for comm in [a, b, *crowd_sockets]:
        await comm.disconnect()


async def pushed_count(comm, timeout: float = 10) -> int:
    """The first count of the pool pushed to ``comm`` that is not 0 (the counts it was sent when it
    connected are passed over)."""
    async with asyncio.timeout(timeout):
        while True:
            message = await comm.receive_json_from(timeout=timeout)
            if message["type"] == "pool" and message["pool"] == POOL and message["waiting"]:
                return message["waiting"]
