"""The live protocol's client messages, parsed at the edge into typed values, and its constants.

Every frame a browser sends on the game socket is a JSON object with a
``type``.  :func:`parse_client_message` turns it into one of the message
classes below or raises :class:`ProtocolError` with an error code; no raw
dict travels further in.  The close codes, the ping interval and the other
values both ends must agree on are defined here once; the game page is given
them in its config (:func:`page_constants`).  The full protocol, both ways, is
in ``docs/protocol.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from game import rules
from game.i18n import lazy_text
from game.round import chat, clock
from game.sockets import MAX_FRAME_BYTES, ProtocolError, decode_frame

__all__ = [
    "CLOSE_NO_SUCH_GAME",
    "CLOSE_UNAVAILABLE",
    "CLOSE_TOO_MANY_SOCKETS",
    "CLOSE_SILENT",
    "CLOSE_SEAT_MOVED",
    "PING_EVERY_S",
    "CHAT_ERROR_PREFIX",
    "FORECAST_ERROR_PREFIX",
    "SHARED_REFUSALS",
    "ACTIONS",
    "MAX_FRAME_BYTES",
    "Action",
    "Chat",
    "ClientMessage",
    "ForecastLines",
    "ClockCheck",
    "Ping",
    "PlayMove",
    "ProtocolError",
    "Sync",
    "decode_frame",
    "page_constants",
    "parse_client_message",
]

#: Close code sent when the game in the URL does not exist.
CLOSE_NO_SUCH_GAME = 4404
#: Close code sent when the game's events cannot be followed (Redis unreachable): reconnect.
CLOSE_UNAVAILABLE = 4503
#: Close code sent when the session or the client address already holds as many game sockets as it
#: may (``GAME_SOCKETS_PER_SESSION``, ``GAME_SOCKETS_PER_ADDRESS``): close another tab first.
CLOSE_TOO_MANY_SOCKETS = 4429
#: Close code sent to a socket the page has sent nothing on for ``game.round.socket.SILENT_AFTER_S``
#: (a network gone without a close frame; the page pings every :data:`PING_EVERY_S`): it has left
#: the game's presence already.
CLOSE_SILENT = 4408
#: Close code sent to a seat's socket whose session no longer holds the seat: it was handed to the
#: browser's account at a log-in in another tab (game.round.handover), or its account was deleted;
#: and to a socket whose session's log-in ended (log-out, password changed: ``session_ended``).
#: The page reconnects with the browser's cookie as it is now, and so as the seat, or a spectator.
CLOSE_SEAT_MOVED = 4409

#: Seconds between two of the page's ``ping`` messages: well within the silence after which the
#: server takes a socket for gone (``game.round.socket.SILENT_AFTER_S``).
PING_EVERY_S = 3.0

#: Error codes refusing a chat line begin with this (``chat_too_long``, ...: ``docs/protocol.md``).
CHAT_ERROR_PREFIX = "chat_"
#: Error codes refusing conditional moves begin with this (``forecast_illegal``, ...).
FORECAST_ERROR_PREFIX = "forecast_"
#: Refusals any message of a seat may get, whatever it asked: the page files them under the message
#: it is waiting on (its conditional moves, while their answer is due).
SHARED_REFUSALS = ("bad_message", "too_large", "not_seated", "not_started", "game_over", "busy", "unavailable")

#: Longest move text accepted, in characters (a king's longest route is far shorter).
MAX_MOVE_CHARS = 80


@dataclass(frozen=True)
class PlayMove:
    """``{"type": "move", "move": "27x18x11", "v": 14}``: play a move.

    ``move`` is the move text (full or unambiguous short form, ``docs/rules.md``);
    ``v`` the version of the last event the client has applied.
    """

    move: str
    v: int


@dataclass(frozen=True)
class Sync:
    """``{"type": "sync"}``: ask for a fresh snapshot; ``{"type": "sync", "v": 14}``: unless the
    game is still at version ``v`` (then ``{"type": "synced", "v": 14}`` is enough).

    ``v`` is None when the client sent none.
    """

    v: int | None = None


@dataclass(frozen=True)
class Ping:
    """``{"type": "ping"}``: keep-alive; answered with ``{"type": "pong"}``."""


@dataclass(frozen=True)
class ClockCheck:
    """``{"type": "clock_check"}``: a viewer's clock reached zero; the server checks its own."""


#: Field-less game actions a seated player may send.
ACTIONS = ("draw_offer", "draw_accept", "draw_decline", "resign", "abort",
           "rematch_offer", "rematch_accept", "rematch_decline", "claim_win", "claim_draw",
           "takeback_propose", "takeback_accept", "takeback_decline")


@dataclass(frozen=True)
class Action:
    """``{"type": <one of ACTIONS>}``: a draw offer or answer, resignation, abort, rematch step,
    claim or takeback step."""

    name: str


#: The chat rooms of a game (:mod:`game.round.chat`).
CHAT_ROOMS = chat.ROOMS


@dataclass(frozen=True)
class Chat:
    """``{"type": "chat", "room": "players", "text": "Good luck!"}``: write a line in a chat room
    (``players`` or ``spectators``); the text is checked by :func:`game.round.chat.clean_text`."""

    room: str
    text: str


