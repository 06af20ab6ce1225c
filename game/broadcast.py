"""Publishing game events to every socket of a game through the channel layer.

The channel layer delivers at most once; the database stays the truth.  A
client that misses an event sees a gap in ``v`` and asks for a snapshot.
"""

import json
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from redis.exceptions import RedisError

log = logging.getLogger(__name__)


def group_name(game_id: str) -> str:
    """The channel-layer group of a game: ``game.<id>``."""
    return f"game.{game_id}"


def encoded(event: dict) -> dict:
    """The group message ``game.event`` carrying ``event`` as JSON text, encoded once for all the
    game's sockets, and ``follow``: the ``clock`` and ``status`` of its state (for the sockets'
    clock timers), or None."""
    state = event.get("state")
    follow = {"clock": state.get("clock"), "status": state.get("status")} if state else None
    return {"type": "game.event", "text": json.dumps(event, separators=(",", ":")), "follow": follow}


async def publish(game_id: str, events: list[dict]) -> bool:
    """Send ``events`` (already committed) to every socket of the game, in order.

    Returns False when the channel layer (Redis) failed: the change is stored
    all the same, and every socket of the game catches up from the database
    with a snapshot when it reconnects or sees the next version.
    """
    layer = get_channel_layer()
    try:
        for event in events:
            await layer.group_send(group_name(game_id), encoded(event))
    except (RedisError, OSError) as exc:
        log.warning("could not publish to game %s: %s", game_id, exc)
        return False
    return True


def publish_sync(game_id: str, events: list[dict]) -> bool:
    """:func:`publish` for synchronous callers such as views."""
    if not events:
        return True
    return async_to_sync(publish)(game_id, events)
