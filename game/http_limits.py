"""Rate limits on the HTTP requests that cost the server: analysis searches and new games.

Each limited request is counted twice in Redis (limits' moving window, shared
by every server process): once for the session's player id and once for the
client address (``REMOTE_ADDR``: behind nginx, Daphne's ``--proxy-headers``
puts the real one there).  The limits are settings in limits' notation
(``"30/minute;300/hour"``); an empty one counts nothing:

- analysis searches (``POST /analysis/search``): ``ANALYSIS_RATE_LIMIT_SESSION``,
  ``ANALYSIS_RATE_LIMIT_ADDRESS``;
- new games (``POST /`` and ``POST /computer``): ``GAME_CREATE_RATE_LIMIT_SESSION``,
  ``GAME_CREATE_RATE_LIMIT_ADDRESS``;
- joins of a passworded arena (``POST /tournaments/<id>/join``): ``TOURNAMENT_JOIN_RATE_LIMIT_SESSION``,
  ``TOURNAMENT_JOIN_RATE_LIMIT_ADDRESS`` (refused with a message on the arena's page).

Over a limit the request is answered 429 (:func:`json_refusal`,
:func:`page_refusal`) with ``Retry-After``.  When Redis cannot answer, the
request is let through and a warning logged.

A refusal costs a client that ignores it nothing more: each process remembers
the sessions and addresses it refused (:data:`blocked`) until their
``Retry-After``, and :func:`early_refusals`, the middleware right after the
operations endpoints, answers their next limited requests 429 before any
session, CSRF, database or Redis work, after holding each for up to
:data:`HOLD_S` seconds (a client asking again at once is slowed to one request
a second per connection; a held request costs no thread).  At most
:data:`MAX_HELD` are held at a time in a process; more are answered at once.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import limits
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import async_only_middleware
from django.utils.translation import gettext as _
from limits.errors import StorageError
from limits.strategies import MovingWindowRateLimiter

from checkers_site import redis_cluster

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rule:
    """One kind of limited request: the settings holding its per-session and per-address limits."""

    name: str
    session_setting: str
    address_setting: str


ANALYSIS = Rule("analysis", "ANALYSIS_RATE_LIMIT_SESSION", "ANALYSIS_RATE_LIMIT_ADDRESS")
GAME_CREATE = Rule("game_create", "GAME_CREATE_RATE_LIMIT_SESSION", "GAME_CREATE_RATE_LIMIT_ADDRESS")
#: Joins of a passworded arena (:mod:`game.tournaments.views`): each one hashes a password.
TOURNAMENT_JOIN = Rule("tournament_join", "TOURNAMENT_JOIN_RATE_LIMIT_SESSION", "TOURNAMENT_JOIN_RATE_LIMIT_ADDRESS")

#: The limited requests: ``POST <path>`` and its rule.
LIMITED = {"/": GAME_CREATE, "/computer": GAME_CREATE, "/analysis/search": ANALYSIS}
#: Seconds an early refusal is held before it is answered (at most its Retry-After).
HOLD_S = 1.0
#: Early refusals held at a time in a process; more are answered at once.
MAX_HELD = 64


class Blocked:
    """The sessions and addresses this process refused, by rule, until their ``Retry-After``
    (monotonic seconds); forgotten once past."""

    def __init__(self) -> None:
        self.until: dict[tuple[str, str, str], float] = {}

    def note(self, rule: Rule, who: str, value: str, seconds: int) -> None:
        """``value`` (a player id, ``who="session"``, or an address) was refused ``rule`` for ``seconds``."""
        if len(self.until) > 10_000:            # a flood of throwaway sessions: keep the live ones
            now = time.monotonic()
            self.until = {k: t for k, t in self.until.items() if t > now}
        self.until[(rule.name, who, value)] = time.monotonic() + seconds

    def left(self, rule: Rule, player_id: str | None, address: str | None) -> int | None:
        """Whole seconds ``player_id``'s session or ``address`` is still refused ``rule``, or None."""
        now = time.monotonic()
        lefts = [self.until.get((rule.name, who, value), 0.0) - now
                 for who, value in (("session", player_id), ("address", address)) if value]
        worst = max(lefts, default=0.0)
        return max(1, math.ceil(worst)) if worst > 0 else None


#: This process's refused clients.
blocked = Blocked()
_held = 0


@functools.cache
def _limiter(url: str, prefix: str) -> MovingWindowRateLimiter:
    return MovingWindowRateLimiter(redis_cluster.limits_storage(url, f"{prefix}:limits"))


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
    counted = [(item, who, value)
               for who, value, setting in (("session", player_id, rule.session_setting),
                                           ("address", address, rule.address_setting))
               if value for item in _items(getattr(settings, setting, ""))]
    try:
        limiter = _limiter(redis_cluster.site_limits_url(), settings.REDIS_PREFIX)
        # Each hit is one atomic test-and-count, so a burst of parallel requests cannot slip
        # past between a test and its count.
        for item, who, value in counted:
            if not limiter.hit(item, rule.name, who, value):
                reset, _ = limiter.get_window_stats(item, rule.name, who, value)
                log.info("rate limited: %s per %s (%s)", rule.name, who, item)
                seconds = max(1, math.ceil(reset - time.time()))
                blocked.note(rule, who, value, seconds)
                return seconds
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


def _session_player_id(request: HttpRequest) -> str | None:
    """The player id in the request's session cookie, read without the session middleware (a signed
    cookie is checked and decoded in memory); None without one, or with another session engine."""
    if settings.SESSION_ENGINE != "django.contrib.sessions.backends.signed_cookies":
        return None
    key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not key:
        return None
    from django.contrib.sessions.backends.signed_cookies import SessionStore

    player = SessionStore(session_key=key).load().get("player_id")
    return player if isinstance(player, str) else None


def early_refusal(request: HttpRequest) -> tuple[HttpResponse, int] | None:
    """The 429 answer (and the seconds left) of a limited request from a session or an address this
    process refused and still refuses (:data:`blocked`); None for any other request."""
    rule = LIMITED.get(request.path_info) if request.method == "POST" else None
    if rule is None:
        return None
    seconds = blocked.left(rule, _session_player_id(request), client_address(request))
    if seconds is None:
        return None
    return (json_refusal(seconds) if rule is ANALYSIS else page_refusal(seconds)), seconds


@async_only_middleware
def early_refusals(get_response: Callable[[HttpRequest], Any]) -> Callable[[HttpRequest], Any]:
    """Middleware (asynchronous: the middleware after it run in one thread hop, as before): refuse
    the limited requests of clients this process refuses on the event loop, each held up to
    :data:`HOLD_S` s first; everything else goes on."""

    async def answer(request: HttpRequest) -> HttpResponse:
        global _held
        refusal = early_refusal(request)
        if refusal is None:
            return await get_response(request)
        response, seconds = refusal
        if _held < MAX_HELD:
            _held += 1
            try:
                await asyncio.sleep(min(HOLD_S, seconds))
            finally:
                _held -= 1
        return response

    return answer
