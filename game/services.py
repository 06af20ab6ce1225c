"""Every action on a game, each one database transaction.

Views and consumers call these functions and nothing else decides anything.
Each action checks (seat, turn, version, legality), changes the stored game
under a row lock with a conditional update, and returns the events to publish
once the transaction has committed.  A refused action raises
:class:`ActionError` with a code and changes nothing.

Event payloads are built in :mod:`game.events`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import F

from game import events, rules
from game.models import Game, Move

NAME_MAX_CHARS = 24


class ActionError(Exception):
    """A refused action: nothing was changed.

    ``code`` is the machine-readable error code (see ``docs/protocol.md``),
    ``message`` the human text, ``extra`` more fields for the client (for an
    ambiguous move, ``candidates``).
    """

    def __init__(self, code: str, message: str, **extra):
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

    def as_event(self) -> dict:
        """The ``error`` message sent to the one socket that asked."""
        return {"type": "error", "code": self.code, "message": self.message, **self.extra}


@dataclass
class Outcome:
    """What an action returns: the game as stored afterwards and the events to publish, in order."""

    game: Game
    events: list[dict] = field(default_factory=list)


def clean_name(name) -> str:
    """Return a display name stripped and checked: 1 to 24 printable characters.

    Raises :class:`ActionError` ``bad_name``.
    """
    if not isinstance(name, str):
        raise ActionError("bad_name", "A display name is required.")
    name = " ".join(name.split())
    if not name or len(name) > NAME_MAX_CHARS or not name.isprintable():
        raise ActionError("bad_name", f"Choose a display name of 1 to {NAME_MAX_CHARS} characters.")
    return name


def game_record(game: Game, moves: list[str] | None = None) -> rules.Game:
    """Rebuild the rules' game record of ``game`` from its stored moves (one query when ``moves`` is None)."""
    if moves is None:
        moves = list(game.move_set.order_by("ply").values_list("notation", flat=True))
    return rules.Game.from_moves(moves, start_fen=game.start_fen)


def create_game(player_id: str, name: str, color: str, start_fen: str | None = None) -> Game:
    """Create a game with the creator seated as ``color``: ``'B'``, ``'W'`` or ``'random'``.

    ``start_fen`` (PDN FEN) starts the game from another position.  Raises
    :class:`ActionError`: ``bad_name``, ``bad_color``, ``bad_fen``.
    """
    name = clean_name(name)
    if not player_id:
        raise ActionError("no_session", "Your browser session has no player id.")
    if color == "random":
        color = random.choice("BW")
    if color not in ("B", "W"):
        raise ActionError("bad_color", "Choose Black, White or random.")
    try:
        position = rules.Position.from_fen(start_fen) if start_fen else rules.Position.initial()
    except rules.RulesError as exc:
        raise ActionError("bad_fen", str(exc)) from None
    game = Game(start_fen=position.fen(), fen=position.fen())
    if color == "B":
        game.black_player, game.black_name = player_id, name
    else:
        game.white_player, game.white_name = player_id, name
    game.save()
    return game


def start_game(black: tuple[str, str], white: tuple[str, str]) -> Game:
    """Create a game with both seats taken, ready to play: matchmaking pairs and rematches.

    ``black`` and ``white`` are ``(player_id, display name)``.  Raises
    :class:`ActionError` ``bad_name`` or ``no_session``.
    """
    (black_id, black_name), (white_id, white_name) = black, white
    if not black_id or not white_id:
        raise ActionError("no_session", "Both players need a player id.")
    position = rules.Position.initial()
    return Game.objects.create(
        start_fen=position.fen(), fen=position.fen(), status=Game.Status.ACTIVE,
        black_player=black_id, black_name=clean_name(black_name),
        white_player=white_id, white_name=clean_name(white_name),
    )


def _load_for_update(game_id: str) -> Game:
    try:
        return Game.objects.select_for_update().get(pk=game_id)
    except Game.DoesNotExist:
        raise ActionError("no_such_game", "There is no such game.") from None


def _bump(game: Game, **changes) -> None:
    """Store ``changes`` and advance the version, only if nobody else wrote since ``game`` was loaded."""
    changes.setdefault("version", F("version") + 1)
    updated = Game.objects.filter(pk=game.pk, version=game.version).update(**changes)
    if updated != 1:
        raise ActionError("stale", "The game changed meanwhile; your board has been refreshed.")
    game.refresh_from_db()


