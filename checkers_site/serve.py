"""Daphne's command line with the site's websocket transport: ``python -m checkers_site.serve``.

It takes exactly Daphne's options (``python -m checkers_site.serve --help``) and runs Daphne; the
one difference is what happens to a websocket message larger than Daphne's limit
(``--websocket-max-message-size``, 1 MiB by default).  Daphne drops the TCP connection at once, so
the client sees close code 1006 and no reason.  Here the socket is answered as the protocol
documents for any frame that is too large (``{"type": "error", "code": "too_large", ...}``,
docs/protocol.md "Errors") and then closed with code 1009 (message too big).  The rest of the
message is discarded unread, never buffered.  Frames over 2,048 bytes and up to the limit reach the
socket, which answers ``too_large`` and stays open.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from daphne.cli import CommandLineInterface
from daphne.server import Server
from daphne.ws_protocol import WebSocketProtocol
from twisted.internet import reactor

#: The close code after a message over the transport's limit (RFC 6455: message too big).
CLOSE_TOO_BIG = 1009


def too_large_error() -> bytes:
    """The ``too_large`` error as the sockets send it (``game.sockets.decode_frame``)."""
    from game.sockets import MAX_FRAME_BYTES

    return json.dumps({"type": "error", "code": "too_large",
                       "message": f"Frames are limited to {MAX_FRAME_BYTES} bytes."}).encode()


class SiteWebSocketProtocol(WebSocketProtocol):
    """Daphne's websocket protocol, answering a message over the size limit instead of dropping it."""

    def _max_message_size_exceeded(self, msg_size: int, max_msg_size: int, reason: str) -> None:
        # autobahn's hook for a message (or frame) announced larger than maxMessagePayloadSize.
        if self.state == self.STATE_OPEN and not self.muted:
            self.sendMessage(too_large_error(), isBinary=False)
        self._fail_connection(CLOSE_TOO_BIG, "message too big")


class SiteServer(Server):
    """Daphne's server with :class:`SiteWebSocketProtocol` and a closing handshake, not a dropped
    connection, when a websocket fails."""

    def run(self) -> None:
        reactor.callWhenRunning(self._use_site_protocol)
        super().run()

    def _use_site_protocol(self) -> None:
        # Run by the reactor before it accepts any connection; Server.run() has built the factory.
        self.ws_factory.protocol = SiteWebSocketProtocol
        self.ws_factory.setProtocolOptions(failByDrop=False)


class SiteCommandLine(CommandLineInterface):
    server_class = SiteServer


def main(argv: list[str] | None = None) -> Any:
    return SiteCommandLine().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
