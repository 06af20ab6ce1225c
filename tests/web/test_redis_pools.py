"""The site's blocking Redis pools (:mod:`checkers_site.redis_pools`) give a connection back
whatever happens to the task that used it: a task cancelled while its command's connection waits
to be released (a socket's task that Daphne kills at close, on a loaded process) must not keep it
out of the pool for good, or the pool runs dry and every later command fails with
"No connection available" (real Redis)."""

from __future__ import annotations

import asyncio

import redis.asyncio
from django.conf import settings

from checkers_site.redis_pools import BlockingPool


async def cancelled_while_releasing(pool: redis.asyncio.BlockingConnectionPool) -> int:
    """Run one PING on ``pool`` and cancel its task while the pool's lock is held by someone else
    at the moment the command gives its connection back; return the connections still in use."""
    client = redis.asyncio.Redis(connection_pool=pool)
    try:
        await client.ping()  # one connection made and back in the pool
        task = asyncio.get_running_loop().create_task(client.ping())
        while not pool._in_use_connections:  # the command has its connection
            await asyncio.sleep(0)
        async with pool._condition:  # another task holds the pool's lock meanwhile
            await asyncio.sleep(0.2)  # the reply has come: the task waits to release
            task.cancel()
            await asyncio.sleep(0)
        for _ in range(50):
            await asyncio.sleep(0.01)
        assert task.done()
        return len(pool._in_use_connections)
    finally:
        await client.aclose()


async def test_a_command_cancelled_while_its_connection_is_released_gives_it_back():
    pool = BlockingPool.from_url(settings.REDIS_URL, max_connections=2, timeout=1)
    assert await cancelled_while_releasing(pool) == 0


async def test_redis_pys_own_blocking_pool_keeps_it():
    """The defect the site's pool avoids, shown on redis-py's pool (if a redis-py release fixes
    it, this test says so and the site's pool can go)."""
    pool = redis.asyncio.BlockingConnectionPool.from_url(settings.REDIS_URL, max_connections=2, timeout=1)
    assert await cancelled_while_releasing(pool) == 1
