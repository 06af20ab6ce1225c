"""The game socket's server-to-client messages: typed, each with its audience, encoded in one place.

Every game event carries ``v``, the game's version after it.  The shapes are
documented in ``docs/protocol.md`` and declared in :data:`SCHEMAS`; with the
setting ``EVENT_SCHEMA_CHECK`` on (the test settings) every event made and
every message encoded by :func:`encode` is checked against its schema, so an
event that does not match fails the test that made it
(``tests/round/test_events.py`` checks the schemas against the protocol
document).

An event goes to an :class:`Audience`: some of the roles ``"B"``, ``"W"``
(the players' sockets) and ``"S"`` (the spectators').  A game event's
``state`` carries ``legal`` (the legal moves) only in the copy sent to the
seat of the side to move; everyone else gets the same event without it.

``state`` (part of every game event and of the snapshot)::

    {"id": str, "status": "waiting"|"active"|"finished"|"aborted",
     "fen": str (PDN FEN), "turn": "B"|"W", "ply": int,
     "legal": [str, ...]  (full notation; only while the game is active, and only to the side to move),
     "rated": bool (the game changes both players' ratings when it finishes),
     "unrated": "browser"|"sign_up"|None (why a rated game's end changed no ratings: its players'
                accounts are linked, :func:`game.ratings.links.link`; None otherwise),
     "seats": {"B": {"name": str|None}, "W": {"name": str|None}}  (plus "computer": level 1-9
              in the seat the computer holds; in a rated game once both seats are taken,
              "rating": int (points when it started) and "provisional": bool, and "diff": int
              (the points its end gave or took) once it finished),
     "result": "1-0"|"0-1"|"1/2-1/2"|"*", "termination": str|None, "winner": "B"|"W"|None,
     "reason": str|None  (human text, e.g. "White has no legal move"),
     "no_progress": int (plies since the last capture or man move),
     "draw_offer": "B"|"W"|None (the seat with a pending draw offer),
     "draw_allowed_at": {"B": int, "W": int} (the ply from which each seat may offer a draw),
     "rematch_offer": "B"|"W"|None, "next_game": str|None (the rematch's id once agreed),
     "takeback_offer": "B"|"W"|None (the seat proposing to take back its last move),
     "takeback_allowed_at": {"B": int, "W": int} (the ply from which each seat may propose again),
     "clock": :class:`game.clock.ClockState` (None when untimed),
     "claim_after_s": int|None (seconds the player to move must be away before the opponent may
                      claim the win or a draw; None in correspondence games)}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, ClassVar

import orjson
from django.conf import settings
from django.utils import timezone

from game import rules
from game.clock import claim_after_s
from game.models import Game
from game.players import seat_info
from game.ratings.games import seat_ratings
from game.round import outages
from game.rules import Color

#: The roles of the sockets of a game: the two seats and the spectators.
ROLES = ("B", "W", "S")


@dataclass(frozen=True)
class Audience:
    """Who receives a message: a set of roles (``"B"``, ``"W"``, ``"S"``).

    >>> EVERYONE.roles == frozenset("BWS"), "S" in SEATS, "W" in seat(Color.WHITE)
    (True, False, True)
    >>> sorted(all_but(Color.BLACK).roles)
    ['S', 'W']
    """

    roles: frozenset[str]

    def __contains__(self, role: object) -> bool:
        return role in self.roles

    @property
    def key(self) -> str:
        """The roles as text, in :data:`ROLES` order (``"BWS"``, ``"W"``)."""
        return "".join(r for r in ROLES if r in self.roles)


EVERYONE = Audience(frozenset(ROLES))
SEATS = Audience(frozenset("BW"))
SPECTATORS = Audience(frozenset("S"))


def seat(side: Color) -> Audience:
    """The sockets of one seat (every tab of that player)."""
    return Audience(frozenset(side.value))


def all_but(side: Color) -> Audience:
    """Every socket of the game except those of ``side``'s seat."""
    return Audience(EVERYONE.roles - {side.value})


def outcome_of(game: Game) -> rules.Outcome | None:
    """The stored end of ``game`` as a rules :class:`~game.rules.Outcome`, or None while it goes on."""
    if not game.termination:
        return None
    winner = {"1-0": Color.BLACK, "0-1": Color.WHITE}.get(game.result)
    return rules.Outcome(rules.Termination(game.termination), winner)


