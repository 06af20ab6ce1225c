"""Websocket origin checking: only the site's own pages may open its sockets.

Channels' ``AllowedHostsOriginValidator`` compares the Origin's host name with
``ALLOWED_HOSTS`` and ignores its scheme and port, so a page served from any
port of an allowed host could open a socket with a visitor's cookies.  This
check wants the whole origin: scheme, host and port.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

from checkers_site.handshakes import shown


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """True when ``origin`` (the Origin header) is this site's own or a trusted one.

    Own: the same ``host:port`` as the request's Host header, on a host of
    ``ALLOWED_HOSTS``, with scheme ``https`` when the site runs behind HTTPS
    (``DJANGO_SECURE``), else ``http`` or ``https``.  Trusted: listed exactly
    in ``CSRF_TRUSTED_ORIGINS``.  A missing Origin is refused.
    """
    if not origin or origin == "null":
        return False
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    parts = urlsplit(origin)
    schemes = ("https",) if getattr(settings, "SECURE_SSL_REDIRECT", False) else ("http", "https")
    if parts.scheme not in schemes or not host or parts.netloc.lower() != host.lower():
        return False
    domain, _ = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


class _Denier(WebsocketDenier):
    """Channels' ``WebsocketDenier`` without a channel layer: a refused handshake opens no channel in Redis."""

    channel_layer_alias = None  # type: ignore[assignment]  # channels reads None as "no layer"; its stubs say str


class SameOriginValidator:
    """ASGI middleware: refuses a websocket handshake whose Origin is not :func:`origin_allowed`."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket":
            headers = dict(scope.get("headers") or [])
            origin = headers.get(b"origin", b"").decode("latin1") or None
            host = headers.get(b"host", b"").decode("latin1") or None
            if not origin_allowed(origin, host):
                reason = f"origin {shown(origin or '')} not allowed for host {shown(host or '')}"

                async def send_refusal(message):
                    # The reason is for checkers_site.handshakes' log line; Daphne ignores it.
                    if message["type"] == "websocket.close":
                        message = {**message, "reason": reason}
                    await send(message)

                return await _Denier()(scope, receive, send_refusal)
        return await self.application(scope, receive, send)
