"""Daphne's command line with the site's transport: ``python -m checkers_site.serve``.

It takes exactly Daphne's options (``python -m checkers_site.serve --help``) and runs Daphne, with
six differences:

- A websocket message larger than Daphne's limit (``--websocket-max-message-size``, 1 MiB by
  default): Daphne drops the TCP connection at once, so the client sees close code 1006 and no
  reason.  Here the socket is answered as the protocol documents for any frame that is too large
  (``{"type": "error", "code": "too_large", ...}``, docs/protocol.md "Errors") and then closed with
  code 1009 (message too big).  The rest of the message is discarded unread, never buffered.
  Frames over 2,048 bytes and up to the limit reach the socket, which answers ``too_large`` and
  stays open.
- An HTTP request whose request line is over :data:`MAX_LINE_BYTES` (16 KiB, Twisted's limit):
  Twisted closed the connection without a word.  Here it is answered ``414 URI Too Long`` (a
  header line over it, or all the header lines together: ``431 Request Header Fields Too Large``;
  a request line that is no request: ``400 Bad Request``), each with a one-line text body, and
  then the connection is closed.
- The access log (one line a request or websocket step, on standard output) shows each path once
  and at most :data:`checkers_site.handshakes.MAX_LOGGED` characters of it, control characters
  escaped: a client cannot write 16 KiB into the log with each request, or forge a line.  With
  ``LOG_FORMAT=json`` (production's default) each line is one JSON object as the site's own log
  lines are (:class:`SiteAccessLog`).
- Python's garbage collector is tuned once the site is loaded, before the first connection
  (:mod:`checkers_site.ops.collector`: what the start made is frozen, and collections are rarer).
- A game page's keep-alive ping is answered by the transport itself, once the socket's consumer
  asks for it, instead of going through the application (:mod:`checkers_site.keepalive`).
- A websocket frame is written to the socket at once when nothing is waiting before it
  (:func:`write_now`), not at the reactor's next turn.
- An HTTP response that has started and cannot be finished (the application raised while
  streaming it, or ``--http-timeout`` passed) is aborted: the connection is dropped, so a chunked
  body never gets its last chunk and the client sees it incomplete.  Daphne ended such a response
  as if it were whole, and its error page for an application that raised could not even be sent
  after the start (:class:`SiteWebRequest`).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, cast

from daphne.access import AccessLogGenerator
from daphne.cli import CommandLineInterface
from daphne.http_protocol import WebRequest
from daphne.server import Server
from daphne.ws_protocol import WebSocketProtocol
from django.conf import settings
from twisted.internet import reactor
from twisted.web.http import HTTPChannel, _GenericHTTPChannelProtocol

from checkers_site.handshakes import MAX_LOGGED
from checkers_site.keepalive import EXTENSION, PONG, Keepalive
from checkers_site.ops import logs

logger = logging.getLogger(__name__)

#: The close code after a message over the transport's limit (RFC 6455: message too big).
CLOSE_TOO_BIG = 1009


def too_large_error() -> bytes:
    """The ``too_large`` error as the sockets send it (``game.sockets.decode_frame``)."""
    from game.sockets import MAX_FRAME_BYTES

    return json.dumps({"type": "error", "code": "too_large",
                       "message": f"Frames are limited to {MAX_FRAME_BYTES} bytes."}).encode()


def write_now(transport: Any, data: bytes) -> None:
    """Write ``data`` to a TCP connection's socket now when nothing is waiting to be written before
    it, and hand Twisted only what the socket did not take.

    Twisted's ``write`` only buffers: it asks the reactor to watch the socket for writability
    (an ``epoll_ctl``), writes at the loop's next turn and stops watching (another): three steps
    and a turn of the loop for every websocket frame (docs/performance/03-third-round-pings.md).
    Order is kept: anything
    already buffered goes first, through Twisted.  Errors are left to Twisted, which meets them on its own write and
    closes the connection as it always does.  TLS connections (none behind nginx) and anything
    that is not a plain TCP connection go Twisted's way.
    """
    sock = getattr(transport, "socket", None)
    if (sock is not None and not getattr(transport, "TLS", True) and transport.connected
            and not transport.disconnecting and not transport._writeDisconnected
            and not transport._tempDataBuffer and len(transport.dataBuffer) == transport.offset):
        try:
            sent = sock.send(data)
        except OSError:   # would block, or the connection failed: Twisted's write finds out
            sent = 0
        if sent == len(data):
            return
        data = data[sent:]
    transport.write(data)


class SiteWebSocketProtocol(WebSocketProtocol):
    """Daphne's websocket protocol, answering a message over the size limit instead of dropping it,
    and the game page's keep-alive pings itself once the socket's consumer asks it to
    (:mod:`checkers_site.keepalive`)."""

    keepalive: Keepalive | None = None

    def sendData(self, data: bytes, sync: bool = False, chopsize: int | None = None) -> None:
        # autobahn's own, without its per-frame debug line (whose arguments it formats even when
        # debug is off), and written at once (:func:`write_now`) rather than at the reactor's
        # next turn.  Chopped, synchronous or queued data goes autobahn's way.
        if sync or chopsize or self.send_queue or self.logOctets:
            super().sendData(data, sync, chopsize)
            return
        write_now(self.transport, data)
        if self.state == WebSocketProtocol.STATE_OPEN:
            self.trafficStats.outgoingOctetsWireLevel += len(data)
        else:
            self.trafficStats.preopenOutgoingOctetsWireLevel += len(data)

    def onConnect(self, request: Any) -> Any:
        self.keepalive = Keepalive()
        return super().onConnect(request)

    def onMessage(self, payload: bytes, isBinary: bool) -> None:
        keepalive = self.keepalive
        if (not isBinary and keepalive is not None and not self.muted and self.state == self.STATE_OPEN
                and keepalive.take(payload)):
            self.last_ping = time.time()   # Daphne's own idle timeout, as any frame would
            self.sendMessage(PONG, isBinary=False)
            _count_keepalive()
            return
        super().onMessage(payload, isBinary)

    def _max_message_size_exceeded(self, msg_size: int, max_msg_size: int, reason: str) -> None:
        # autobahn's hook for a message (or frame) announced larger than maxMessagePayloadSize.
        if self.state == self.STATE_OPEN and not self.muted:
            self.sendMessage(too_large_error(), isBinary=False)
        self._fail_connection(CLOSE_TOO_BIG, "message too big")


#: The longest request line, and header line, an HTTP request may have (Twisted's ``MAX_LENGTH``);
#: the request line and the headers together may not be longer either (``totalHeadersSize``).
MAX_LINE_BYTES = HTTPChannel.MAX_LENGTH


def plain_answer(status: int, reason: str, text: str) -> bytes:
    """A whole HTTP/1.1 response with a one-line text body, closing the connection."""
    body = (text + "\n").encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


class SiteWebRequest(WebRequest):
    """Daphne's HTTP request, aborting a started response it cannot finish instead of ending it
    as if it were whole (see the module docstring)."""

    def handle_exception(self, exception: Exception) -> None:
        if self._response_started:
            self.abort("the application raised while sending its response")
        else:
            super().handle_exception(exception)

    def check_timeouts(self) -> None:
        timeout = self.server.http_timeout
        if timeout and self._response_started and self.duration() > timeout:
            self.abort(f"the response was not finished within --http-timeout ({timeout} s)")
        else:
            super().check_timeouts()

    def abort(self, why: str) -> None:
        """Drop the connection at once (no last chunk), once."""
        transport = getattr(self.channel, "transport", None)
        if transport is not None and not getattr(self, "_site_aborted", False):
            self._site_aborted = True
            logger.warning("HTTP response for %s aborted: %s", self.client_addr, why)
            transport.abortConnection()


class SiteHTTPChannel(HTTPChannel):
    """Twisted's HTTP connection, answering a request it cannot read instead of dropping it, its
    requests :class:`SiteWebRequest` (Daphne's factory sets its own class, which is extended here)."""

    _site_answered = False

    @property  # type: ignore[override]
    def requestFactory(self) -> type:
        return SiteWebRequest

    @requestFactory.setter
    def requestFactory(self, value: type) -> None:
        pass   # Daphne's factory sets WebRequest, of which SiteWebRequest is the site's own

    def _in_request_line(self) -> bool:
        return bool(getattr(self, "_HTTPChannel__first_line", 1))

    def lineLengthExceeded(self, line: bytes) -> None:
        # A line (the request line, or a header) longer than MAX_LENGTH: Twisted just closes.
        if self._in_request_line():
            self._answer_and_close(414, "URI Too Long",
                                   f"The request line is longer than {MAX_LINE_BYTES} bytes.")
        else:
            self._answer_and_close(431, "Request Header Fields Too Large",
                                   f"A header line is longer than {MAX_LINE_BYTES} bytes.")

    def _respondToBadRequestAndDisconnect(self) -> None:
        # Twisted's answer to what it cannot parse, or to headers over totalHeadersSize: a bare 400.
        if self._receivedHeaderSize > self.totalHeadersSize:
            if self._in_request_line():
                self._answer_and_close(414, "URI Too Long",
                                       f"The request line is longer than {MAX_LINE_BYTES} bytes.")
            else:
                self._answer_and_close(431, "Request Header Fields Too Large",
                                       f"The request's headers are longer than {self.totalHeadersSize} bytes.")
            return
        self._answer_and_close(400, "Bad Request", "The request could not be read.")

    def _answer_and_close(self, status: int, reason: str, text: str) -> None:
        transport: Any = self.transport
        if transport is None or self._site_answered:
            return
        self._site_answered = True
        # Nothing more is read: the rest of the request is discarded, never buffered.
        self.dataReceived = self.lineReceived = self._discard  # type: ignore[method-assign]
        transport.write(plain_answer(status, reason, text))
        self.loseConnection()

    def _discard(self, data: bytes) -> None:
        """What the connection reads once it has answered: nothing is kept."""


def site_http_channel() -> _GenericHTTPChannelProtocol:
    """The protocol the HTTP factory builds for each connection (Twisted's, around
    :class:`SiteHTTPChannel`)."""
    return _GenericHTTPChannelProtocol(SiteHTTPChannel())


#: Characters of a path the access log shows %-escaped: its line is space-separated and quoted.
_ESCAPED = {" ": "%20", '"': "%22", "\\": "%5C"}


def logged_path(path: Any) -> str:
    """A path as the access log shows it: spaces and quotes %-escaped, control characters as
    Python escapes (a line can be neither forged nor split), at most :data:`MAX_LOGGED` characters,
    then ``…``.

    >>> logged_path('/a b"\\n'), logged_path("/" + "x" * 300)[-3:]
    ('/a%20b%22\\\\n', 'xx…')
    """
    text = str(path)
    shown = "".join(_ESCAPED.get(c) or (c if c.isprintable() else c.encode("unicode_escape").decode())
                    for c in text[:MAX_LOGGED])
    return shown + ("…" if len(text) > MAX_LOGGED else "")


#: The message of each access line in the JSON format, by Daphne's (protocol, action).
ACCESS_MESSAGES = {("http", "complete"): "request served", ("websocket", "connecting"): "websocket connecting",
                   ("websocket", "connected"): "websocket connected", ("websocket", "rejected"): "websocket rejected",
                   ("websocket", "disconnected"): "websocket disconnected"}


class SiteAccessLog(AccessLogGenerator):
    """Daphne's access log on its stream (standard output, or ``--access-log``).  As text, Daphne's
    line with each path through :func:`logged_path`.  With ``json_lines``, one object a line in the
    site's JSON format (:class:`checkers_site.ops.logs.JsonFormatter`, logger ``checkers_site.access``,
    level ``INFO``): the message (:data:`ACCESS_MESSAGES`), ``client`` (``address:port``), ``path``
    (cut as the site's lines cut it) and, for a request, ``method``, ``status``, ``bytes`` and
    ``duration_ms``."""

    def __init__(self, stream: Any, json_lines: bool = False) -> None:
        super().__init__(stream)
        self.formatter = logs.JsonFormatter() if json_lines else None

    def __call__(self, protocol: str, action: str, details: dict[str, Any]) -> None:
        if self.formatter is None:
            if "path" in details:
                details = {**details, "path": logged_path(details["path"])}
            super().__call__(protocol, action, details)
            return
        message = ACCESS_MESSAGES.get((protocol, action))
        if message is None:
            return
        fields = {"client": details.get("client"), "path": str(details.get("path", ""))}
        if protocol == "http":
            fields.update(method=details.get("method"), status=details.get("status"), bytes=details.get("size"),
                          duration_ms=round(float(details.get("time_taken") or 0) * 1000, 1))
        self.stream.write(self.formatter.format(logs.access_record(message, **fields)) + "\n")


_keepalives: Any = None


def _count_keepalive() -> None:
    """Count one ping the transport answered (``checkers_keepalives_answered_total``)."""
    global _keepalives
    if _keepalives is None:
        from checkers_site.ops import metrics
        _keepalives = metrics.keepalives_answered
    _keepalives.inc()


class SiteServer(Server):
    """Daphne's server with :class:`SiteWebSocketProtocol` and a closing handshake, not a dropped
    connection, when a websocket fails; :class:`SiteHTTPChannel` for HTTP; :class:`SiteAccessLog`;
    and the garbage collector tuned once the site is loaded (:mod:`checkers_site.ops.collector`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        logger = kwargs.get("action_logger")
        if logger is not None and type(logger) is AccessLogGenerator:
            # The application, loaded before the server is made, has set the site's settings up.
            kwargs["action_logger"] = SiteAccessLog(cast(Any, logger).stream,
                                                    json_lines=getattr(settings, "LOG_FORMAT", "text") == "json")
        super().__init__(*args, **kwargs)

    def run(self) -> None:
        reactor.callWhenRunning(self._use_site_protocol)
        super().run()

    def create_application(self, protocol: Any, scope: dict[str, Any]) -> Any:
        # A websocket's consumer finds the transport's keep-alive in its scope (checkers_site.keepalive).
        keepalive = getattr(protocol, "keepalive", None)
        if keepalive is not None:
            scope = {**scope, "extensions": {**(scope.get("extensions") or {}), EXTENSION: keepalive}}
        return super().create_application(protocol, scope)

    def _use_site_protocol(self) -> None:
        # Run by the reactor before it accepts any connection; Server.run() has built the factories.
        self.ws_factory.protocol = SiteWebSocketProtocol
        self.ws_factory.setProtocolOptions(failByDrop=False)
        self.http_factory.protocol = site_http_channel
        # The site is loaded: what it made is frozen, and the collector runs less often.
        from checkers_site.ops import collector
        collector.tune(settings.GC_THRESHOLDS, settings.GC_FREEZE)


class SiteCommandLine(CommandLineInterface):
    server_class = SiteServer


def main(argv: list[str] | None = None) -> Any:
    return SiteCommandLine().run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
