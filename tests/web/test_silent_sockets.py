"""A page that falls silent (a network gone without a close frame) is taken for gone by the server:
its socket leaves the game's presence, the opponent's page is told, and the socket is closed 4408.

The silence limit is shortened for the test (``SILENT_AFTER_S``, 10 s on the site); the page's
pings are sent by hand. The browser test with a frozen network is tests/browser/test_offline.py.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from channels.db import database_sync_to_async

from game.round import actions, presence, protocol, watch

pytestmark = pytest.mark.django_db(transaction=True)


async def audience_of(comm, seat: str, online: bool, timeout: float = 5.0) -> dict:
    """The first ``audience`` notice on ``comm`` saying ``seat`` is (or is not) on the page."""
    deadline = time.monotonic() + timeout
    while True:
        message = await comm.receive_json_from(timeout=max(0.05, deadline - time.monotonic()))
        if message["type"] == "audience" and message["online"][seat] is online:
            return message


async def test_a_silent_socket_leaves_the_audience_and_is_closed(alice, bob, monkeypatch):
    monkeypatch.setattr(watch, "SILENT_AFTER_S", 1.5)
    game = await database_sync_to_async(actions.start_game)(black=(alice.player_id, "alice"),
                                                           white=(bob.player_id, "bob"))
    a, _ = await alice.connect(game.id)
    started = time.monotonic()  # alice says nothing from now on; bob keeps pinging
    b, _ = await bob.connect(game.id)
    pinger = asyncio.ensure_future(_ping_every(b, 0.3))
    try:
        notice = await audience_of(b, "B", False, timeout=6.0)
        gone_after = time.monotonic() - started
        assert notice["online"] == {"B": False, "W": True}
        assert 1.5 <= gone_after < 4.0, gone_after
        while (out := await a.receive_output(timeout=2))["type"] != "websocket.close":
            pass
        assert out == {"type": "websocket.close", "code": protocol.CLOSE_SILENT}
        assert (await presence.audience(game.id))["online"] == {"B": False, "W": True}
        # alice's page, back, connects again and is on the page once more.
        a2, snapshot = await alice.connect(game.id)
        assert snapshot["you"] == "B"
        await audience_of(b, "B", True)
    finally:
        pinger.cancel()
    for comm in (a2, b):
        await comm.disconnect()


async def _ping_every(comm, seconds: float) -> None:
    while True:
        await comm.send_json_to({"type": "ping"})
        await asyncio.sleep(seconds)
