"""The lobby's channel layer on a real Redis: a message reaches its socket even when the socket whose
task was receiving for the whole process closes at that moment."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
import redis
from django.conf import settings

from checkers_site.channel_layer import WaitingRedisChannelLayer

pytestmark = pytest.mark.asyncio


def layer() -> WaitingRedisChannelLayer:
    """A layer configured as the site's (its Redis, its connection options) with a key prefix of
    its own."""
    config = {**settings.CHANNEL_LAYERS["default"]["CONFIG"], "prefix": f"test-layer-{uuid.uuid4().hex[:8]}"}
    return WaitingRedisChannelLayer(**config)


async def wait_until_popping(conn: redis.Redis, timeout: float = 5) -> None:
    """Until some client of this Redis is blocked in a pop (the layer's receive)."""
    deadline = time.monotonic() + timeout
    while conn.info("clients")["blocked_clients"] == 0:
        assert time.monotonic() < deadline, "the layer never started its blocking pop"
        await asyncio.sleep(0.02)


@pytest.mark.alone
async def test_a_message_popped_as_the_receiving_socket_closes_reaches_its_socket():
    """Socket A's task holds the process's receive (a blocking pop); a message for socket B arrives
    and Redis hands it to that pop; A's task is cancelled (its page closed) before it reads the
    answer.  B still gets the message."""
    channels = layer()
    sync = redis.Redis.from_url(settings.REDIS_URL)
    try:
        a, b = await channels.new_channel(), await channels.new_channel()
        receiving_a = asyncio.ensure_future(channels.receive(a))
        await wait_until_popping(sync)
        receiving_b = asyncio.ensure_future(channels.receive(b))
        await asyncio.sleep(0.05)  # B waits for the receive lock A holds
        # The message for B, written as channels-redis writes it, from outside this event loop: the
        # loop does not run until A is cancelled, so A's task never reads Redis's answer.
        message = {"type": "lobby.paired", "game": "abcdefghij", "__asgi_channel__": b}
        sync.zadd(channels.prefix + channels.non_local_name(b), {channels.serialize(message): time.time()})
        time.sleep(0.1)  # Redis has handed the message to A's blocking pop
        assert sync.zcard(channels.prefix + channels.non_local_name(b)) == 0
        receiving_a.cancel()
        got = await asyncio.wait_for(receiving_b, timeout=10)
        assert got == {"type": "lobby.paired", "game": "abcdefghij"}
        assert receiving_a.cancelled()
    finally:
        await channels.flush()
        await channels.close_pools()
        sync.close()


async def test_messages_still_flow_after_receivers_come_and_go():
    """Many sockets receive, some are cancelled mid-pop; every message sent to a live socket arrives
    once."""
    channels = layer()
    try:
        live = [await channels.new_channel() for _ in range(5)]
        for _ in range(10):
            gone = [asyncio.ensure_future(channels.receive(await channels.new_channel())) for _ in range(5)]
            await asyncio.sleep(0.02)
            for task in gone:
                task.cancel()
        receivers = [asyncio.ensure_future(channels.receive(name)) for name in live]
        for i, name in enumerate(live):
            await channels.send(name, {"type": "n", "i": i})
        got = await asyncio.wait_for(asyncio.gather(*receivers), timeout=10)
        assert got == [{"type": "n", "i": i} for i in range(5)]
    finally:
        await channels.flush()
        await channels.close_pools()
