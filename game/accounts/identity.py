"""Who a browser plays as: a guest's player id, or its account's.

A browser's session holds ``player_id`` (:func:`game.views.player_id`: every seat, socket and seek
reads it).  Signed in, the session also holds :data:`ACCOUNT_KEY` (the account's username) and its
``player_id`` is the account's (:class:`game.models.Account`), the same on every browser signed
in to the account: the account's seats follow it from device to device.

- **Sign-up**: the new account takes the browser's guest player id, so the guest keeps every seat
  it holds at once.
- **Log-in** to an existing account: the guest id ends (:func:`end_guest`: a copy of the guest's
  cookie holds none of the seats, cannot seek, and gets a new guest id at its next page, so it
  cannot create or join a game as the old id either), the
  guest's seats in that browser's games move to the account, once, now
  (:func:`game.round.handover.hand_over`, one ``seats`` event per game), then the session's player
  id becomes the account's.  Django's ``login()`` rotates the session key and keeps its data.
- **Log-out**: the session is emptied (Django's ``logout()``); the next page gives it a new guest id.
- A session whose account was deleted from another browser gets a new guest id at its next page
  (:class:`AccountSessionMiddleware`); one whose password was changed elsewhere is emptied by
  Django (its session hash no longer matches), and so gets one too.
- A game socket opened by a signed-in session asks :func:`log_in_holds` before each of its
  actions: a log-in ended since (log-out, password changed, account deleted) is refused.

Signed in, games are played under the username: :func:`seat_name`.
"""

from __future__ import annotations

import functools
import logging
import secrets
import uuid
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils.translation import gettext_lazy as _

from game.models import Account
from game.names import display_name
from game.round import handover
from game.round.errors import ActionError

log = logging.getLogger(__name__)

#: The session key holding the username of the account the session is signed in to.
ACCOUNT_KEY = "account"
#: The session key holding the id of the session's log-in (32 hex digits, new at every log-in): a
#: log-out records it as ended (:func:`end_log_in`), for the game sockets opened before.
LOGIN_KEY = "login"


def new_player_id() -> str:
    """A fresh player id: 32 hex digits, as a guest's."""
    return uuid.uuid4().hex


def account_name(session: Any) -> str | None:
    """The username of the account ``session`` (a session, or the dict-like ``scope["session"]``
    of a socket; None allowed) is signed in to, or None for a guest."""
    if session is None:
        return None
    name = session.get(ACCOUNT_KEY)
    return name if isinstance(name, str) and name else None


def seat_name(session: Any, typed: Any, player_id: str | None) -> str:
    """The name a new seat or seek is played under: signed in, the account's username, whatever
    was typed; a guest, :func:`game.names.display_name` (``typed``, or the guest name).

    Raises :class:`~game.round.errors.ActionError` ``bad_name`` for a guest's unusable name."""
    return account_name(session) or display_name(typed, player_id)


def account_of(user: Any, guest: str | None = None) -> Account:
    """The :class:`~game.models.Account` of ``user`` (a :class:`django.contrib.auth.models.User`),
    made now when it has none: with the player id ``guest`` (the browser's guest id, 32 hex
    digits) when given and no account's yet, else a new one."""
    try:
        return Account.objects.get(user=user)
    except Account.DoesNotExist:
        pass
    pid = guest if guest and not Account.objects.filter(player_id=guest).exists() else new_player_id()
    try:
        with transaction.atomic():
            return Account.objects.create(user=user, player_id=pid)
    except IntegrityError:  # made meanwhile by another request of the same user
        return Account.objects.get(user=user)


