"""One log line for every refused websocket handshake, with its reason.

Daphne logs only ``WSREJECT <path>`` for a handshake refused before accept, and
nothing for a socket accepted and closed at once with one of the site's
refusal codes.  :class:`HandshakeLog` watches what the application sends: a
``websocket.close`` before ``websocket.accept`` (the origin check), or a close
with a code of :data:`REFUSALS` (an unknown game or path, no session, a
limit, unavailable).  The line names the path, the client address, the code
and the reason (the close message's ``reason`` when the refuser gave one, else
the code's meaning); never a header, cookie or session key.  The ``reason`` is
taken off the close message: it is for the log, not the client.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("checkers_site.handshakes")

#: The close codes that refuse a socket right after its handshake, and what each means.
REFUSALS = {
    4401: "no session",
    4404: "no such game or path",
    4429: "over a limit",
    4503: "unavailable",
}

#: Longest text of the request (path, a reason quoting the origin) put in a log line.
MAX_LOGGED = 200


def shown(text: Any) -> str:
    """``text`` as it goes into a log line: quoted (no control characters reach the log), cut short."""
    text = str(text)
    return repr(text if len(text) <= MAX_LOGGED else text[:MAX_LOGGED] + "…")


def refusal_reason(message: dict[str, Any], accepted: bool) -> str | None:
    """Why the ``websocket.close`` ``message`` refuses the socket, or None when it is no refusal
    (an ordinary close of an accepted socket)."""
    code = message.get("code")
    meaning = REFUSALS.get(code) if isinstance(code, int) else None
    if accepted and meaning is None:
        return None
    return message.get("reason") or meaning or "refused"


#: The scope key under which :class:`HandshakeLog` leaves the server's own ``send``: a consumer
#: sends its text frames (``websocket.send``) there, past the middlewares in between, which
#: look only at other messages (the sessions' middleware at HTTP responses, this one at
#: accepts and closes) but cost their checks on every frame.
FRAME_SEND = "checkers.frame_send"


async def send_frame(consumer: Any, text: str) -> None:
    """Write ``text``, a frame already encoded (JSON text), as it is on the websocket of ``consumer``
    (a Channels consumer): straight to the server (:data:`FRAME_SEND`) past the middlewares' checks
    of every message, or through them with Channels' ``send(text_data=...)`` where the scope has no
    such ``send`` (a consumer run without :class:`HandshakeLog`, as in the tests' communicators).
    A frame sent once to many sockets is encoded once, not once a socket.  Raises what the
    server's ``send`` raises (a socket closing)."""
    frame_send = consumer.scope.get(FRAME_SEND)
    if frame_send is None:
        await consumer.send(text_data=text)
    else:
        await frame_send({"type": "websocket.send", "text": text})


class HandshakeLog:
    """ASGI middleware around the websocket application: logs each refusal (see the module
    docstring), and gives the application the server's ``send`` for its frames (:data:`FRAME_SEND`)."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await self.application(scope, receive, send)
        accepted = False
        logged = False

        async def watching(message):
            nonlocal accepted, logged
            if message["type"] == "websocket.accept":
                accepted = True
            elif message["type"] == "websocket.close":
                reason = refusal_reason(message, accepted)
                if reason is not None and not logged:
                    logged = True
                    client = scope.get("client")
                    path, address = shown(scope.get("path", "")), client[0] if client else "-"
                    code = message.get("code", 403) if accepted else 403
                    # The same values as fields of their own, for the JSON logs (checkers_site/ops/logs.py).
                    log.warning("websocket refused: path=%s client=%s code=%s reason=%s",
                                path, address, code, reason,
                                extra={"event": "websocket_refused", "client": address,
                                       "path": str(scope.get("path", ""))[:MAX_LOGGED],
                                       "close_code": code, "reason": reason})
                # The reason is for the log, not the client: the close goes out as it always did.
                message = {k: v for k, v in message.items() if k != "reason"}
            await send(message)

        return await self.application(dict(scope, **{FRAME_SEND: send}), receive, watching)
