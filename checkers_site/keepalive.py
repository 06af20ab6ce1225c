"""A game page's keep-alive, answered by the websocket transport instead of the application.

The page sends ``{"type": "ping"}`` every 3 s so that a network gone without a
close frame is noticed within seconds on both sides (docs/protocol.md).  With
thousands of open sockets that is more frames than moves, and each one would go
through Daphne's application queue, channels' consumer, the socket's rate
limits, the message parser and back out (docs/performance/03-third-round-pings.md).

So the site's transport (``checkers_site.serve``) answers a ping itself, with
the same ``{"type": "pong"}``, once the socket's consumer has asked it to
(:attr:`Keepalive.answering`: the game socket does, after it is accepted), and
notes when it was heard (:attr:`Keepalive.heard`), which the consumer reads to
tell a silent page from a pinging one.  At most one ping a second is answered
this way; more go to the consumer as before, which counts them against the
socket's rate limits, so a flood of pings costs what any flood costs.  Without
the site's transport (tests' in-memory sockets, ``runserver``) the consumer
answers pings itself, as it always did.

The consumer finds its :class:`Keepalive` in the ASGI scope, under
``scope["extensions"][EXTENSION]``.
"""

from __future__ import annotations

import json
import time
from typing import Any

#: The key of the socket's :class:`Keepalive` in ``scope["extensions"]``.
EXTENSION = "checkers.keepalive"
#: The answer the transport sends, as the consumer would send it.
PONG = b'{"type":"pong"}'
#: A ping's frame is never longer than this (``{"type": "ping"}`` with spaces is 16 bytes).
PING_MAX_BYTES = 32
#: Seconds between two pings the transport answers on one socket; more go to the consumer.
ANSWER_EVERY_S = 1.0


def is_ping(payload: bytes) -> bool:
    """Whether a text frame's ``payload`` is exactly the page's keep-alive, ``{"type": "ping"}``
    (any JSON spacing; no other field).

    >>> is_ping(b'{"type":"ping"}'), is_ping(b'{"type": "ping"}'), is_ping(b'{"type":"ping","v":1}')
    (True, True, False)
    """
    if len(payload) > PING_MAX_BYTES or b"ping" not in payload:
        return False
    try:
        message = json.loads(payload)
    except ValueError:
        return False
    return message == {"type": "ping"}


class Keepalive:
    """One socket's keep-alive state, shared by its transport and its consumer.

    ``answering``: the consumer wants the transport to answer pings.
    ``heard``: when the transport last answered one (``time.monotonic()``; 0: never).
    """

    __slots__ = ("answering", "heard")

    def __init__(self) -> None:
        self.answering = False
        self.heard = 0.0

    def take(self, payload: bytes, now: float | None = None) -> bool:
        """Whether the transport answers this text frame itself: a ping, the consumer asked for
        it, and none was answered in the last :data:`ANSWER_EVERY_S`.  Notes it heard."""
        if not self.answering or not is_ping(payload):
            return False
        now = time.monotonic() if now is None else now
        if now - self.heard < ANSWER_EVERY_S:
            return False
        self.heard = now
        return True


def of_scope(scope: Any) -> Keepalive | None:
    """The socket's :class:`Keepalive`, or None when its transport has none."""
    found = (scope.get("extensions") or {}).get(EXTENSION)
    return found if isinstance(found, Keepalive) else None
