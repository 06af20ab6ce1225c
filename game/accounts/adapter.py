"""The site's allauth adapter: usernames checked by :mod:`game.accounts.usernames` and unique
whatever their case, wrong passwords counted per username *and* client address, and mail that
cannot go out logged instead of failing the page."""

from __future__ import annotations

import logging
import smtplib
from typing import Any

from allauth import app_settings as allauth_settings
from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.shortcuts import redirect
from django.utils.translation import gettext

from checkers_site.clients import counted
from game.accounts.usernames import check

log = logging.getLogger(__name__)


class AccountAdapter(DefaultAccountAdapter):
    """allauth's default adapter, with the site's username rules before allauth's own checks."""

    def clean_username(self, username: str, shallow: bool = False) -> str:
        """A new username, stripped and checked (:func:`game.accounts.usernames.check`, then
        allauth's: taken whatever the case).  Raises :class:`django.forms.ValidationError`."""
        username = username.strip()
        check(username)
        return super().clean_username(username, shallow=shallow)

    def _get_login_attempts_cache_key(self, request: Any, **credentials: Any) -> str:
        """The ``key`` of allauth's ``login_failed`` rate (``ACCOUNT_RATE_LIMITS``): the username
        (allauth's own key, lower case) and the client address (an IPv6 address by its /64, as
        allauth counts its per-address rates), so that wrong passwords typed from one address
        lock that username out for that address only, never for its owner elsewhere."""
        return f"{super()._get_login_attempts_cache_key(request, **credentials)}@{self.client_network(request)}"

    def client_network(self, request: Any) -> str:
        """The client address allauth counts (:meth:`get_client_ip`: Daphne's, from nginx's
        ``X-Forwarded-For``); an IPv6 address as its network of ``ALLAUTH_RATE_LIMIT_IPV6_PREFIX``
        bits (64), as :func:`checkers_site.clients.counted`.  Raises ``PermissionDenied`` without one."""
        return counted(self.get_client_ip(request), allauth_settings.RATE_LIMIT_IPV6_PREFIX) or ""

    def save_user(self, request: Any, user: Any, form: Any, commit: bool = True) -> Any:
        """Store a new user, its username unique whatever its case even when two sign-ups race:
        the check of the form is made again under a lock of the name (PostgreSQL's advisory lock
        of the lower-case name; SQLite's transactions write one at a time).  A name taken
        meanwhile sends the browser back to the sign-up page with a message (allauth's
        :class:`ImmediateHttpResponse`); nothing is stored then."""
        if not commit:
            return super().save_user(request, user, form, commit=False)
        name = (form.cleaned_data.get("username") or "").strip()
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(lower(%s), 0))", [name])
            if name and get_user_model()._default_manager.filter(username__iexact=name).exists():
                messages.error(request, gettext("The username %(name)s was taken a moment ago: choose another.")
                               % {"name": name})
                raise ImmediateHttpResponse(redirect("account_signup"))
            return super().save_user(request, user, form, commit=True)

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        """Send one of allauth's mails (``template_prefix``: ``account/email/password_reset_key``,
        ...) to ``email``.  A mail server that refuses or cannot be reached is logged as an error
        (the operator's to fix: ``EMAIL_URL``) and the page goes on: the account is made, the
        reset page says a mail was sent; the player may ask again later."""
        try:
            super().send_mail(template_prefix, email, context)
        except (OSError, smtplib.SMTPException) as exc:
            log.error("could not send %s to a player: %s", template_prefix.rsplit("/", 1)[-1], exc)
