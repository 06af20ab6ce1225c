"""Game events to every socket of a game: one Redis ``PUBLISH`` per event, fanned out in memory.

``transport``: how a hub reaches Redis (one server, or a cluster's sharded pub/sub); ``line``:
one pub/sub connection and its confirmations; ``hubs``: each process's games (their Rounds) and
subscriptions; ``publishing``: committed events out, with one republish policy.
"""

from game.round.fanout.hubs import Hub, hub
from game.round.fanout.publishing import Fallback, publish, publish_sync
from game.round.fanout.transport import LINK_CHANNEL, PUBLISH_CLIENT_NAME, Unavailable, channel

__all__ = ["LINK_CHANNEL", "PUBLISH_CLIENT_NAME", "Fallback", "Hub", "Unavailable", "channel", "hub", "publish",
           "publish_sync"]
