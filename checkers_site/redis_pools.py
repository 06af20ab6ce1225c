"""The blocking Redis pool every asynchronous Redis client of the site uses.

redis-py's :class:`redis.asyncio.BlockingConnectionPool` takes its lock before it puts a used
connection back; a task cancelled while it waits for that lock (a socket's task that Daphne
cancels when the socket closes, on a busy process) never gives the connection back, and after
enough of them the pool is dry for good: every command fails with "No connection available"
(seen in a soak: a process's publishing connections all checked out and idle in Redis for
minutes, its moves reaching no other process). :class:`BlockingPool` finishes the release
whatever happens to the task that asked for it.
"""

from __future__ import annotations

import asyncio

import redis.asyncio
from redis.asyncio.connection import AbstractConnection


class BlockingPool(redis.asyncio.BlockingConnectionPool):
    """A :class:`redis.asyncio.BlockingConnectionPool` (callers wait up to ``timeout`` s for a free
    connection, then get ``ConnectionError``) whose :meth:`release` always completes."""

    async def release(self, connection: AbstractConnection) -> None:
        """Give ``connection`` back to the pool; if the calling task is cancelled meanwhile, the
        release still completes (then the cancellation goes on)."""
        await asyncio.shield(asyncio.ensure_future(super().release(connection)))
