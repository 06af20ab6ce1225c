"""The client address of the socket or request being served, for limits counted per address.

:class:`ClientAddress`, an ASGI middleware around the websocket application
(``checkers_site/asgi.py``), puts the connection's address (``scope["client"]``:
behind nginx, Daphne's ``--proxy-headers`` takes it from ``X-Forwarded-For``) in a
context variable for the connection's whole task.  Each connection runs in an
asyncio task of its own, and the threads it starts (``sync_to_async``) get a copy
of its context, so :func:`current` answers for the connection being served and
never for another.  The game chat's per-address rate reads it
(:mod:`game.round.chat`).
"""

from __future__ import annotations

import contextvars
import ipaddress
from typing import Any

#: Bits of an IPv6 address that name one client: a home or a phone gets a whole /64.
IPV6_CLIENT_PREFIX = 64

_address: contextvars.ContextVar[str | None] = contextvars.ContextVar("client_address", default=None)


def current() -> str | None:
    """The client address of the connection being served (text), or None outside one or when
    the server did not say."""
    return _address.get()


def counted(address: str | None, ipv6_prefix: int = IPV6_CLIENT_PREFIX) -> str | None:
    """``address`` as a limit counts it: an IPv4 address as it is, an IPv6 address as its network
    of ``ipv6_prefix`` bits (one client may hold a whole /64 and change addresses within it at
    will); text that is no address as it is; None stays None.

    >>> counted("203.0.113.9"), counted("2001:db8:1:2:aaaa::1"), counted(None)
    ('203.0.113.9', '2001:db8:1:2::', None)
    """
    if not address:
        return None
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if parsed.version == 6:
        return str(ipaddress.IPv6Network(f"{parsed}/{ipv6_prefix}", strict=False).network_address)
    return address


class ClientAddress:
    """ASGI middleware: :func:`current` is the connection's ``scope["client"]`` address for the
    whole of the application's call."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        client = scope.get("client")
        token = _address.set(str(client[0]) if client else None)
        try:
            return await self.application(scope, receive, send)
        finally:
            _address.reset(token)
