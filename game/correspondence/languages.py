"""The language of an account's mails: the one it last used the site in, noted when it logs in
(or signs up) and when it opens its notification settings (:class:`~game.models.Account.language`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.http import HttpRequest
from django.utils import translation

from game.models import Account


def of_request(request: HttpRequest | None) -> str:
    """The language ``request`` is served in (``LocaleMiddleware``'s choice: the language picker's
    cookie, else the browser's languages), or ``""`` when it is none of ``LANGUAGES``."""
    language = getattr(request, "LANGUAGE_CODE", None) or translation.get_language() or ""
    return language if language in {code for code, _ in settings.LANGUAGES} else ""


def remember(user_pk: Any, language: str) -> None:
    """Note ``language`` as the language of the account of user ``user_pk`` (nothing when it is
    ``""``, already noted, or the user has no account)."""
    if language:
        Account.objects.filter(user__pk=user_pk).exclude(language=language).update(language=language)


def on_login(sender: Any, request: HttpRequest | None = None, user: Any = None, **kwargs: Any) -> None:
    """``user_logged_in``: the account's mails follow the language of the log-in's page."""
    if user is not None and user.pk is not None:
        remember(user.pk, of_request(request))


def connect_signals() -> None:
    """Connect :func:`on_login` (after the accounts' own receivers, which make the account)."""
    user_logged_in.connect(on_login, dispatch_uid="correspondence-mail-language")
