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
from datetime import datetime, timedelta

from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.db.transaction import TransactionManagementError
from django.conf import settings
from django.utils import timezone

from game import clock, events, presence, rules
from game.models import Game, Move

NAME_MAX_CHARS = 24
#: After a declined draw offer, the same player may offer again once this many plies
#: (three of their own moves) have been played.
DRAW_OFFER_COOLDOWN_PLIES = 6
#: A game may be aborted while fewer plies than this have been played (a side has not moved yet).
ABORT_BEFORE_PLY = 2


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
    """Rebuild the rules' record of the whole of ``game`` from its stored moves (one query when
    ``moves`` is None).  For the current state only, :func:`current_record` is cheaper."""
    if moves is None:
        moves = list(game.move_set.order_by("ply").values_list("notation", flat=True))
    return rules.Game.from_moves(moves, start_fen=game.start_fen)


def current_record(game: Game, rows: list[tuple[str, str]] | None = None) -> rules.Game:
    """The rules' record of ``game`` from its last capture or man move on.

    Positions before a capture or a man move can never occur again, so this
    record decides repetitions and the forty-move rule, and gives the side to
    move, the legal moves and ``no_progress_plies``, exactly as the whole
    game's would; only its ``ply``, ``moves`` and ``positions`` start at that
    ply.  ``rows`` are all the stored ``(notation, fen_after)`` of the game,
    ply 1 first, if the caller has them; else this reads the
    ``game.no_progress`` moves it needs (no query right after a capture or man move).
    """
    kept = game.no_progress
    first = game.ply - kept          # the ply of the last capture or man move; 0 for the start
    if rows is not None:
        tail = rows[max(first - 1, 0):game.ply]
    elif kept:
        tail = list(game.move_set.filter(ply__gte=max(first, 1), ply__lte=game.ply)
                    .order_by("ply").values_list("notation", "fen_after"))
    else:
        return rules.Game(rules.Position.from_fen(game.fen))
    if first > 0:
        start_fen, tail = tail[0][1], tail[1:]
    else:
        start_fen = game.start_fen
    return rules.Game.from_moves([notation for notation, _ in tail], start_fen=start_fen)


def _control(text: str) -> clock.TimeControl:
    try:
        return clock.TimeControl.parse(text)
    except clock.TimeControlError as exc:
        raise ActionError("bad_time_control", str(exc)) from None


def create_game(player_id: str, name: str, color: str, start_fen: str | None = None,
                time_control: str = "untimed") -> Game:
    """Create a game with the creator seated as ``color``: ``'B'``, ``'W'`` or ``'random'``.

    ``start_fen`` (PDN FEN) starts the game from another position;
    ``time_control`` is ``untimed``, ``M+S`` or ``1d``/``3d``/``7d``
    (:class:`game.clock.TimeControl`).  Raises :class:`ActionError`:
    ``bad_name``, ``bad_color``, ``bad_fen``, ``bad_time_control``.
    """
    name = clean_name(name)
    control = _control(time_control)
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
    game = Game(start_fen=position.fen(), fen=position.fen(), time_control=str(control),
                black_ms=control.start_ms(), white_ms=control.start_ms())
    if color == "B":
        game.black_player, game.black_name = player_id, name
    else:
        game.white_player, game.white_name = player_id, name
    game.save()
    return game


def start_game(black: tuple[str, str], white: tuple[str, str], time_control: str = "untimed",
               now: datetime | None = None) -> Game:
    """Create a game with both seats taken, ready to play: matchmaking pairs and rematches.

    ``black`` and ``white`` are ``(player_id, display name)``; ``time_control``
    as for :func:`create_game`; ``now`` the start of the first turn (default:
    the current time).  Raises :class:`ActionError` ``bad_name``,
    ``no_session``, ``bad_time_control``.
    """
    control = _control(time_control)
    (black_id, black_name), (white_id, white_name) = black, white
    if not black_id or not white_id:
        raise ActionError("no_session", "Both players need a player id.")
    position = rules.Position.initial()
    return Game.objects.create(
        start_fen=position.fen(), fen=position.fen(), status=Game.Status.ACTIVE,
        time_control=str(control), black_ms=control.start_ms(), white_ms=control.start_ms(),
        turn_started_at=now or timezone.now(),
        black_player=black_id, black_name=clean_name(black_name),
        white_player=white_id, white_name=clean_name(white_name),
    )