def state(game: Game, record: rules.Game, now: datetime | None = None) -> dict[str, Any]:
    """The state of ``game`` as of ``now`` (default the current time), with the legal moves while
    the game is active (see the module docstring); ``record`` is its rebuilt rules record.
    :class:`GameEvent` leaves ``legal`` out of every copy but the side to move's."""
    outcome = outcome_of(game)
    black_rating, white_rating = seat_ratings(game)
    legal = ({"legal": [str(m) for m in record.position.legal_moves()]}
             if game.status == Game.Status.ACTIVE else {})
    return {
        "id": game.id,
        "status": game.status,
        "fen": game.fen,
        "turn": record.position.turn.value,
        "ply": game.ply,
        **legal,
        "rated": game.rated,
        "unrated": game.unrated_reason or None,
        "seats": {
            "B": {"name": game.black_name or None, **seat_info(game.black_player), **black_rating},
            "W": {"name": game.white_name or None, **seat_info(game.white_player), **white_rating},
        },
        "result": game.result,
        "termination": game.termination or None,
        "winner": outcome.winner.value if outcome and outcome.winner else None,
        "reason": outcome.reason if outcome else None,
        "no_progress": record.no_progress_plies,
        "draw_offer": game.draw_offer or None,
        "draw_allowed_at": {"B": game.black_draw_ply, "W": game.white_draw_ply},
        "rematch_offer": game.rematch_offer or None,
        "next_game": game.next_game_id,
        "takeback_offer": game.takeback_offer or None,
        "takeback_allowed_at": {"B": game.black_takeback_ply, "W": game.white_takeback_ply},
        "clock": outages.clock(game, read=False).state(now or timezone.now()),
        "claim_after_s": claim_after_s(game.control, settings.CLAIM_AFTER_LIVE_S,
                                       settings.CLAIM_AFTER_UNTIMED_S),
    }


def _without_legal(payload: dict[str, Any]) -> dict[str, Any]:
    if "legal" not in payload["state"]:
        return payload
    public = dict(payload)
    public["state"] = {k: v for k, v in payload["state"].items() if k != "legal"}
    return public


@dataclass(frozen=True)
class Event(Mapping[str, Any]):
    """A message to some sockets of a game.  ``type`` names it on the wire.  It reads as the JSON
    object of its full copy (``event["v"]``, ``event["state"]["legal"]``)."""

    type: ClassVar[str]

    def __post_init__(self) -> None:
        if getattr(settings, "EVENT_SCHEMA_CHECK", False):
            for _, payload in self.deliveries():
                validate(payload)

    def __getitem__(self, key: str) -> Any:
        return self.payload()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.payload())

    def __len__(self) -> int:
        return len(self.payload())

    def payload(self) -> dict[str, Any]:
        """The message as sent, for every recipient alike (a JSON object)."""
        return {"type": self.type, **{f.name: getattr(self, f.name) for f in fields(self)}}

    def deliveries(self) -> list[tuple[Audience, dict[str, Any]]]:
        """``[(audience, payload)]``: what each audience receives (every role at most once)."""
        return [(EVERYONE, self.payload())]

    def for_role(self, role: str) -> dict[str, Any] | None:
        """What a socket of ``role`` receives, or None when the event is not for it."""
        for audience, payload in self.deliveries():
            if role in audience:
                return payload
        return None


@dataclass(frozen=True)
class GameEvent(Event):
    """An event that changes the game: it carries ``v`` and the ``state`` after it.  The side to
    move's seat gets the legal moves; everyone else the same event without them."""

    v: int
    state: dict[str, Any]

    def deliveries(self) -> list[tuple[Audience, dict[str, Any]]]:
        payload = self.payload()
        public = _without_legal(payload)
        if self.state["status"] != "active":
            return [(EVERYONE, public)]
        side = Color(self.state["turn"])
        return [(seat(side), payload), (all_but(side), public)]


@dataclass(frozen=True)
class MoveEvent(GameEvent):
    """``move``: ply number ``ply`` was ``move`` (full notation)."""

    type: ClassVar[str] = "move"
    ply: int = 0
    move: str = ""


