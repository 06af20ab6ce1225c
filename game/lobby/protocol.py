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
from game.lobby.pairing import DEFAULT_POOL, POOLS, rated_twin
from game.round.protocol import Ping
from game.sockets import ProtocolError, decode_frame

__all__ = [
    "CancelSeek",
    "LobbyMessage",
    "Ping",
    "ProtocolError",
    "SeekGame",
    "WatchSeeks",
    "decode_frame",
    "parse_lobby_message",
]

#: Longest display name accepted on the socket before it is checked (game.names.clean_name allows 24).
MAX_NAME_CHARS = 100


@dataclass(frozen=True)
class SeekGame:
    """``{"type": "seek", "pool": "untimed", "name": "alice"}``: look for an opponent in a pool.

    ``pool`` is a pool id of :data:`game.lobby.pairing.POOLS` (``"untimed"`` when the
    field is left out; ``"5+0-rated"`` for a rated pool, or ``"5+0"`` with the
    optional field ``"rated": true``); ``name`` the display name to play under (blank: the
    visitor's guest name, :func:`game.names.display_name`), or ``None`` to use
    the one the session remembers (or the guest name without one).  A rated seek
    plays under its account's username whatever ``name`` says.  ``accept``: the id of a waiting seek
    of that pool to play at once (the seek list's click, :mod:`game.lobby.accepting`), or None to wait
    for the pairing.
    """

    pool: str
    name: str | None
    accept: str | None = None


@dataclass(frozen=True)
class WatchSeeks:
    """``{"type": "watch"}``: send this page the seeks waiting in every pool, and the counters, and
    keep them up to date (:mod:`game.lobby.seeklist`)."""


@dataclass(frozen=True)
class CancelSeek:
    """``{"type": "cancel"}``: stop looking; answered with ``cancelled``."""


LobbyMessage = SeekGame | CancelSeek | WatchSeeks | Ping

#: Longest seek id accepted in ``accept`` (the lobby's are 32 hex digits).
MAX_SEEK_ID_CHARS = 64


def _accepted(value: object) -> str | None:
    """The ``accept`` field of a seek: absent, or a seek id (hex digits)."""
    if value is None:
        return None
    if (not isinstance(value, str) or not 0 < len(value) <= MAX_SEEK_ID_CHARS
            or not set(value) <= set("0123456789abcdef")):
        raise ProtocolError("bad_message", lazy_text(_("'%(field)s' must be a seek id."), field="accept"))
    return value


def _rated_or_not(pool: str, rated: object) -> str:
    """The pool a seek's ``pool`` (a known id) and ``rated`` field (absent, true or false) name."""
    if rated is None:
        return pool
    if not isinstance(rated, bool):
        raise ProtocolError("bad_message", lazy_text(_("'%(field)s' must be true or false."), field="rated"))
    if rated and not POOLS[pool].rated:
        twin = rated_twin(pool)
        if twin is None:
            raise ProtocolError("unrated_pool", _("Untimed games are not rated: choose a time control for "
                                                  "a rated game."))
        return twin
    if not rated and POOLS[pool].rated:
        raise ProtocolError("bad_message", lazy_text(_("The pool '%(pool)s' is rated; leave out 'rated' or "
                                                       "choose a casual pool."), pool=pool))
    return pool


def parse_lobby_message(data: dict) -> LobbyMessage:
    """Turn a decoded JSON object into a typed lobby message.

    Raises :class:`~game.sockets.ProtocolError`: ``unknown_type`` for a
    missing or unknown ``type``, ``bad_message`` for a mistyped field (``rated``
    not a boolean, or false with a rated pool), ``unknown_pool`` for a pool id that
    is not one of :data:`game.lobby.pairing.POOLS` (and ``bad_message`` for an ``accept`` that is no
    seek id), ``unrated_pool`` for ``rated``
    true with a pool that has no rated twin (the untimed ones).

    >>> parse_lobby_message({"type": "seek", "name": "alice"})
    SeekGame(pool='untimed', name='alice', accept=None)
    >>> parse_lobby_message({"type": "seek", "pool": "5+0", "rated": True}).pool
    '5+0-rated'
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
        pool = _rated_or_not(pool, data.get("rated"))
        name = data.get("name")
        if name is not None:
            if not isinstance(name, str):
                raise ProtocolError("bad_message", lazy_text(_("'%(field)s' must be a string."), field="name"))
            if len(name) > MAX_NAME_CHARS:
                raise ProtocolError("bad_message", lazy_text(_("'%(field)s' is longer than %(max)s characters."),
                                                             field="name", max=MAX_NAME_CHARS))
            if not name.strip():
                name = None
        return SeekGame(pool=pool, name=name, accept=_accepted(data.get("accept")))
    if kind == "watch":
        return WatchSeeks()
    if kind == "cancel":
        return CancelSeek()
    if kind == "ping":
        return Ping()
    shown = kind if isinstance(kind, str) and len(kind) <= 20 else "?"
    raise ProtocolError("unknown_type", lazy_text(_("Unknown message type '%(type)s'."), type=shown))