def join_game(game_id: str, player_id: str, name: str) -> Outcome:
    """Seat ``player_id`` in the free seat of a waiting game; the game then starts.

    Joining a game one already sits in is a no-op.  Raises :class:`ActionError`:
    ``no_such_game``, ``bad_name``, ``no_session``, ``seats_taken``.
    """
    name = clean_name(name)
    if not player_id:
        raise ActionError("no_session", "Your browser session has no player id.")
    with transaction.atomic():
        game = _load_for_update(game_id)
        if game.seat_of(player_id):
            return Outcome(game)
        if game.status != Game.Status.WAITING:
            raise ActionError("seats_taken", "Both seats are taken; you are watching this game.")
        if not game.black_player:
            changes = {"black_player": player_id, "black_name": name}
        else:
            changes = {"white_player": player_id, "white_name": name}
        _bump(game, status=Game.Status.ACTIVE, **changes)
        record = game_record(game)
        return Outcome(game, [events.seats_event(game, record)])


def play_move(game_id: str, player_id: str | None, text: str, v: int) -> Outcome:
    """Play ``text`` (full or unambiguous short form, RULES.md) for the seat ``player_id`` holds.

    ``v`` is the version the client last applied: it must be at least the
    version that set the current position and at most the current version.
    The move is stored as ply ``game.ply + 1`` (unique per game) and the game
    row is updated conditionally on its version, so two racing submissions
    never both land.  Returns the ``move`` event (with the game's end when the
    move decided it).

    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``,
    ``not_started``, ``game_over``, ``bad_version``, ``stale``,
    ``not_your_turn``, ``malformed_move``, ``illegal_move``, ``ambiguous_move``.
    """
    try:
        with transaction.atomic():
            game = _load_for_update(game_id)
            seat = game.seat_of(player_id)
            if seat is None:
                raise ActionError("not_seated", "Only the seated players can move; you are watching.")
            if game.status == Game.Status.WAITING:
                raise ActionError("not_started", "The game starts when your opponent joins.")
            if game.is_over:
                raise ActionError("game_over", "The game is over.")
            if v > game.version:
                raise ActionError("bad_version", f"Version {v} is ahead of the game ({game.version}).")
            if v < game.position_version:
                raise ActionError("stale", "Your board was out of date; it has been refreshed.")
            record = game_record(game)
            if record.position.turn.value != seat:
                raise ActionError("not_your_turn", "It is your opponent's turn.")
            move = _parse(record.position, text)
            record.play(move)
            ply = game.ply + 1
            Move.objects.create(game=game, ply=ply, notation=str(move), fen_after=record.position.fen())
            changes = {"fen": record.position.fen(), "ply": ply,
                       "position_version": game.version + 1}
            outcome = record.outcome
            if outcome is not None:
                changes.update(status=Game.Status.FINISHED, result=outcome.result,
                               termination=outcome.termination.value)
            _bump(game, **changes)
            return Outcome(game, [events.move_event(game, record, move)])
    except IntegrityError:
        raise ActionError("stale", "Another move was played first; your board has been refreshed.") from None


def _parse(position: rules.Position, text: str) -> rules.Move:
    try:
        return position.parse_move(text)
    except rules.AmbiguousMoveError as exc:
        raise ActionError("ambiguous_move", str(exc),
                          candidates=[str(m) for m in exc.candidates]) from None
    except rules.MalformedMoveError as exc:
        raise ActionError("malformed_move", str(exc)) from None
    except rules.IllegalMoveError as exc:
        raise ActionError("illegal_move", str(exc)) from None


def snapshot(game_id: str, player_id: str | None) -> dict:
    """The full ``snapshot`` message for one viewer: the game's public state, its move list, and the viewer's seat.

    Raises :class:`ActionError` ``no_such_game``.
    """
    try:
        game = Game.objects.get(pk=game_id)
    except Game.DoesNotExist:
        raise ActionError("no_such_game", "There is no such game.") from None
    moves = list(game.move_set.order_by("ply").values_list("notation", flat=True))
    record = game_record(game, moves)
    return events.snapshot(game, record, moves, you=game.seat_of(player_id))