@dataclass(frozen=True)
class SeatsEvent(GameEvent):
    """``seats``: a seat was taken (the game may have started)."""

    type: ClassVar[str] = "seats"


#: The names of ``update`` events: what happened besides a move.
UPDATES = ("draw_offered", "draw_declined", "draw_accepted", "resigned", "aborted",
           "rematch_offered", "rematch_declined", "rematch_started", "flagged", "claimed_win",
           "claimed_draw", "takeback_offered", "takeback_declined", "berserk")


@dataclass(frozen=True)
class UpdateEvent(GameEvent):
    """``update``: one of :data:`UPDATES` happened, ``by`` the seat that acted (None: the clock)."""

    type: ClassVar[str] = "update"
    what: str = ""
    by: str | None = None

    def __post_init__(self) -> None:
        if self.what not in UPDATES:
            raise ValueError(f"unknown update {self.what!r}")
        super().__post_init__()


@dataclass(frozen=True)
class TakebackEvent(GameEvent):
    """``takeback``: the last ``plies`` plies (1 or 2) were taken back at the proposal of seat
    ``by``; ``state`` is the position before them (``state.ply`` plies remain)."""

    type: ClassVar[str] = "takeback"
    by: str = "B"
    plies: int = 1


@dataclass(frozen=True)
class Snapshot(Event):
    """``snapshot``: everything one viewer needs, ``you`` its seat (None for a spectator).  Sent to
    one socket; ``legal`` only when ``you`` is the side to move."""

    type: ClassVar[str] = "snapshot"
    v: int
    state: dict[str, Any]
    start_fen: str
    moves: list[str] = field(default_factory=list)
    fens: list[str] = field(default_factory=list)
    you: str | None = None
    #: The last lines of each chat room the viewer may read (:func:`game.round.chat.history`).
    chat: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: The viewer's own conditional moves in a correspondence game (:mod:`game.round.forecasts`:
    #: lines of full-notation moves, ``[]`` when none); None (left out) for spectators and other games.
    forecast: list[list[str]] | None = None

    def payload(self) -> dict[str, Any]:
        payload = super().payload()
        if self.forecast is None:
            del payload["forecast"]
        if self.you != self.state["turn"] or self.state["status"] != "active":
            return _without_legal(payload)
        return payload


@dataclass(frozen=True)
class AudienceEvent(Event):
    """``audience`` (unversioned): how many spectators, which players have the page open, and the
    game's version when the notice was made (``game_v``: a page behind it missed an event)."""

    type: ClassVar[str] = "audience"
    spectators: int
    online: dict[str, bool]
    game_v: int | None


@dataclass(frozen=True)
class ChatEvent(Event):
    """``chat`` (unversioned): one line of a chat room, to that room's readers ``to`` only
    (:mod:`game.round.chat`).  ``line`` is ``{"id", "room", "seat", "name", "text"}``."""

    type: ClassVar[str] = "chat"
    line: dict[str, Any]
    to: Audience = SEATS

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "line": self.line}

    def deliveries(self) -> list[tuple[Audience, dict[str, Any]]]:
        return [(self.to, self.payload())]


@dataclass(frozen=True)
class ForecastEvent(Event):
    """``forecast`` (unversioned): the conditional moves seat ``to`` holds now (``lines``, ``[]``
    when none; :mod:`game.round.forecasts`), from the position after ply ``ply``.  To that
    seat's sockets only: nobody else, the opponent least of all, sees a forecast."""

    type: ClassVar[str] = "forecast"
    lines: list[list[str]]
    ply: int
    to: Color = Color.BLACK

    def payload(self) -> dict[str, Any]:
        return {"type": self.type, "lines": [list(line) for line in self.lines], "ply": self.ply}

    def deliveries(self) -> list[tuple[Audience, dict[str, Any]]]:
        return [(seat(self.to), self.payload())]


def move_event(game: Game, record: rules.Game, move: rules.Move) -> MoveEvent:
    """The ``move`` event of the move just stored in ``game``."""
    return MoveEvent(v=game.version, state=state(game, record), ply=game.ply, move=str(move))


