"""Display names, as players type them on every form and in the lobby; a generated guest name
("Guest 4821") for a visitor who typed none (:func:`display_name`, the one rule everywhere)."""

from __future__ import annotations

import hashlib
import secrets
import unicodedata
from typing import Any

from confusable_homoglyphs import confusables
from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.i18n import lazy_text

#: The longest display name, in characters.
NAME_MAX_CHARS = 24


#: Characters that are letters or symbols to Unicode but draw nothing: the Hangul fillers and the
#: blank Braille pattern.  With spaces, format characters (zero-width space, joiners, ...) and
#: combining marks, they make a name that looks empty (:func:`is_blank`).
BLANK_CHARACTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
#: What a name too long, or empty, or blank-looking, is answered.
LENGTH_MESSAGE = _("Choose a display name of 1 to %(max)s characters.")
#: What a name with a control or format character is answered (the forms say the same).
PRINTABLE_MESSAGE = _("Use printable characters only.")


def is_blank(name: str) -> bool:
    """Whether ``name`` shows nothing: every character a space (category Z), a control or format
    character (C: U+200B zero-width space, U+2060 word joiner...), a combining mark alone (M), or
    one of :data:`BLANK_CHARACTERS` (U+3164 Hangul filler, U+2800 blank Braille pattern...).

    >>> is_blank("\u2800 \u3164\u200b\u0301"), is_blank("Ann\u3164")
    (True, False)
    """
    return not any(unicodedata.category(c)[0] not in "ZCM" and c not in BLANK_CHARACTERS for c in name)


#: The most combining marks (accents, vowel signs, tone marks) one character of a name may carry:
#: enough for every script's letters (Vietnamese ệ, Thai and Devanagari signs take two or three),
#: not for marks piled up until the name spills out of its place on the page.
MOST_MARKS = 3
#: What a name with more marks on one character is answered.
MARKS_MESSAGE = _("A letter of a display name may carry at most three accents.")


def piles_marks(name: str) -> bool:
    """Whether ``name`` has more than :data:`MOST_MARKS` combining marks (Unicode category M) in a row.

    >>> piles_marks("Vi\u1ec7t"), piles_marks("e\u0323\u0302"), piles_marks("a" + "\u0301" * 10)
    (False, False, True)
    """
    run = 0
    for c in name:
        run = run + 1 if unicodedata.category(c)[0] == "M" else 0
        if run > MOST_MARKS:
            return True
    return False


def clean_name(name: Any) -> str:
    """Return a display name stripped and checked: 1 to 24 printable characters, at least one of
    them visible (:func:`is_blank`), inner runs of whitespace folded into one space.

    Raises :class:`~game.errors.ActionError` ``bad_name`` (a blank-looking name gets the
    error of an empty one; a control or format character, :data:`PRINTABLE_MESSAGE`; more than
    :data:`MOST_MARKS` marks on one character, :data:`MARKS_MESSAGE`).

    >>> clean_name("  Alice   Smith ")
    'Alice Smith'
    """
    if not isinstance(name, str):
        raise ActionError("bad_name", _("A display name is required."))
    folded = " ".join(name.split())
    if not folded or is_blank(folded) or len(folded) > NAME_MAX_CHARS:
        raise ActionError("bad_name", lazy_text(LENGTH_MESSAGE, max=NAME_MAX_CHARS))
    if not folded.isprintable():   # a control or format character (a right-to-left override...)
        raise ActionError("bad_name", PRINTABLE_MESSAGE)
    if piles_marks(folded):
        raise ActionError("bad_name", MARKS_MESSAGE)
    return folded


#: What a typed name may not start with once folded (:func:`folded`): the names the site gives its
#: own players in each of its languages (guests, the computer, a deleted player's seat).
RESERVED_PREFIXES = ("guest", "invite", "invitado", "computer", "ordinateur", "ordenador", "deletedplayer",
                     "joueursupprime", "jugadoreliminado")
RESERVED_MESSAGE = _("This name is kept for the site's own players (guests, the computer).")
ACCOUNT_NAME_MESSAGE = _("This name belongs to a player with an account: sign in to play under it, "
                         "or choose another.")


