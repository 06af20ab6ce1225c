"""The channel layer of the lobby: channels-redis' core layer with a connection pool that waits.

channels-redis gives each Redis host a plain redis-py pool, which fails at once ("Too many
connections") when every connection is in use: a burst of lobby sockets connecting together
(each joining its groups) made joins, pool-count pushes and even the news of a pairing fail.
This layer's pools make a caller wait up to :data:`POOL_TIMEOUT_S` for a free connection
instead, as the game's own Redis clients do.
"""

from __future__ import annotations

from typing import Any

import redis.asyncio
from channels_redis.core import RedisChannelLayer

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
        return redis.asyncio.BlockingConnectionPool.from_url(address, timeout=POOL_TIMEOUT_S, **host)
