"""The lobby socket's client messages, parsed at the edge into typed values.

Frames are decoded as on the game socket (:func:`game.sockets.decode_frame`:
JSON text objects of at most 2,048 bytes) and turned into one of the message
classes below by :func:`parse_lobby_message`, or refused with a
:class:`~game.sockets.ProtocolError` carrying an error code.  The protocol is
in ``docs/protocol.md`` ("Lobby socket").
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_lazy as _

from game.i18n import lazy_text
from game.lobby.pairing import DEFAULT_POOL, POOLS
from game.round.protocol import Ping
from game.sockets import ProtocolError, decode_frame

__all__ = [
    "CancelSeek",
    "LobbyMessage",
    "Ping",
    "ProtocolError",
    "SeekGame",
    "decode_frame",
    "parse_lobby_message",
]

#: Longest display name accepted on the socket before it is checked (game.names.clean_name allows 24).
MAX_NAME_CHARS = 100


@dataclass(frozen=True)
class SeekGame:
    """``{"type": "seek", "pool": "untimed", "name": "alice"}``: look for an opponent in a pool.

    ``pool`` is a pool id of :data:`game.lobby.pairing.POOLS` (``"untimed"`` when the
    field is left out); ``name`` the display name to play under, or ``None``
    to use the one the session remembers.
    """

    pool: str
    name: str | None


@dataclass(frozen=True)
class CancelSeek:
    """``{"type": "cancel"}``: stop looking; answered with ``cancelled``."""


LobbyMessage = SeekGame | CancelSeek | Ping


def parse_lobby_message(data: dict) -> LobbyMessage:
    """Turn a decoded JSON object into a typed lobby message.

    Raises :class:`~game.sockets.ProtocolError`: ``unknown_type`` for a
    missing or unknown ``type``, ``bad_message`` for a mistyped field,
    ``unknown_pool`` for a pool id that is not one of :data:`game.lobby.pairing.POOLS`.

    >>> parse_lobby_message({"type": "seek", "name": "alice"})
    SeekGame(pool='untimed', name='alice')
    >>> parse_lobby_message({"type": "cancel"})
    CancelSeek()
    """
    kind = data.get("type")
    if kind == "seek":
        pool = data.get("pool", DEFAULT_POOL)
        if not isinstance(pool, str):
            raise ProtocolError("bad_message", lazy_text(_("'%(field)s' must be a string."), field="pool"))
        if pool not in POOLS:
            shown = pool if len(pool) <= 20 and pool.isprintable() else "?"
            raise ProtocolError("unknown_pool", lazy_text(_("There is no pool '%(pool)s'; choose one of: %(pools)s."),
                                                          pool=shown, pools=", ".join(POOLS)))
        name = data.get("name")
        if name is not None:
            if not isinstance(name, str):
                raise ProtocolError("bad_message", lazy_text(_("'%(field)s' must be a string."), field="name"))
            if len(name) > MAX_NAME_CHARS:
                raise ProtocolError("bad_message", lazy_text(_("'%(field)s' is longer than %(max)s characters."),
                                                             field="name", max=MAX_NAME_CHARS))
            if not name.strip():
                name = None
        return SeekGame(pool=pool, name=name)
    if kind == "cancel":
        return CancelSeek()
    if kind == "ping":
        return Ping()
    shown = kind if isinstance(kind, str) and len(kind) <= 20 else "?"
    raise ProtocolError("unknown_type", lazy_text(_("Unknown message type '%(type)s'."), type=shown))
