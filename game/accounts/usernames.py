"""The rules of a username: what sign-up accepts (allauth calls :data:`VALIDATORS`).

A username is 3 to 20 characters of ``A-Z a-z 0-9 _ -``, with at least one letter or digit, and
unique whatever its case (allauth compares ``iexact``; "Alice" and "alice" are one name).  Names
that would pass for the site's own seats are refused: anything starting with "guest" (guests are
"Guest 4821", :func:`game.names.guest_name`; "Invité", "Invitado" in French and Spanish),
"computer" or "bot" (the computer is "Computer (level 3)" with the player id ``bot:3``,
:mod:`game.computer.seat`; "Ordinateur", "Ordenador"), and a few words of the site's ("deleted",
"admin", "anonymous", ...), in any case and with ``_``/``-`` anywhere.
A name that only looks empty is refused as an empty one.  Pure checks, no database.

>>> check("Ann_42")
>>> check("guest_1234")
Traceback (most recent call last):
...
django.core.exceptions.ValidationError: ["This name is kept for the site's own players (guests, the computer)."]
"""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from game.names import is_blank

#: The shortest and the longest username, in characters.
MIN_CHARS, MAX_CHARS = 3, 20
_ALLOWED = re.compile(r"[A-Za-z0-9_-]+")
#: Folded names (lower case, without ``_`` and ``-``) that may not start a username: the guests' and
#: the computer's names in every language of the site ("Invité 4821", "Ordenador (nivel 3)"), a
#: deleted player's, and the like.
RESERVED_PREFIXES = ("guest", "invite", "invitado", "computer", "ordinateur", "ordenador", "bot",
                     "deleted", "anonymous")
#: Folded names that may not be a whole username.
RESERVED_NAMES = frozenset({"admin", "administrator", "moderator", "system", "site", "server", "nobody",
                            "null", "none", "player", "spectator", "checkers", "checkerslive"})


def folded(username: str) -> str:
    """``username`` as the reserved names are compared: lower case, without ``_`` and ``-``.

    >>> folded("Com_Pu-TER")
    'computer'
    """
    return username.lower().replace("_", "").replace("-", "")


def check(username: str) -> None:
    """Check one username against the rules of the module docstring.

    A username that only looks empty (:func:`game.names.is_blank`: U+3164 Hangul filler, U+2800,
    zero-width spaces...) is refused as an empty one is (``required``, Django's "This field is
    required.").

    Raises :class:`django.core.exceptions.ValidationError` (codes ``required``, ``username_length``,
    ``username_characters``, ``username_blank``, ``username_reserved``); returns None when it passes.
    """
    if isinstance(username, str) and is_blank(username):
        # Only fillers, zero-width or blank characters: as if nothing were typed.
        raise ValidationError(forms.Field.default_error_messages["required"], code="required")
    if not isinstance(username, str) or not MIN_CHARS <= len(username) <= MAX_CHARS:
        raise ValidationError(_("Choose a username of %(min)s to %(max)s characters."),
                              code="username_length", params={"min": MIN_CHARS, "max": MAX_CHARS})
    if not _ALLOWED.fullmatch(username):
        raise ValidationError(_("Use only letters A-Z, digits, _ and - in a username."),
                              code="username_characters")
    name = folded(username)
    if not name:
        raise ValidationError(_("A username needs at least one letter or digit."), code="username_blank")
    if name.startswith(RESERVED_PREFIXES) or name in RESERVED_NAMES:
        raise ValidationError(_("This name is kept for the site's own players (guests, the computer)."),
                              code="username_reserved")


#: What ``ACCOUNT_USERNAME_VALIDATORS`` names: allauth runs each on a new username.
VALIDATORS = [check]
