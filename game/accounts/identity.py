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

import logging
import secrets
import uuid
from typing import Any

from django.contrib.auth import SESSION_KEY
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.db import IntegrityError, transaction

from game.errors import ActionError
from game.http_limits import client_address
from game.models import Account
from game.names import display_name
from game.ratings import links
from game.round import handover
from game.sessions import LOGIN_KEY, end_guest, end_log_in, log_in_holds

log = logging.getLogger(__name__)

#: The session key holding the username of the account the session is signed in to.
ACCOUNT_KEY = "account"
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

    Raises :class:`~game.errors.ActionError` ``bad_name`` for a guest's unusable name."""
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
    :func:`game.round.handover.hand_over`, which publishes its ``seats`` event once the caller's
    transaction commits).  A game in which the account holds the other seat is left as it is.
    Returns the ids of the games moved."""
    moved = []
    for game_id in handover.games_of(guest):
        try:
            progress = handover.hand_over(game_id, guest, account.player_id)
        except ActionError as exc:
            log.info("seat of %s in game %s stays: %s", guest, game_id, exc.code)
            continue
        if progress.events:
            moved.append(game_id)
    return moved


def sign_in(request: Any, user: Any) -> Account:
    """Make ``request``'s session play as ``user``'s account (see the module docstring): the
    account is made if it has none (taking the session's guest id), or else the guest id is ended
    (:func:`end_guest`) and its seats move to the account, once, now; then the session's
    ``player_id`` is the account's and its name the username.  Nothing maps the old guest id to
    the account afterwards."""
    session = request.session
    guest = session.get("player_id")
    new = not Account.objects.filter(user=user).exists()
    account = account_of(user, guest)
    links.note_sign_in(account, getattr(request, "device", None), client_address(request), new)
    if guest and guest != account.player_id:
        end_guest(guest)   # first: a copy of the guest's cookie takes no seat from here on
        move_guest_seats(guest, account)
    session["player_id"] = account.player_id
    session[ACCOUNT_KEY] = user.get_username()
    session["name"] = user.get_username()
    session[LOGIN_KEY] = secrets.token_hex(16)
    return account


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