def seats_event(game: Game, record: rules.Game) -> SeatsEvent:
    """The ``seats`` event after a seat of ``game`` was taken."""
    return SeatsEvent(v=game.version, state=state(game, record))


def update_event(game: Game, record: rules.Game, what: str, by: Color | None) -> UpdateEvent:
    """The ``update`` event ``what`` (one of :data:`UPDATES`) of ``game``, done by seat ``by``.
    Raises ValueError for another ``what``."""
    return UpdateEvent(v=game.version, state=state(game, record), what=what,
                       by=by.value if by else None)


def takeback_event(game: Game, record: rules.Game, by: Color, plies: int) -> TakebackEvent:
    """The ``takeback`` event after ``plies`` plies of ``game`` were taken back at ``by``'s proposal;
    ``record`` is the rules' record of the moves that remain."""
    return TakebackEvent(v=game.version, state=state(game, record), by=by.value, plies=plies)


def snapshot(game: Game, record: rules.Game, moves: list[str], fens: list[str],
             you: Color | None, chat: dict[str, list[dict[str, Any]]] | None = None,
             forecast: list[list[str]] | None = None) -> Snapshot:
    """The ``snapshot`` for one viewer (``you``: its seat, None for a spectator), with the last
    ``chat`` lines of the rooms it may read (``{room: [line, ...]}``, oldest first) and, for a
    seat in a correspondence game, its own ``forecast`` (lines of moves; None leaves it out)."""
    return Snapshot(v=game.version, state=state(game, record), start_fen=game.start_fen,
                    moves=list(moves), fens=list(fens), you=you.value if you else None,
                    chat=dict(chat or {}), forecast=forecast)


# --- Schemas and encoding -----------------------------------------------------------------------

#: One seat of a state: its name, the computer's level, a rated game's ratings.
SEAT_SCHEMA: dict[str, Any] = {"name": (str, None), "computer?": int, "deleted?": bool, "rating?": int,
                               "provisional?": bool, "diff?": int}

#: A field's type: a Python type, a tuple of them (any of), a dict (an object with exactly those
#: fields), a list of one spec (a list of such values), or a string of allowed values ``"a|b"``.
STATE_SCHEMA: dict[str, Any] = {
    "id": str, "status": "waiting|active|finished|aborted", "fen": str, "turn": "B|W", "ply": int,
    "legal?": [str],
    "rated": bool, "unrated": ("browser|sign_up", None),
    "seats": {"B": SEAT_SCHEMA, "W": SEAT_SCHEMA},
    "result": "1-0|0-1|1/2-1/2|*", "termination": (str, None), "winner": ("B|W", None),
    "reason": (str, None), "no_progress": int, "draw_offer": ("B|W", None),
    "draw_allowed_at": {"B": int, "W": int}, "rematch_offer": ("B|W", None),
    "next_game": (str, None),
    "takeback_offer": ("B|W", None), "takeback_allowed_at": {"B": int, "W": int},
    "clock": ({"control": str, "label": str, "B": int, "W": int, "running": ("B|W", None),
               "first_move_ms": (int, None)}, None),
    "claim_after_s": (int, None),
}

#: One chat line (:func:`game.round.chat.line_payload`).
CHAT_LINE_SCHEMA: dict[str, Any] = {"id": int, "room": "players|spectators", "seat": ("B|W", None),
                                    "name": str, "text": str}

#: Every message the game socket sends, by ``type``: its fields (``name?``: may be left out).
SCHEMAS: dict[str, dict[str, Any]] = {
    "snapshot": {"v": int, "state": STATE_SCHEMA, "start_fen": str, "moves": [str], "fens": [str],
                 "you": ("B|W", None),
                 "chat": {"players?": [CHAT_LINE_SCHEMA], "spectators?": [CHAT_LINE_SCHEMA]},
                 "forecast?": [[str]]},
    "forecast": {"lines": [[str]], "ply": int},
    "chat": {"line": CHAT_LINE_SCHEMA},
    "move": {"v": int, "ply": int, "move": str, "state": STATE_SCHEMA},
    "seats": {"v": int, "state": STATE_SCHEMA},
    "update": {"v": int, "what": "|".join(UPDATES), "by": ("B|W", None), "state": STATE_SCHEMA},
    "takeback": {"v": int, "by": "B|W", "plies": int, "state": STATE_SCHEMA},
    "audience": {"spectators": int, "online": {"B": bool, "W": bool}, "game_v": (int, None)},
    "error": {"code": str, "message": str, "candidates?": [str]},
    "pong": {},
    "synced": {"v": int},
    "link": {"up": bool},
}


