"""Rate limits on the HTTP requests that cost the server: analysis searches and new games.

Each limited request is counted twice in Redis (limits' moving window, shared
by every server process): once for the session's player id and once for the
client address (``REMOTE_ADDR``: behind nginx, Daphne's ``--proxy-headers``
puts the real one there).  The limits are settings in limits' notation
(``"30/minute;300/hour"``); an empty one counts nothing:

- analysis searches (``POST /analysis/search``): ``ANALYSIS_RATE_LIMIT_SESSION``,
  ``ANALYSIS_RATE_LIMIT_ADDRESS``;
- new games (``POST /`` and ``POST /computer``): ``GAME_CREATE_RATE_LIMIT_SESSION``,
  ``GAME_CREATE_RATE_LIMIT_ADDRESS``.

Over a limit the request is answered 429 (:func:`json_refusal`,
:func:`page_refusal`) with ``Retry-After``.  When Redis cannot answer, the
request is let through and a warning logged.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from dataclasses import dataclass

import limits
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from limits.errors import StorageError
from limits.storage import RedisStorage
from limits.strategies import MovingWindowRateLimiter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rule:
    """One kind of limited request: the settings holding its per-session and per-address limits."""

    name: str
    session_setting: str
    address_setting: str


ANALYSIS = Rule("analysis", "ANALYSIS_RATE_LIMIT_SESSION", "ANALYSIS_RATE_LIMIT_ADDRESS")
GAME_CREATE = Rule("game_create", "GAME_CREATE_RATE_LIMIT_SESSION", "GAME_CREATE_RATE_LIMIT_ADDRESS")


@functools.cache
def _limiter(url: str, prefix: str) -> MovingWindowRateLimiter:
    storage = RedisStorage(url, key_prefix=f"{prefix}:limits", wrap_exceptions=True,
                           socket_timeout=2, socket_connect_timeout=2)
    return MovingWindowRateLimiter(storage)


@functools.cache
def _items(spec: str) -> tuple[limits.RateLimitItem, ...]:
    return tuple(limits.parse_many(spec)) if spec.strip() else ()


def client_address(request: HttpRequest) -> str | None:
    """The client's address as the server saw it (None when unknown)."""
    return request.META.get("REMOTE_ADDR") or None


def retry_after(rule: Rule, player_id: str | None, address: str | None) -> int | None:
    """Count one request of ``rule`` for the session ``player_id`` and the address ``address``
    (either may be None: not counted).  Returns None when it is allowed, else the seconds after
    which one may try again.  Synchronous (one Redis round trip per limit)."""
    limiter = _limiter(settings.REDIS_URL, settings.REDIS_PREFIX)
    counted = [(item, who, value)
               for who, value, setting in (("session", player_id, rule.session_setting),
                                           ("address", address, rule.address_setting))
               if value for item in _items(getattr(settings, setting, ""))]
    try:
        # Each hit is one atomic test-and-count, so a burst of parallel requests cannot slip
        # past between a test and its count.
        for item, who, value in counted:
            if not limiter.hit(item, rule.name, who, value):
                reset, _ = limiter.get_window_stats(item, rule.name, who, value)
                log.info("rate limited: %s per %s (%s)", rule.name, who, item)
                return max(1, math.ceil(reset - time.time()))
    except StorageError as exc:
        log.warning("HTTP rate limits unavailable, request let through: %s", exc)
    return None


def json_refusal(seconds: int) -> JsonResponse:
    """The 429 answer of a JSON endpoint."""
    response = JsonResponse({"error": "rate_limited", "message": _("Too many requests; try again later."),
                             "retry_after_s": seconds}, status=429)
    response["Retry-After"] = str(seconds)
    return response


def page_refusal(seconds: int) -> HttpResponse:
    """The 429 answer of a form."""
    response = HttpResponse(_("Too many new games; try again in %(seconds)s s.") % {"seconds": seconds}, status=429,
                            content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(seconds)
    return response
