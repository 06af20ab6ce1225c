"""A browser's session and its log-in, as every page and socket reads them.

A session signed in to an account holds Django's user key and :data:`LOGIN_KEY`, the id of that
log-in (new at every log-in).  A log-out records the log-in as ended (:func:`end_log_in`), in the
cache every server process shares, so that the game sockets the session opened before are
refused from their next action (:func:`log_in_holds`), as a page would be.
"""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user
from django.core.cache import cache
from django.utils.translation import gettext_lazy as _

log = logging.getLogger(__name__)

#: The session key holding the id of the session's log-in (32 hex digits, new at every log-in): a
#: log-out records it as ended (:func:`end_log_in`), for the game sockets opened before.
LOGIN_KEY = "login"


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
    return user_of(session).is_authenticated and log_in_ended_not_recorded(session)


def user_of(session: Any) -> Any:
    """The user ``session`` (a session store, or a socket's dict-like ``scope["session"]``) is signed
    in to, as Django checks a page's (its user exists and is active, its password unchanged since),
    else an anonymous user; the session itself is never changed.  Reads the database."""
    return get_user(SimpleNamespace(session=_SessionCopy(session.items())))  # type: ignore[arg-type]


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


def _guest_ended_key(guest: str) -> str:
    return f"guest-ended:{guest}"


def end_guest(guest: str) -> None:
    """Record that the guest id ``guest`` (32 hex digits) logged in to an account and is no one
    any more: in the cache shared by every server process, for as long as a copy of its cookie
    could live (``SESSION_COOKIE_AGE``).  From then on a session still holding it gets a new guest
    id at its next page (:class:`game.accounts.identity.AccountSessionMiddleware`) and cannot seek
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
