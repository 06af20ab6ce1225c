"""Publishing game events to every socket of a game through the channel layer.

The channel layer delivers at most once; the database stays the truth.  A
client that misses an event sees a gap in ``v`` and asks for a snapshot.
"""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer


def group_name(game_id: str) -> str:
    """The channel-layer group of a game: ``game.<id>``."""
    return f"game.{game_id}"


async def publish(game_id: str, events: list[dict]) -> None:
    """Send ``events`` (already committed) to every socket of the game, in order."""
    layer = get_channel_layer()
    for event in events:
        await layer.group_send(group_name(game_id), {"type": "game.event", "event": event})


def publish_sync(game_id: str, events: list[dict]) -> None:
    """:func:`publish` for synchronous callers such as views."""
    if events:
        async_to_sync(publish)(game_id, events)