def move_guest_seats(guest: str, account: Account) -> list[str]:
    """Hand every seat the player id ``guest`` holds to ``account`` (each game through
    :func:`game.round.handover.hand_over`, its ``seats`` event published once the caller's
    transaction commits).  A game in which the account holds the other seat is left as it is.
    Returns the ids of the games moved."""
    from game.round.fanout import publish_sync

    moved = []
    for game_id in handover.games_of(guest):
        try:
            progress = handover.hand_over(game_id, guest, account.player_id)
        except ActionError as exc:
            log.info("seat of %s in game %s stays: %s", guest, game_id, exc.code)
            continue
        if progress.events:
            moved.append(game_id)
            transaction.on_commit(functools.partial(publish_sync, game_id, progress.events))
    return moved


def _guest_ended_key(guest: str) -> str:
    return f"guest-ended:{guest}"


def end_guest(guest: str) -> None:
    """Record that the guest id ``guest`` (32 hex digits) logged in to an account and is no one
    any more: in the cache shared by every server process, for as long as a copy of its cookie
    could live (``SESSION_COOKIE_AGE``).  From then on a session still holding it gets a new guest
    id at its next page (:class:`AccountSessionMiddleware`) and cannot seek
    (:func:`log_in_holds`).  A cache that fails is logged, nothing more: the guest's seats have
    moved to the account all the same, so the old id holds none of them."""
    try:
        cache.set(_guest_ended_key(guest), 1, settings.SESSION_COOKIE_AGE)
    except Exception as exc:  # noqa: BLE001 - the log-in itself must go on
        log.warning("could not record the end of guest %s: %s", guest, exc)


def ended_guests(player_ids: list[str]) -> set[str]:
    """Those of ``player_ids`` that are guest ids ended by a log-in (:func:`end_guest`), in one
    cache read.  A cache that fails counts as none ended."""
    ids = [pid for pid in player_ids if pid]
    if not ids:
        return set()
    try:
        found = cache.get_many([_guest_ended_key(pid) for pid in ids])
    except Exception as exc:  # noqa: BLE001 - fail open, as every limit of the site
        log.warning("could not read whether guests ended: %s", exc)
        return set()
    return {pid for pid in ids if _guest_ended_key(pid) in found}


def sign_in(request: Any, user: Any) -> Account:
    """Make ``request``'s session play as ``user``'s account (see the module docstring): the
    account is made if it has none (taking the session's guest id), or else the guest id is ended
    (:func:`end_guest`) and its seats move to the account, once, now; then the session's
    ``player_id`` is the account's and its name the username.  Nothing maps the old guest id to
    the account afterwards."""
    session = request.session
    guest = session.get("player_id")
    account = account_of(user, guest)
    if guest and guest != account.player_id:
        end_guest(guest)   # first: a copy of the guest's cookie takes no seat from here on
        move_guest_seats(guest, account)
    session["player_id"] = account.player_id
    session[ACCOUNT_KEY] = user.get_username()
    session["name"] = user.get_username()
    session[LOGIN_KEY] = secrets.token_hex(16)
    return account


#: What a socket whose session's log-in ended (:func:`log_in_holds`) is told before it closes.
SESSION_ENDED_MESSAGE = _("You are no longer signed in on this page: it reconnects as this browser is now.")


def _ended_key(login: str) -> str:
    return f"login-ended:{login}"


def end_log_in(session: Any) -> None:
    """Record the log-in of ``session`` (a session about to be logged out) as ended, in the cache
    shared by every server process, for as long as its cookie could live
    (``SESSION_COOKIE_AGE``): the game sockets it opened are refused from their next action
    (:func:`log_in_holds`).  A cache that fails is logged, nothing more (those sockets then act
    until they close, as before the log-out)."""
    login = session.get(LOGIN_KEY) if session is not None else None
    if not isinstance(login, str) or not login:
        return
    try:
        cache.set(_ended_key(login), 1, settings.SESSION_COOKIE_AGE)
    except Exception as exc:  # noqa: BLE001 - the log-out itself must go on
        log.warning("could not record the end of a log-in: %s", exc)


class _SessionCopy(dict):
    """A copy of a socket's session for ``get_user``: a session failing its checks is "flushed"
    here only (the socket's session is the page's, not the socket's to change)."""

    def flush(self) -> None:
        self.clear()

    def cycle_key(self) -> None:
        pass


