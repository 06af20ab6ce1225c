"""Display names, as players type them on every form and in the lobby."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _

from game.i18n import lazy_text
from game.round.errors import ActionError

#: The longest display name, in characters.
NAME_MAX_CHARS = 24


def clean_name(name: Any) -> str:
    """Return a display name stripped and checked: 1 to 24 printable characters, inner runs of
    whitespace folded into one space.

    Raises :class:`~game.round.errors.ActionError` ``bad_name``.

    >>> clean_name("  Alice   Smith ")
    'Alice Smith'
    """
    if not isinstance(name, str):
        raise ActionError("bad_name", _("A display name is required."))
    folded = " ".join(name.split())
    if not folded or len(folded) > NAME_MAX_CHARS or not folded.isprintable():
        raise ActionError("bad_name", lazy_text(_("Choose a display name of 1 to %(max)s characters."),
                                                max=NAME_MAX_CHARS))
    return folded
