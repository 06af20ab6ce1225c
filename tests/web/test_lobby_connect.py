"""A lobby socket whose page went away while it was connecting leaves nothing behind in Redis."""

from __future__ import annotations

import asyncio

import pytest
import redis
from channels.testing import WebsocketCommunicator
from django.conf import settings

from checkers_site.asgi import application
from game.lobby.fanout import fanout
from game.lobby.groups import player_group

pytestmark = pytest.mark.django_db(transaction=True)


class PageGone(Exception):
    """What the server's websocket raises when a frame is sent to a page that has sent its close
    frame (the closing handshake has begun, the connection is not yet gone)."""


def closing_transport(app):
    """``app`` behind a transport whose page closes right after the handshake: the first frame
    the socket sends after accepting raises :class:`PageGone`, as a quick reload makes it do."""
    async def wrapped(scope, receive, send):
        async def send_to_closing_page(message):
            if message["type"] == "websocket.send":
                raise PageGone
            await send(message)
        return await app(scope, receive, send_to_closing_page)
    return wrapped


def memberships(groups: list[str]) -> int:
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        return sum(client.zcard(f"{settings.REDIS_PREFIX}:group:{group}") for group in groups)
    finally:
        client.close()


async def test_a_lobby_socket_failing_while_it_connects_leaves_its_groups_and_the_fanout(alice):
    groups = [player_group(alice.player_id)]
    before = await asyncio.to_thread(memberships, groups)
    comm = WebsocketCommunicator(closing_transport(application), "/ws/lobby/", headers=alice.headers())
    connected, _ = await comm.connect(timeout=5)
    assert connected
    with pytest.raises(PageGone):
        await comm.wait(timeout=5)
    assert await asyncio.to_thread(memberships, groups) == before
    assert fanout().pages == set()      # nor is it sent the pools' news
