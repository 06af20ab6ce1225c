"""Accounts that one person may hold together: their rated games against each other do not count.

Two links are kept (``docs/ratings.md``, "Results that count"):

- **A browser.** Each browser gets a cookie of its own (:data:`DEVICE_COOKIE`: 32 hex digits,
  :data:`DEVICE_COOKIE_AGE_S`), apart from the session, so a log-out does not clear it.  Every
  sign-in notes the browser (:class:`game.models.AccountDevice`).  Two accounts signed in from one
  browser within :data:`DEVICE_LINK_DAYS` days of each other are linked: their rated games
  against each other never count.
- **An address at sign-up.** Every new account keeps a keyed hash of the client address it signed
  up from (:func:`address_key`: the address itself is not kept).  Two accounts that signed up from
  one address within :data:`SIGN_UP_LINK_DAYS` days of each other count against each other only
  once each has played :data:`PLAYED_OTHERS` rated games against accounts not so linked to it: a
  family on one network plays its first rated games against others, then against each other
  as anyone.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from game.models import Account, AccountDevice, Game, RatingChange

#: The browser's own cookie, and how long it lives (seconds).
DEVICE_COOKIE = "device"
DEVICE_COOKIE_AGE_S = 2 * 365 * 86400
#: Accounts signed in from one browser within this many days of each other are linked.
DEVICE_LINK_DAYS = 90
#: Accounts signed up from one address within this many days of each other are linked ...
SIGN_UP_LINK_DAYS = 7
#: ... until each has played this many rated games against accounts not so linked to it.
PLAYED_OTHERS = 5


def new_device_id() -> str:
    """A new browser's id: 32 hex digits, unguessable."""
    return secrets.token_hex(16)


def is_device_id(text: object) -> bool:
    """Whether ``text`` is something :func:`new_device_id` could have made."""
    return isinstance(text, str) and len(text) == 32 and all(c in "0123456789abcdef" for c in text)


def address_key(address: str | None) -> str:
    """A keyed hash (HMAC-SHA256 with the site's secret key, 32 hex digits) of a client address,
    ``""`` for none: equal addresses give equal keys, and the key does not give the address back."""
    if not address:
        return ""
    return hmac.new(settings.SECRET_KEY.encode(), address.encode(), hashlib.sha256).hexdigest()[:32]


def note_sign_in(account: Account, device: str | None, address: str | None, new: bool,
                 now: datetime | None = None) -> None:
    """Note that ``account`` signed in from the browser ``device`` (its cookie's id; None: not
    known) and, for a ``new`` account, that it signed up from ``address``."""
    now = now or timezone.now()
    if is_device_id(device):
        AccountDevice.objects.update_or_create(account=account, device=device, defaults={"seen_at": now})
    if new and address:
        Account.objects.filter(pk=account.pk).update(signed_up_from=address_key(address))


def link(player: str, other: str, now: datetime | None = None) -> str | None:
    """Why the accounts of player ids ``player`` and ``other`` may be one person's, as rated games
    between them go: ``"browser"``, ``"sign_up"`` (:mod:`this module's docstring <game.ratings.links>`),
    or None (not linked, or not both accounts)."""
    now = now or timezone.now()
    accounts = {a.player_id: a for a in Account.objects.filter(player_id__in=[player, other])}
    if len(accounts) != 2:
        return None
    a, b = accounts[player], accounts[other]
    if _share_a_browser(a, b):
        return "browser"
    if a.signed_up_from and a.signed_up_from == b.signed_up_from \
            and abs(a.created_at - b.created_at) <= timedelta(days=SIGN_UP_LINK_DAYS) \
            and (_others_played(a) < PLAYED_OTHERS or _others_played(b) < PLAYED_OTHERS):
        return "sign_up"
    return None


def _share_a_browser(a: Account, b: Account) -> bool:
    """Whether ``a`` and ``b`` signed in from one browser within :data:`DEVICE_LINK_DAYS` of each other."""
    window = timedelta(days=DEVICE_LINK_DAYS)
    for device, seen in AccountDevice.objects.filter(account=a).values_list("device", "seen_at"):
        if AccountDevice.objects.filter(account=b, device=device,
                                        seen_at__gte=seen - window, seen_at__lte=seen + window).exists():
            return True
    return False


def _others_played(account: Account) -> int:
    """The rated games ``account`` played against accounts not signed up from its address (within
    :data:`SIGN_UP_LINK_DAYS` days of it)."""
    near = Account.objects.filter(signed_up_from=account.signed_up_from,
                                  created_at__gte=account.created_at - timedelta(days=SIGN_UP_LINK_DAYS),
                                  created_at__lte=account.created_at + timedelta(days=SIGN_UP_LINK_DAYS))
    near_ids = list(near.values_list("player_id", flat=True))
    games = Game.objects.filter(Q(black_player=account.player_id) | Q(white_player=account.player_id))
    return (RatingChange.objects.filter(player_id=account.player_id, game__in=games)
            .exclude(game__black_player__in=near_ids, game__white_player__in=near_ids).count())