def signed_in(session: Any) -> bool:
    """Whether ``session`` (a session store, a socket's ``scope["session"]``, or None) says it is
    signed in to a user, whether or not that log-in still holds."""
    return session is not None and session.get(SESSION_KEY) is not None


def log_in_holds(session: Any) -> bool:
    """Whether the identity of ``session`` still holds.  Signed in, whether its log-in does, as
    Django checks a page's: its user exists and is active, its password is the one the session was
    signed in with (Django's session auth hash: a password changed since ends every other session;
    ``update_session_auth_hash`` keeps the browser that changed it signed in), and the session was
    not logged out since (:func:`end_log_in`).  A guest's session holds unless its guest id logged
    in to an account since (:func:`end_guest`: a copy of the cookie from before the log-in).
    Reads the database and the cache; a cache that fails counts as nothing ended."""
    if not signed_in(session):
        guest = session.get("player_id") if session is not None else None
        return not (isinstance(guest, str) and ended_guests([guest]))
    user = get_user(SimpleNamespace(session=_SessionCopy(session.items())))  # type: ignore[arg-type]
    return user.is_authenticated and log_in_ended_not_recorded(session)


def log_in_ended_not_recorded(session: Any) -> bool:
    """Whether no log-out of ``session``'s log-in is recorded (:func:`end_log_in`; the part of
    :func:`log_in_holds` after Django's checks).  Reads the cache; a cache that fails counts as
    nothing recorded."""
    login = session.get(LOGIN_KEY)
    if isinstance(login, str) and login:
        try:
            if cache.get(_ended_key(login)) is not None:
                return False
        except Exception as exc:  # noqa: BLE001 - fail open: the password check still holds
            log.warning("could not read whether a log-in ended: %s", exc)
    return True


def on_logged_in(sender: Any, request: Any = None, user: Any = None, **kwargs: Any) -> None:
    """``user_logged_in`` (Django's, sent by allauth's log-in and sign-up too): :func:`sign_in`."""
    if request is None or user is None or not hasattr(request, "session"):
        return
    sign_in(request, user)


def on_logged_out(sender: Any, request: Any = None, user: Any = None, **kwargs: Any) -> None:
    """``user_logged_out`` (Django's ``logout()``, sent before the session is emptied: allauth's
    log-out, deleting an account): :func:`end_log_in`."""
    if request is not None and hasattr(request, "session"):
        end_log_in(request.session)


def connect_signals() -> None:
    """Connect :func:`on_logged_in` and :func:`on_logged_out` (called once, from the app's
    ``ready()``)."""
    user_logged_in.connect(on_logged_in, dispatch_uid="accounts-sign-in")
    user_logged_out.connect(on_logged_out, dispatch_uid="accounts-log-out")


class AccountSessionMiddleware:
    """Keeps a session's player id its account's (after Django's ``AuthenticationMiddleware``).

    A guest's session whose guest id logged in to an account since (a copy of the cookie from
    before the log-in: :func:`end_guest`) is emptied and gets a new guest id: one cache read per
    page of a guest.  A signed-in session without its account's name (logged in some other way,
    e.g. the admin) is signed in as at log-in (:func:`sign_in`); a session that says it is signed
    in but whose user is gone (the account was deleted from another browser) loses its account and
    gets a new guest id.
    """

    def __init__(self, get_response: Any):
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        session = request.session
        if SESSION_KEY in session or ACCOUNT_KEY in session:
            user = request.user
            if user.is_authenticated:
                if session.get(ACCOUNT_KEY) != user.get_username() or not session.get("player_id"):
                    sign_in(request, user)
            else:
                session.flush()
                session["player_id"] = new_player_id()
        elif not log_in_holds(session):
            session.flush()
            session["player_id"] = new_player_id()
        return self.get_response(request)
