"""Publishing game events to every socket of a game (:mod:`game.fanout`).

Delivery is at most once; the database stays the truth.  A client that
misses an event sees a gap in ``v`` and asks for a snapshot, and a process
whose subscription failed resynchronises its sockets itself.
"""

import logging

from game import fanout

log = logging.getLogger(__name__)


async def publish(game_id: str, events: list[dict]) -> bool:
    """Send ``events`` (already committed) to every socket of the game, in order.

    Returns False when Redis failed: the change is stored all the same, and
    every socket of the game catches up from the database with a snapshot
    when it reconnects or sees the next version.
    """
    if not events:
        return True
    try:
        await fanout.hub().publish(game_id, [fanout.encode(event) for event in events])
    except fanout.Unavailable as exc:
        log.warning("could not publish to game %s: %s", game_id, exc)
        return False
    return True


def publish_sync(game_id: str, events: list[dict]) -> bool:
    """:func:`publish` for synchronous callers such as views."""
    if not events:
        return True
    try:
        fanout.publish_sync(game_id, [fanout.encode(event) for event in events])
    except fanout.Unavailable as exc:
        log.warning("could not publish to game %s: %s", game_id, exc)
        return False
    return True
