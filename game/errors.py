"""The refusal every action of a game may answer with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise


class ActionError(Exception):
    """A refused action: nothing was changed.

    ``code`` is the machine-readable error code (``docs/protocol.md``, "Errors"),
    ``message`` the human text, ``extra`` more fields for the client (for an
    ambiguous move, ``candidates``).  Sent to the one socket that asked, as
    :meth:`as_event`.  The code is always English; the message is usually lazy
    (``gettext_lazy``, :func:`game.i18n.lazy_text`) and becomes words in the
    language of the socket or page that sends it (:func:`game.i18n.resolved`).
    """

    def __init__(self, code: str, message: str | StrPromise, **extra: Any):
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def as_event(self) -> dict[str, Any]:
        """The ``error`` message: ``{"type": "error", "code", "message", **extra}``."""
        return {"type": "error", "code": self.code, "message": self.message, **self.extra}


def no_such_game() -> ActionError:
    """The refusal ``no_such_game``."""
    return ActionError("no_such_game", _("There is no such game."))


def busy() -> ActionError:
    """The refusal ``busy``: the game's row stayed held elsewhere for longer than the site waits
    (``DATABASE_LOCK_TIMEOUT_MS``)."""
    return ActionError("busy", _("The game is busy right now; nothing was changed. Try again in a moment."))