class SchemaError(ValueError):
    """A message that does not match its schema in :data:`SCHEMAS`."""


def _check(value: Any, spec: Any, where: str) -> None:
    if isinstance(spec, tuple):
        errors = []
        for option in spec:
            try:
                _check(value, option, where)
                return
            except SchemaError as exc:
                errors.append(str(exc))
        raise SchemaError("; ".join(errors))
    if spec is None:
        if value is not None:
            raise SchemaError(f"{where}: expected null, got {value!r}")
    elif isinstance(spec, str):
        if value not in spec.split("|"):
            raise SchemaError(f"{where}: {value!r} is not one of {spec}")
    elif isinstance(spec, list):
        if not isinstance(value, list):
            raise SchemaError(f"{where}: expected a list, got {value!r}")
        for index, item in enumerate(value):
            _check(item, spec[0], f"{where}[{index}]")
    elif isinstance(spec, dict):
        if not isinstance(value, dict):
            raise SchemaError(f"{where}: expected an object, got {value!r}")
        _check_fields(value, spec, where)
    elif spec is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SchemaError(f"{where}: expected an integer, got {value!r}")
    elif not isinstance(value, spec):
        raise SchemaError(f"{where}: expected {spec.__name__}, got {value!r}")


def _check_fields(value: dict[str, Any], spec: dict[str, Any], where: str) -> None:
    names = {name.rstrip("?") for name in spec}
    extra = set(value) - names
    if extra:
        raise SchemaError(f"{where}: unexpected fields {sorted(extra)}")
    for name, sub in spec.items():
        key = name.rstrip("?")
        if key not in value:
            if not name.endswith("?"):
                raise SchemaError(f"{where}: missing field {key!r}")
            continue
        _check(value[key], sub, f"{where}.{key}")


def validate(message: dict[str, Any]) -> None:
    """Check ``message`` (a JSON object as sent) against :data:`SCHEMAS`.  Raises :class:`SchemaError`."""
    kind = message.get("type")
    if kind not in SCHEMAS:
        raise SchemaError(f"unknown message type {kind!r}")
    _check_fields({k: v for k, v in message.items() if k != "type"}, SCHEMAS[kind], kind)


def encode(message: dict[str, Any]) -> str:
    """``message`` as the compact JSON text a socket is sent (checked against its schema when
    ``EVENT_SCHEMA_CHECK`` is on).  Raises :class:`SchemaError` then."""
    if getattr(settings, "EVENT_SCHEMA_CHECK", False):
        validate(message)
    return orjson.dumps(message).decode()


def follow_of(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """``{"clock", "status"}`` of a state, for the sockets' clock timers; None without a state."""
    return {"clock": state.get("clock"), "status": state.get("status")} if state else None


def publication(event: Event) -> str:
    """``event`` as published to every process of the game (:mod:`game.round.fanout`): lines of
    text, the first the JSON of ``{"clock", "status"}`` the sockets follow (``null`` without a
    state), then for each audience its roles (:attr:`Audience.key`) and the JSON of its copy, each
    copy encoded once.  JSON text holds no raw newline, so the lines split back exactly
    (:func:`read_publication`)."""
    lines = [orjson.dumps(follow_of(getattr(event, "state", None))).decode()]
    for audience, payload in event.deliveries():
        lines += [audience.key, encode(payload)]
    return "\n".join(lines)


def read_publication(text: str) -> tuple[dict[str, Any] | None, list[tuple[str, str]]]:
    """A :func:`publication` read back: ``(follow, [(roles, JSON text), ...])``."""
    lines = text.split("\n")
    return json.loads(lines[0]), list(zip(lines[1::2], lines[2::2], strict=True))


def publications(events: Iterable[Event]) -> list[str]:
    """:func:`publication` of each of ``events``, in order."""
    return [publication(event) for event in events]