@dataclass(frozen=True)
class ForecastLines:
    """``{"type": "forecast", "lines": [["22-18", "15x22"], ...]}``: store one's conditional moves in
    a correspondence game (each line a list of move texts, the opponent's next move first; ``[]``
    clears them), checked by :func:`game.correspondence.forecasts.save`."""

    lines: list[list[str]]


ClientMessage = PlayMove | Sync | Ping | ClockCheck | Action | Chat | ForecastLines


def _int_field(data: dict[str, Any], name: str) -> int:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError("bad_message", lazy_text(_("'%(field)s' must be an integer."), field=name))
    if not 0 <= value < 2**31:
        raise ProtocolError("bad_message", lazy_text(_("'%(field)s' is out of range."), field=name))
    return value


def _str_field(data: dict[str, Any], name: str, max_chars: int) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise ProtocolError("bad_message", lazy_text(_("'%(field)s' must be a string."), field=name))
    if len(value) > max_chars:
        raise ProtocolError("bad_message", lazy_text(_("'%(field)s' is longer than %(max)s characters."),
                                                     field=name, max=max_chars))
    return value


def _lines_field(data: dict[str, Any]) -> list[list[str]]:
    lines = data.get("lines")
    if not isinstance(lines, list) or not all(isinstance(line, list) for line in lines):
        raise ProtocolError("bad_message", _("'lines' must be a list of lists of moves."))
    for line in lines:
        for move in line:
            if not isinstance(move, str) or len(move) > MAX_MOVE_CHARS:
                raise ProtocolError("bad_message", lazy_text(
                    _("Each move in 'lines' must be a string of at most %(max)s characters."),
                    max=MAX_MOVE_CHARS))
    return [list(line) for line in lines]


def parse_client_message(data: dict[str, Any]) -> ClientMessage:
    """Turn a decoded JSON object into a typed client message.

    Raises :class:`ProtocolError` with ``unknown_type`` for a missing or
    unknown ``type`` and ``bad_message`` for missing or mistyped fields.

    >>> parse_client_message({"type": "move", "move": "11-15", "v": 0})
    PlayMove(move='11-15', v=0)
    """
    kind = data.get("type")
    if kind == "move":
        return PlayMove(move=_str_field(data, "move", MAX_MOVE_CHARS), v=_int_field(data, "v"))
    if kind == "sync":
        return Sync(v=_int_field(data, "v") if "v" in data else None)
    if kind == "ping":
        return Ping()
    if kind == "clock_check":
        return ClockCheck()
    if kind in ACTIONS:
        return Action(kind)
    if kind == "chat":
        room = data.get("room")
        if room not in CHAT_ROOMS:
            raise ProtocolError("bad_message", _("'room' must be 'players' or 'spectators'."))
        return Chat(room=room, text=_str_field(data, "text", MAX_FRAME_BYTES))
    if kind == "forecast":
        return ForecastLines(lines=_lines_field(data))
    shown = kind if isinstance(kind, str) and len(kind) <= 20 else "?"
    raise ProtocolError("unknown_type", lazy_text(_("Unknown message type '%(type)s'."), type=shown))


def page_constants() -> dict[str, Any]:
    """The protocol's constants the game page works with, for its config (``game-config``, passed by
    :func:`game.views._render_game` through ``json_script``): the page reads them from there and
    writes none of them again.  Keys in the page's camelCase, values plain JSON:

    - ``closeCodes``: ``{"noSuchGame", "unavailable", "tooManySockets", "silent", "seatMoved"}``,
      each the websocket close code (an integer) of the ``CLOSE_*`` constant of that name;
    - ``pingEveryMs``: milliseconds between two ``ping`` messages (an integer, :data:`PING_EVERY_S`);
    - ``actions``: the field-less game actions a seat may send, a list of message types (:data:`ACTIONS`);
    - ``chatRooms``: the chat rooms, a list of names (:data:`CHAT_ROOMS`);
    - ``chatMaxChars``: the longest chat line, in characters (code points once trimmed: an integer);
    - ``firstMoveS``: seconds a live timed game waits for each side's first move (an integer);
    - ``noProgressLimit``: plies without a capture or a man move that draw the game (an integer);
    - ``errors``: ``{"chatPrefix", "forecastPrefix"}``, the prefixes of the chat's and of the
      conditional moves' error codes (strings), and ``"shared"``, :data:`SHARED_REFUSALS` (a list).

    >>> page_constants()["closeCodes"]["noSuchGame"], page_constants()["pingEveryMs"]
    (4404, 3000)
    """
    return {
        "closeCodes": {
            "noSuchGame": CLOSE_NO_SUCH_GAME,
            "unavailable": CLOSE_UNAVAILABLE,
            "tooManySockets": CLOSE_TOO_MANY_SOCKETS,
            "silent": CLOSE_SILENT,
            "seatMoved": CLOSE_SEAT_MOVED,
        },
        "pingEveryMs": round(PING_EVERY_S * 1000),
        "actions": list(ACTIONS),
        "chatRooms": list(CHAT_ROOMS),
        "chatMaxChars": chat.MAX_CHARS,
        "firstMoveS": clock.FIRST_MOVE_S,
        "noProgressLimit": rules.FORTY_MOVE_PLIES,
        "errors": {
            "chatPrefix": CHAT_ERROR_PREFIX,
            "forecastPrefix": FORECAST_ERROR_PREFIX,
            "shared": list(SHARED_REFUSALS),
        },
    }