class _MovePathSql:
    """The SQL of the move path for one database backend, built once from the models' ``_meta``.

    Every move locks the game row, inserts the move and updates the game: these run as plain
    SQL on the connection, since building them and reading their results through QuerySets
    cost more CPU than the rest of a move (``docs/performance.md``).  Values go in and come
    out converted as the ORM converts them (``get_db_prep_save``, the backend's converters).
    """

    def __init__(self, conn):
        qn = conn.ops.quote_name
        meta = Game._meta
        self.game_table = qn(meta.db_table)
        self.game_pk_column = qn(meta.pk.column)
        self.game_version_column = qn(meta.get_field("version").column)
        fields = meta.concrete_fields
        self.game_attnames = [f.attname for f in fields]
        self.select_game = (
            f"SELECT {', '.join(qn(f.column) for f in fields)} FROM {self.game_table}"
            f" WHERE {self.game_pk_column} = %s"
            + (" FOR UPDATE" if conn.features.has_select_for_update else ""))
        self.game_converters = []
        for index, f in enumerate(fields):
            col = f.get_col(meta.db_table)
            converters = conn.ops.get_db_converters(col) + col.get_db_converters(conn)
            if converters:
                self.game_converters.append((index, converters, col))
        move_meta = Move._meta
        self.move_fields = [f for f in move_meta.local_concrete_fields
                            if f is not move_meta.auto_field and not f.generated]
        self.insert_move = (
            f"INSERT INTO {qn(move_meta.db_table)} ({', '.join(qn(f.column) for f in self.move_fields)})"
            f" VALUES ({', '.join(['%s'] * len(self.move_fields))})")


_move_path_sql: dict[str, _MovePathSql] = {}


