"""The channel layer of the lobby: channels-redis' core layer with a connection pool that waits.

channels-redis gives each Redis host a plain redis-py pool, which fails at once ("Too many
connections") when every connection is in use: a burst of lobby sockets connecting together
(each joining its groups) made joins, pool-count pushes and even the news of a pairing fail.
This layer's pools make a caller wait up to :data:`POOL_TIMEOUT_S` for a free connection
instead, as the game's own Redis clients do.

Every socket of a process receives through one blocking pop on the process's queue, made by
whichever socket's task holds the layer's receive lock.  When that socket closed, channels-redis
cancelled its pop while Redis had already handed it a message for *another* socket: the message
was gone (a burst of home pages closing lost the news of a pairing, and a player waited forever).
This layer lets the pop finish whatever happens to the task that started it (at most the pop's
5 s), so what it got stays in the queue's backup, which the next pop moves back first: the
message reaches the socket it was meant for.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels_redis.core import RedisChannelLayer

from checkers_site.redis_pools import BlockingPool

#: Seconds a channel-layer command waits for a free connection before failing.
POOL_TIMEOUT_S = 10


class WaitingRedisChannelLayer(RedisChannelLayer):
    """:class:`channels_redis.core.RedisChannelLayer` whose pools wait for a free connection
    (hosts given by ``address``; other forms of host are used as channels-redis uses them)."""

    def create_pool(self, index: int) -> Any:
        host = dict(self.hosts[index])
        if "address" not in host:
            return super().create_pool(index)
        address = host.pop("address")
        return BlockingPool.from_url(address, timeout=POOL_TIMEOUT_S, **host)

    async def _brpop_with_clean(self, index: int, channel: str, timeout: float) -> Any:
        """One blocking pop of the process queue ``channel`` (at most ``timeout`` s), as channels-redis
        makes it: the message popped (copied to the queue's backup first), or None.

        When the caller is cancelled meanwhile (its socket closed), the pop still runs to its end:
        a message Redis hands it stays in the backup queue, which the next receive moves back to
        the queue before it pops, so the message reaches its socket; then the cancellation goes on.
        """
        popping = asyncio.ensure_future(super()._brpop_with_clean(index, channel, timeout))
        try:
            return await asyncio.shield(popping)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await popping
            raise
