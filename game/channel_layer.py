"""channels-redis' pub/sub channel layer, made to drop its sockets when Redis fails.

With the pub/sub layer a group message is one ``PUBLISH``, read once by each
process that has members of the group; the default (lists and Lua) layer stores
a copy per socket and costs a Daphne process about 2 ms more CPU per move
(``docs/performance.md``, "Live load").  But the pub/sub layer rides out a
Redis failure by itself: it reconnects and subscribes again without telling
anyone, so the events published meanwhile are lost and no page knows it must
resynchronise.  Here, each failure of a process's subscription puts a
``layer.lost`` message in the queue of every channel of that process; the
game socket closes on it, and the page reconnects and takes a snapshot, as it
does when the default layer's failure ends the socket.

``CHANNEL_LAYER=pubsub`` (``checkers_site/settings.py``) selects this layer.
"""

from __future__ import annotations

import asyncio
import logging

from channels_redis import pubsub
from channels_redis.utils import _wrap_close

log = logging.getLogger(__name__)

#: The message every channel of a process gets when the process's subscription failed.
LOST = {"type": "layer.lost"}


class _Shard(pubsub.RedisSingleShardConnection):
    async def _do_receiving(self):
        while True:
            try:
                if self._pubsub and self._pubsub.subscribed:
                    message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=0.1)
                    self._receive_message(message)
                else:
                    await asyncio.sleep(0.1)
            except (asyncio.CancelledError, asyncio.TimeoutError, GeneratorExit):
                raise
            except Exception as exc:  # the connection to Redis failed: messages may have been lost
                log.warning("channel layer subscription lost: %s", exc)
                lost = self.channel_layer.channel_layer.serialize(LOST)
                for queue in self.channel_layer.channels.values():
                    queue.put_nowait(lost)
                await asyncio.sleep(1)


class _LoopLayer(pubsub.RedisPubSubLoopLayer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._shards = [_Shard(shard.host, self) for shard in self._shards]


class PubSubChannelLayer(pubsub.RedisPubSubChannelLayer):
    """:class:`channels_redis.pubsub.RedisPubSubChannelLayer` whose channels hear of a lost subscription."""

    def _get_layer(self):
        loop = asyncio.get_running_loop()
        try:
            return self._layers[loop]
        except KeyError:
            layer = self._layers[loop] = _LoopLayer(*self._args, **self._kwargs, channel_layer=self)
            _wrap_close(self, loop)
            return layer