def _connection():
    """This thread's connection and the move path's SQL for its backend.

    The connection itself, not ``django.db.connection``: every attribute read through that
    proxy looks the thread's connection up again.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    sql = _move_path_sql.get(conn.vendor)
    if sql is None:
        sql = _move_path_sql[conn.vendor] = _MovePathSql(conn)
    return conn, sql


def _stored_id(game_id) -> str | None:
    """``game_id`` as a lookup compares it with the stored ids (``str()`` of it, as the ORM's
    ``pk=`` lookup does for a character primary key), or None when no game can have it:
    ``None``, a NUL character (which PostgreSQL refuses in text) or a lone surrogate (no UTF-8)."""
    if game_id is None:
        return None
    key = Game._meta.pk.get_prep_value(game_id)
    if "\x00" in key:
        return None
    if not key.isascii():
        try:
            key.encode()
        except UnicodeEncodeError:
            return None
    return key


def _load_for_update(game_id: str) -> Game:
    """The game ``game_id`` with its row locked until the transaction ends.

    One ``SELECT ... FOR UPDATE`` read into a :class:`Game` as the ORM reads it (SQLite has no
    row locks: there the transaction holds the database's write lock from its
    ``BEGIN IMMEDIATE``).  Must run inside ``transaction.atomic()``; where rows lock, outside
    one raises ``TransactionManagementError``.  Raises :class:`ActionError` ``no_such_game``
    when no game has that id, whatever the value: ``None``, a non-string (looked up as its
    ``str()``, as the ORM's ``pk=`` lookup does), text that no stored id can be (:func:`_stored_id`).
    """
    conn, sql = _connection()
    if conn.features.has_select_for_update and conn.get_autocommit():
        raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
    key = _stored_id(game_id)
    if key is None:
        raise ActionError("no_such_game", "There is no such game.")
    with conn.cursor() as cursor:
        cursor.execute(sql.select_game, [key])
        row = cursor.fetchone()
    if row is None:
        raise ActionError("no_such_game", "There is no such game.")
    if sql.game_converters:
        row = list(row)
        for index, converters, col in sql.game_converters:
            value = row[index]
            for convert in converters:
                value = convert(value, col, conn)
            row[index] = value
    return Game.from_db(conn.alias, sql.game_attnames, row)


def _insert_move(game: Game, ply: int, notation: str, fen_after: str) -> None:
    """Store ply ``ply`` of ``game`` (one ``INSERT``; ``played_at`` is now).

    Raises ``IntegrityError`` when the game has that ply already.
    """
    conn, sql = _connection()
    move = Move(game=game, ply=ply, notation=notation, fen_after=fen_after)
    params = [f.get_db_prep_save(f.pre_save(move, True), conn) for f in sql.move_fields]
    with conn.cursor() as cursor:
        cursor.execute(sql.insert_move, params)


def _bump(game: Game, **changes) -> None:
    """Store ``changes`` and advance the version, only if nobody else wrote since ``game`` was loaded.

    ``changes`` maps field names to plain values (a model instance for a foreign key), stored
    as the ORM would store them, with ``version`` (one more) and ``updated_at`` (now), in one
    ``UPDATE ... WHERE id = %s AND version = %s``.  Raises :class:`ActionError` ``stale`` when
    that updates no row.  ``game`` then holds the stored values (set here, not read back: the
    row is ours until commit).
    """
    changes["version"] = game.version + 1
    changes["updated_at"] = timezone.now()
    conn, sql = _connection()
    qn = conn.ops.quote_name
    meta = Game._meta
    assignments, params = [], []
    for name, value in changes.items():
        f = meta.get_field(name)
        if hasattr(value, "prepare_database_save"):
            if not f.remote_field:
                raise TypeError(f"Tried to update field {f} with a model instance, {value!r}.")
            value = value.prepare_database_save(f)
        value = f.get_db_prep_save(value, conn)
        if value is None:
            assignments.append(f"{qn(f.column)} = NULL")
        else:
            assignments.append(f"{qn(f.column)} = %s")
            params.append(value)
    params.append(meta.pk.get_db_prep_value(game.pk, conn))
    params.append(meta.get_field("version").get_db_prep_value(game.version, conn))
    with conn.cursor() as cursor:
        cursor.execute(f"UPDATE {sql.game_table} SET {', '.join(assignments)}"
                       f" WHERE {sql.game_pk_column} = %s AND {sql.game_version_column} = %s", params)
        updated = cursor.rowcount
    if updated != 1:
        raise ActionError("stale", "The game changed meanwhile; your board has been refreshed.")
    for name, value in changes.items():
        setattr(game, name, value)


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
        _bump(game, status=Game.Status.ACTIVE, turn_started_at=timezone.now(), **changes)
        return Outcome(game, [events.seats_event(game, current_record(game))])


def play_move(game_id: str, player_id: str | None, text: str, v: int,
              now: datetime | None = None) -> Outcome:
    """Play ``text`` (full or unambiguous short form, RULES.md) for the seat ``player_id`` holds.

    ``v`` is the version the client last applied: it must be at least the
    version that set the current position and at most the current version.
    The move is stored as ply ``game.ply + 1`` (unique per game) and the game
    row is updated conditionally on its version, so two racing submissions
    never both land.  Returns the ``move`` event (with the game's end when the
    move decided it).  In a timed game the mover is charged the time since
    the turn started (``now``, default the current time) and gets the
    increment; a move that comes after the side to move ran out of time is
    not played: the game ends on time instead and the ``update`` event
    ``flagged`` (or ``aborted``, for a live game's first move not made in
    time) is returned.

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
            now = now or timezone.now()
            expired = _expiry(game, now)
            if expired:
                return _store_update(game, seat=None, what=expired[0], changes=expired[1])
            if game.fen[0] != seat:
                raise ActionError("not_your_turn", "It is your opponent's turn.")
            record = current_record(game)
            move = _parse(record.position, text)
            record.play(move)
            ply = game.ply + 1
            fen = record.position.fen()
            _insert_move(game, ply, str(move), fen)
            changes = {"fen": fen, "ply": ply, "no_progress": record.no_progress_plies,
                       "position_version": game.version + 1}
            changes["turn_started_at"] = now
            control = game.control
            if control.timed:
                field = "black_ms" if seat == "B" else "white_ms"
                left = getattr(game, field)
                if clock.runs(control, game.ply):
                    left -= clock.elapsed_ms(game.turn_started_at, now)
                changes[field] = clock.after_move(control, left, game.ply)
            if game.draw_offer and game.draw_offer != seat:
                changes.update(_declined(game, ply))
            if record.outcome is not None:
                changes.update(_finished(record.outcome))
            _bump(game, **changes)
            return Outcome(game, [events.move_event(game, record, move)])
    except IntegrityError:
        raise ActionError("stale", "Another move was played first; your board has been refreshed.") from None


def _expiry(game: Game, now: datetime) -> tuple[str, dict] | None:
    """``("flagged" | "aborted", changes)`` when the side to move of a timed game in play is out of time.

    The side to move loses on time when its clock is at zero; in a live game a
    side's first move not made within :data:`game.clock.FIRST_MOVE_S` aborts the game.
    """
    control = game.control
    if game.status != Game.Status.ACTIVE or not control.timed:
        return None
    turn = game.fen[0]
    spent = clock.elapsed_ms(game.turn_started_at, now)
    if control.live and game.ply < 2:
        if spent >= clock.FIRST_MOVE_S * 1000:
            return "aborted", _finished(rules.Outcome(rules.Termination.ABORTED, None))
        return None
    field = "black_ms" if turn == "B" else "white_ms"
    if getattr(game, field) - spent > 0:
        return None
    winner = rules.Color.WHITE if turn == "B" else rules.Color.BLACK
    return "flagged", {field: 0, **_finished(rules.Outcome(rules.Termination.TIME_FORFEIT, winner))}


def _store_update(game: Game, seat: str | None, what: str, changes: dict) -> Outcome:
    """Store ``changes`` on the locked ``game`` and return the ``update`` event ``what``."""
    _bump(game, **changes)
    return Outcome(game, [events.update_event(game, current_record(game), what, seat)])


def check_clock(game_id: str, now: datetime | None = None) -> Outcome:
    """End the game if the side to move is out of time (``now``: default the current time).

    Called when a viewer's clock reaches zero, on incoming messages past the
    deadline, and by the server's own timers; whoever calls, the decision is
    the server's, from its stored clocks, and a game is ended once.  Returns
    the ``flagged``/``aborted`` event, or no events when time remains.
    Raises :class:`ActionError` ``no_such_game``.
    """
    with transaction.atomic():
        game = _load_for_update(game_id)
        expired = _expiry(game, now or timezone.now())
        if not expired:
            return Outcome(game)
        return _store_update(game, seat=None, what=expired[0], changes=expired[1])


def _finished(outcome: rules.Outcome) -> dict:
    """The stored changes that end a game with ``outcome``."""
    status = Game.Status.ABORTED if outcome.termination is rules.Termination.ABORTED else Game.Status.FINISHED
    return {"status": status, "result": outcome.result, "termination": outcome.termination.value,
            "draw_offer": ""}


def _declined(game: Game, ply: int) -> dict:
    """The stored changes that decline the pending draw offer of ``game`` at ``ply``."""
    field = "black_draw_ply" if game.draw_offer == "B" else "white_draw_ply"
    return {"draw_offer": "", field: ply + DRAW_OFFER_COOLDOWN_PLIES}


def _seat_in_play(game: Game, player_id: str | None) -> str:
    """The seat of ``player_id`` in a game in play; else :class:`ActionError`."""
    seat = game.seat_of(player_id)
    if seat is None:
        raise ActionError("not_seated", "Only the seated players can do that; you are watching.")
    if game.is_over:
        raise ActionError("game_over", "The game is over.")
    if game.status == Game.Status.WAITING:
        raise ActionError("not_started", "The game starts when your opponent joins.")
    return seat


def _charged(game: Game, now: datetime) -> dict:
    """The stored clock of the side to move of ``game`` charged for its turn up to ``now``, for a
    game in play that ends other than by a move (resignation, agreement, claim, abort): nothing
    when no clock runs (untimed, a live game's first move of a side).  Called only when the side
    to move is in time (:func:`_expiry` found nothing), so never below 1 ms."""
    control = game.control
    if not control.timed or not clock.runs(control, game.ply):
        return {}
    field = "black_ms" if game.fen[0] == "B" else "white_ms"
    return {field: max(1, getattr(game, field) - clock.elapsed_ms(game.turn_started_at, now))}


def _act(game_id: str, player_id: str | None, decide, now: datetime | None = None) -> Outcome:
    """Run one game action under the row lock, as of ``now`` (default the current time).

    ``decide(game, seat)`` checks the action and returns ``(what, changes)``:
    the name of the ``update`` event and the stored changes; or it raises
    :class:`ActionError`.  Returns that event after the changes are stored.

    In a game in play, an action that comes after the side to move ran out of time is not
    carried out: the game ends on time instead (``flagged``, or ``aborted`` for a live game's
    first move not made in time), as for a move.  An action that ends the game charges the
    side to move for the time of its turn so far (:func:`_charged`), so the final clocks are
    those the players saw.
    """
    with transaction.atomic():
        game = _load_for_update(game_id)
        seat = game.seat_of(player_id)
        what, changes = decide(game, seat)
        if game.status == Game.Status.ACTIVE:
            now = now or timezone.now()
            expired = _expiry(game, now)
            if expired:
                return _store_update(game, seat=None, what=expired[0], changes=expired[1])
            if changes.get("status") in (Game.Status.FINISHED, Game.Status.ABORTED):
                changes.update(_charged(game, now))
        return _store_update(game, seat, what, changes)


def offer_draw(game_id: str, player_id: str | None, now: datetime | None = None) -> Outcome:
    """Offer a draw, on either turn.  An offer while the opponent's offer is pending accepts it.

    ``now`` (default the current time): see :func:`_act` for the clocks.

    After a declined offer the same player may offer again once
    :data:`DRAW_OFFER_COOLDOWN_PLIES` plies have been played.  Raises
    :class:`ActionError`: ``no_such_game``, ``not_seated``, ``not_started``,
    ``game_over``, ``offer_pending`` (your own offer is still pending),
    ``too_soon``.
    """
    def decide(game, seat):
        seat = _seat_in_play(game, player_id)
        if game.draw_offer == seat:
            raise ActionError("offer_pending", "Your draw offer is still pending.")
        if game.draw_offer:
            return "draw_accepted", _finished(rules.Outcome(rules.Termination.AGREEMENT, None))
        allowed_at = game.black_draw_ply if seat == "B" else game.white_draw_ply
        if game.ply < allowed_at:
            moves = -(-(allowed_at - game.ply) // 2)
            raise ActionError("too_soon", f"Your last offer was declined; you can offer a draw again "
                                          f"after {moves} more move{'s' if moves != 1 else ''} of yours.")
        return "draw_offered", {"draw_offer": seat}

    return _act(game_id, player_id, decide, now)


def answer_draw(game_id: str, player_id: str | None, accept: bool, now: datetime | None = None) -> Outcome:
    """Accept (the game is drawn by agreement) or decline the opponent's pending draw offer.

    ``now`` (default the current time): see :func:`_act` for the clocks.  Raises :class:`ActionError`: ``no_such_game``, ``not_seated``,
    ``not_started``, ``game_over``, ``no_offer`` (none pending, or it is your own).
    """
    def decide(game, seat):
        seat = _seat_in_play(game, player_id)
        if not game.draw_offer or game.draw_offer == seat:
            raise ActionError("no_offer", "There is no draw offer from your opponent to answer.")
        if accept:
            return "draw_accepted", _finished(rules.Outcome(rules.Termination.AGREEMENT, None))
        return "draw_declined", _declined(game, game.ply)

    return _act(game_id, player_id, decide, now)


def resign(game_id: str, player_id: str | None, now: datetime | None = None) -> Outcome:
    """Resign: the opponent wins by resignation.

    ``now`` (default the current time): see :func:`_act` for the clocks.  Raises :class:`ActionError`: ``no_such_game``, ``not_seated``, ``not_started``, ``game_over``.
    """
    def decide(game, seat):
        seat = _seat_in_play(game, player_id)
        winner = rules.Color.WHITE if seat == "B" else rules.Color.BLACK
        return "resigned", _finished(rules.Outcome(rules.Termination.RESIGNATION, winner))

    return _act(game_id, player_id, decide, now)


def abort(game_id: str, player_id: str | None, now: datetime | None = None) -> Outcome:
    """Abort a game in which a side has not yet made its first move (or nobody has joined yet).

    The game is marked aborted, neither won nor lost.  ``now`` (default the current time): see
    :func:`_act` for the clocks.  Raises
    :class:`ActionError`: ``no_such_game``, ``not_seated``, ``game_over``,
    ``too_late`` (both sides have moved).
    """
    def decide(game, seat):
        if seat is None:
            raise ActionError("not_seated", "Only the seated players can abort; you are watching.")
        if game.is_over:
            raise ActionError("game_over", "The game is over.")
        if game.ply >= ABORT_BEFORE_PLY:
            raise ActionError("too_late", "Both sides have moved; the game can no longer be aborted.")
        return "aborted", _finished(rules.Outcome(rules.Termination.ABORTED, None))

    return _act(game_id, player_id, decide, now)


def offer_rematch(game_id: str, player_id: str | None) -> Outcome:
    """Propose a rematch after the game; if the opponent proposed one already, start it.

    The rematch has the colours swapped; ``state.next_game`` carries its id.
    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``,
    ``not_over`` (the game goes on), ``offer_pending``, ``rematch_started``.
    """
    def decide(game, seat):
        if seat is None:
            raise ActionError("not_seated", "Only the players can ask for a rematch.")
        if not game.is_over:
            raise ActionError("not_over", "A rematch can be proposed once the game is over.")
        if game.next_game_id:
            raise ActionError("rematch_started", "The rematch has started already.")
        if not game.black_player or not game.white_player:
            raise ActionError("not_over", "Nobody joined this game; create a new one instead.")
        if game.rematch_offer == seat:
            raise ActionError("offer_pending", "Your rematch proposal is still pending.")
        if not game.rematch_offer:
            return "rematch_offered", {"rematch_offer": seat}
        rematch = start_game(black=(game.white_player, game.white_name),
                             white=(game.black_player, game.black_name),
                             time_control=game.time_control)
        return "rematch_started", {"rematch_offer": "", "next_game": rematch}

    return _act(game_id, player_id, decide)


def claim(game_id: str, player_id: str | None, draw: bool, now: datetime | None = None) -> Outcome:
    """The opponent of a player to move who left claims the win (or calls it a draw).

    Allowed when the player to move has had no page of the game open for
    :func:`game.clock.claim_after_s` seconds (:func:`game.presence.offline_s`).  ``now``
    (default the current time): see :func:`_act` for the clocks.  Raises
    :class:`ActionError`: ``no_such_game``, ``not_seated``, ``not_started``,
    ``game_over``, ``not_claimable`` (correspondence, or it is your own turn),
    ``opponent_present`` (present, or away for less than the limit; the
    message says how long is left), ``presence_unavailable``.
    """
    def decide(game, seat):
        seat = _seat_in_play(game, player_id)
        limit = clock.claim_after_s(game.control, settings.CLAIM_AFTER_LIVE_S,
                                    settings.CLAIM_AFTER_UNTIMED_S)
        if limit is None:
            raise ActionError("not_claimable", "In correspondence games the clock decides.")
        turn = game.fen[0]
        if turn == seat:
            raise ActionError("not_claimable", "It is your turn; only the player to move can be claimed against.")
        if (game.black_player if turn == "B" else game.white_player).startswith("bot:"):
            raise ActionError("not_claimable", "The computer does not leave; it is thinking.")
        since = (game.turn_started_at or game.updated_at).timestamp()
        try:
            away = presence.offline_s(game.id, turn, since)
        except presence.PresenceUnavailable:
            raise ActionError("presence_unavailable",
                              "Cannot tell whether your opponent is connected; try again.") from None
        if away < limit:
            left = max(1, round(limit - away))
            raise ActionError("opponent_present", f"Your opponent can still come back: "
                                                  f"you may claim in {left} s if they stay away."
                              if away else "Your opponent is connected.")
        if draw:
            return "claimed_draw", _finished(rules.Outcome(rules.Termination.ABANDONED, None))
        winner = rules.Color(seat)
        return "claimed_win", _finished(rules.Outcome(rules.Termination.ABANDONED, winner))

    return _act(game_id, player_id, decide, now)


def decline_rematch(game_id: str, player_id: str | None) -> Outcome:
    """Decline the opponent's rematch proposal.

    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``, ``no_offer``.
    """
    def decide(game, seat):
        if seat is None:
            raise ActionError("not_seated", "Only the players can answer a rematch proposal.")
        if not game.rematch_offer or game.rematch_offer == seat:
            raise ActionError("no_offer", "There is no rematch proposal from your opponent.")
        return "rematch_declined", {"rematch_offer": ""}

    return _act(game_id, player_id, decide)


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
    rows = list(game.move_set.filter(ply__lte=game.ply).order_by("ply").values_list("notation", "fen_after"))
    return events.snapshot(game, current_record(game, rows), [notation for notation, _ in rows],
                           [fen for _, fen in rows], you=game.seat_of(player_id))


def seat_of(game_id: str, player_id: str | None) -> str | None:
    """The seat (``"B"`` or ``"W"``) ``player_id`` holds in game ``game_id``, read without locking
    the game; None for a spectator, no player id or no such game.

    For refusing spectators before any row lock is taken; every action checks the seat
    again under the lock.
    """
    if not player_id:
        return None
    seats = Game.objects.filter(pk=game_id).values_list("black_player", "white_player").first()
    if seats is None:
        return None
    return "B" if seats[0] == player_id else "W" if seats[1] == player_id else None


def version(game_id: str) -> int | None:
    """The game's version (``v`` of its last event), or None when there is no such game."""
    return Game.objects.filter(pk=game_id).values_list("version", flat=True).first()


def game_pdn(game_id: str, site: str) -> str:
    """The PDN text of a game (PDN 3.0; tags Event, Site, Date, Black, White, Result, GameType 21,
    FEN when it did not start from the initial position, TimeControl when timed).

    Raises :class:`ActionError` ``no_such_game``.
    """
    try:
        game = Game.objects.get(pk=game_id)
    except Game.DoesNotExist:
        raise ActionError("no_such_game", "There is no such game.") from None
    record = game_record(game)
    tags = {
        "Event": "Casual game",
        "Site": site,
        "Date": game.created_at.strftime("%Y.%m.%d"),
        "Black": game.black_name or "?",
        "White": game.white_name or "?",
        "Result": game.result,
    }
    if game.control.timed:
        tags["TimeControl"] = game.control.pdn()
    return rules.game_to_pdn(record, tags)


#: A live or untimed game in which nothing (a move, an offer, an answer) has happened for this
#: many seconds is left off the live list: its players have most likely left.
LIVE_LIST_IDLE_S = 15 * 60


def live_games(limit: int = 50, now: datetime | None = None) -> list[dict]:
    """The games being played now (as of ``now``, default the current time), most recently active first.

    Left out, though still stored as in play until someone opens them (the server decides
    clocks lazily): timed games whose side to move is out of time or, in a live game, has let its
    first-move window pass (:func:`_expiry`, from the stored clock); untimed and live games with
    no activity for :data:`LIVE_LIST_IDLE_S` (15 minutes); correspondence games, which move
    slowly, are listed as long as their side to move is within its days for the move (no activity
    for longer than that means it is out of time).  One query (a second only when more than
    ``limit`` of the games it read were out of time), then the clocks are checked in Python.

    Returns ``[{"id": str, "black": str, "white": str, "ply": int, "spectators": int,
    "control": str, "label": str}]`` (the time control, as text and in words);
    spectator counts come from :mod:`game.presence` (0 when Redis is unreachable).
    """
    from django.db.models import Q

    now = now or timezone.now()
    recent = (Q(updated_at__gte=now - timedelta(seconds=LIVE_LIST_IDLE_S))
              & ~Q(time_control__in=clock.CORRESPONDENCE))
    for text in clock.CORRESPONDENCE:
        days = clock.TimeControl.parse(text).days
        recent |= Q(time_control=text, updated_at__gte=now - timedelta(days=days))
    rows = (Game.objects.filter(recent, status=Game.Status.ACTIVE).order_by("-updated_at")
            .only("id", "black_name", "white_name", "ply", "time_control", "status", "fen",
                  "black_ms", "white_ms", "turn_started_at", "updated_at"))
    games, start, batch = [], 0, 2 * limit
    while len(games) < limit:
        read = list(rows[start:start + batch])
        games += [g for g in read if not _expiry(g, now)]
        if len(read) < batch:
            break
        start += batch
    games = games[:limit]
    counts = presence.spectator_counts([g.id for g in games])
    controls = {g.time_control: clock.TimeControl.parse(g.time_control) for g in games}
    return [{"id": g.id, "black": g.black_name, "white": g.white_name, "ply": g.ply,
             "spectators": counts.get(g.id, 0), "control": g.time_control,
             "label": controls[g.time_control].label()} for g in games]


def playing_against_a_person(player_id: str | None) -> bool:
    """True while ``player_id`` holds a seat in a game in play whose other seat is a person (not the
    computer): the analysis board's engine is closed to them until it ends (fair play)."""
    if not player_id:
        return False
    from django.db.models import Q

    return (Game.objects.filter(status=Game.Status.ACTIVE)
            .filter(Q(black_player=player_id) & ~Q(white_player__startswith="bot:")
                    | Q(white_player=player_id) & ~Q(black_player__startswith="bot:"))
            .exists())