def latin_lookalike(name: str) -> str:
    """``name`` as it looks in Latin letters: compatibility forms folded (a full-width A is an A),
    accents and other combining marks dropped, and each letter of another script that is drawn like
    a Latin one (Cyrillic a, e and s, Greek omicron, Cherokee A...) written as that Latin letter, by
    Unicode's table of confusable characters (the ``confusable-homoglyphs`` package).  Letters with
    no Latin look-alike stay as they are.

    >>> latin_lookalike("Gu\u0435st"), latin_lookalike("\uff21bc\u0307"), latin_lookalike("M\u0430ri\u03bfn")
    ('Guest', 'Abc', 'Marion')
    """
    decomposed = unicodedata.normalize("NFKD", name)
    letters = []
    for c in decomposed:
        if unicodedata.combining(c):
            continue
        if not c.isascii():
            found = confusables.is_confusable(c, preferred_aliases=["latin"]) or []
            latin = [h["c"] for entry in found for h in entry["homoglyphs"] if h["c"].isascii() and len(h["c"]) == 1]
            if latin:
                c = latin[0]
        letters.append(c)
    return "".join(letters)


def folded(name: str) -> str:
    """``name`` as reserved names are compared: in Latin look-alikes (:func:`latin_lookalike`),
    without accents, case, spaces or punctuation.

    >>> folded("  Invité 4821"), folded("Computer (level 5)"), folded("Gu\u0435st 1234")
    ('invite4821', 'computerlevel5', 'guest1234')
    """
    return "".join(c for c in latin_lookalike(name) if c.isalnum()).casefold()


def is_reserved(name: str) -> bool:
    """Whether a typed ``name`` would pass for one the site gives (``Guest 4821``, ``Computer (level
    5)``, ``deleted player``, in any of the site's languages, whatever the case or spacing)."""
    return folded(name).startswith(RESERVED_PREFIXES)


def belongs_to_account(name: str) -> bool:
    """Whether ``name`` is an account's username, or looks like one: whatever the case, the accents,
    full-width forms or letters of another script drawn like Latin ones (usernames are ``A-Z a-z 0-9
    _ -`` only, :mod:`game.accounts.usernames`; compared through :func:`latin_lookalike`).  A
    database query."""
    from django.contrib.auth import get_user_model
    from django.db.models import Q

    shown = name.strip()
    return get_user_model().objects.filter(Q(username__iexact=shown)
                                           | Q(username__iexact=latin_lookalike(shown))).exists()


#: Guest numbers run from 1000 to 9999.
GUEST_FIRST, GUEST_COUNT = 1000, 9000


def guest_name(player_id: str | None) -> str:
    """The generated name of a visitor who typed none: ``"Guest 4821"`` (in the active language).

    The number comes from ``player_id`` (the session's player id, 32 hex digits), so one visitor
    is the same guest on every form, in the lobby and in every game; a random one without an id.
    """
    if player_id:
        number = GUEST_FIRST + int(hashlib.sha256(player_id.encode()).hexdigest()[:8], 16) % GUEST_COUNT
    else:
        number = GUEST_FIRST + secrets.randbelow(GUEST_COUNT)
    return str(lazy_text(_("Guest %(number)s"), number=number))


def display_name(typed: Any, player_id: str | None) -> str:
    """The one rule of every form ("Create game", "Play the computer", joining a game) and of the
    lobby's seeks: the name typed, checked by :func:`clean_name`, or, when nothing but spaces was
    typed (``""``, ``None``), the visitor's :func:`guest_name`.

    Raises :class:`~game.errors.ActionError` ``bad_name`` for a name that is too long, not
    printable or not a string, ``name_reserved`` for one that passes for the site's own
    (:func:`is_reserved`).

    >>> display_name("  Ann ", "0" * 32)
    'Ann'
    """
    if typed is None or (isinstance(typed, str) and not typed.split()):
        return guest_name(player_id)
    name = clean_name(typed)
    if is_reserved(name):
        raise ActionError("name_reserved", RESERVED_MESSAGE)
    return name
