"""Who may reach the admin: ``ADMIN_ALLOWED_ADDRESSES`` (addresses or networks), when set.

The admin's log-in is the site's own (``checkers_site/urls.py``: allauth's
``secure_admin_login``), so it is counted by the same limits as every log-in
(``docs/accounts.md``).  In production the admin may also be kept from everyone
but the operators' addresses: any other client gets the site's 404 for every
``/admin/`` path, as if there were no admin.  The address is ``REMOTE_ADDR``,
which Daphne takes from nginx's ``X-Forwarded-For`` (``--proxy-headers``).
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponseNotFound
from django.utils.decorators import sync_and_async_middleware

#: The path under which the admin is served (``checkers_site/urls.py``).
ADMIN_PREFIX = "/admin/"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.cache
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries if entry.strip())


def admin_reachable(address: str | None) -> bool:
    """Whether a client at ``address`` (text, or None when unknown) may reach the admin: always
    when ``ADMIN_ALLOWED_ADDRESSES`` is empty, else only from one of its addresses or networks.
    Raises ValueError for a setting that names no address or network."""
    allowed = _networks(tuple(settings.ADMIN_ALLOWED_ADDRESSES))
    if not allowed:
        return True
    try:
        client = ipaddress.ip_address(address or "")
    except ValueError:
        return False
    return any(client in network for network in allowed)


def refusal(request: HttpRequest) -> HttpResponseNotFound | None:
    """A plain 404 for a request of an ``/admin/`` path from an address :func:`admin_reachable`
    refuses (no page template: no session is read yet); None for any other request."""
    if request.path_info.startswith(ADMIN_PREFIX) and not admin_reachable(request.META.get("REMOTE_ADDR")):
        return HttpResponseNotFound("Not Found", content_type="text/plain; charset=utf-8")
    return None


@sync_and_async_middleware
def admin_addresses(get_response: Callable[[HttpRequest], Any]) -> Callable[[HttpRequest], Any]:
    """Middleware (either kind, so it costs the request no thread hop): a request for
    ``/admin/...`` from an address :func:`admin_reachable` refuses is answered 404 before any
    session or database work; everything else goes on."""
    if iscoroutinefunction(get_response):
        async def check_async(request: HttpRequest) -> Any:
            return refusal(request) or await get_response(request)

        return check_async

    def check(request: HttpRequest) -> Any:
        return refusal(request) or get_response(request)

    return check
