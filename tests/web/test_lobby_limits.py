"""Lobby sockets per session and per client address are limited too (each may hold a seek):
one client cannot fill the pools or the lobby's Redis connections; a lobby socket that floods
is closed, as a game socket is."""

from __future__ import annotations

import asyncio

import pytest
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from checkers_site.asgi import application
from tests.web.test_socket_limits import an_address

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def open_lobby(browser, address: str | None = None) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, "/ws/lobby/", headers=browser.headers())
    if address is not None:
        comm.scope["client"] = [address, 50000]
    connected, _ = await comm.connect(timeout=5)
    assert connected
    return comm


async def admitted(comm) -> bool:
    """True when the lobby socket got its pool counts, False when it was closed with 4429."""
    first = await comm.receive_output(timeout=5)
    if first["type"] == "websocket.close":
        assert first["code"] == 4429
        return False
    assert first["type"] == "websocket.send" and '"pool"' in first["text"]
    return True


@override_settings(LOBBY_SOCKETS_PER_SESSION=2, LOBBY_SOCKETS_PER_ADDRESS=0)
async def test_a_session_may_hold_only_so_many_lobby_sockets(alice, bob):
    mine = [await open_lobby(alice) for _ in range(2)]
    assert [await admitted(c) for c in mine] == [True, True]
    extra = await open_lobby(alice)
    assert not await admitted(extra)
    other = await open_lobby(bob)
    assert await admitted(other)
    await mine[0].disconnect()
    await asyncio.sleep(0.2)
    again = await open_lobby(alice)
    assert await admitted(again)   # a closed socket gives its place back
    for comm in (*mine[1:], other, again):
        await comm.disconnect()


@override_settings(LOBBY_SOCKETS_PER_SESSION=0, LOBBY_SOCKETS_PER_ADDRESS=2)
async def test_an_address_may_hold_only_so_many_lobby_sockets(alice, bob, carol):
    address = an_address()
    first, second = await open_lobby(alice, address), await open_lobby(bob, address)
    assert [await admitted(first), await admitted(second)] == [True, True]
    third = await open_lobby(carol, address)
    assert not await admitted(third)
    elsewhere = await open_lobby(carol, an_address())
    assert await admitted(elsewhere)
    for comm in (first, second, elsewhere):
        await comm.disconnect()


async def test_a_lobby_socket_that_keeps_sending_over_its_rate_is_closed(alice, bob):
    """More than 50 messages refused within 10 s: a flood, not a page; the socket is closed with
    4429, as a game socket is, and the lobby goes on for the others."""
    flood, other = await open_lobby(alice), await open_lobby(bob)
    assert [await admitted(flood), await admitted(other)] == [True, True]
    for _ in range(80):
        await flood.send_json_to({"type": "ping"})
    outputs = []
    while not outputs or outputs[-1]["type"] != "websocket.close":
        outputs.append(await flood.receive_output(timeout=5))
    texts = [output.get("text", "") for output in outputs]
    assert sum('"pong"' in text for text in texts) == 20
    assert sum('"rate_limited"' in text for text in texts) == 1
    assert outputs[-1] == {"type": "websocket.close", "code": 4429}
    await other.send_json_to({"type": "ping"})
    while '"pong"' not in (answer := await other.receive_output(timeout=5)).get("text", ""):
        assert '"pool"' in answer["text"]  # counts pushed meanwhile
    await flood.disconnect()
    await other.disconnect()
