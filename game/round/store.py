"""The stored game: the plain-SQL move path (row lock, insert, conditional update) and the loads.

Every move locks the game row, inserts the move and updates the game.  These
run as plain SQL on the connection, since building them and reading their
results through QuerySets cost more CPU than the rest of a move
(``docs/architecture.md``, "Why the move path is hand-written SQL").  They send
the statements the ORM would send and store the same values, converted as the
ORM converts them (``get_db_prep_save``, the backend's converters);
``tests/web/test_services.py`` compares the rows byte for byte.

The rules' record of a stored game is rebuilt here too (:func:`current_record`,
:func:`game_record`).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any, ParamSpec, TypeVar

from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, transaction
from django.db.models import Field
from django.db.transaction import TransactionManagementError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game import rules
from game.errors import ActionError, busy, no_such_game
from game.locks import wait_for_locks_at_most
from game.models import Game, Move

P = ParamSpec("P")
R = TypeVar("R")

#: PostgreSQL's SQLSTATE for a lock that ``NOWAIT`` could not take.
LOCK_NOT_AVAILABLE = "55P03"


class _MovePathSql:
    """The SQL of the move path for one database backend, built once from the models' ``_meta``.

    Every move locks the game row, inserts the move and updates the game: these run as plain
    SQL on the connection, since building them and reading their results through QuerySets
    cost more CPU than the rest of a move (``docs/performance/02-live-load.md``).  Values go in and come
    out converted as the ORM converts them (``get_db_prep_save``, the backend's converters).
    """

    def __init__(self, conn: Any):
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
        self.select_game_nowait = self.select_game + (
            " NOWAIT" if conn.features.has_select_for_update_nowait else "")
        self.game_converters: list[tuple[int, list[Any], Any]] = []
        for index, f in enumerate(fields):
            col = f.get_col(meta.db_table)
            converters = conn.ops.get_db_converters(col) + col.get_db_converters(conn)
            if converters:
                self.game_converters.append((index, converters, col))
        move_meta = Move._meta
        self.move_fields = [f for f in move_meta.local_concrete_fields
                            if f is not move_meta.auto_field and not f.generated]
        insert_into = (f"INSERT INTO {qn(move_meta.db_table)}"
                       f" ({', '.join(qn(f.column) for f in self.move_fields)})")
        placeholders = ", ".join(["%s"] * len(self.move_fields))
        self.insert_move = f"{insert_into} VALUES ({placeholders})"
        #: Whether the move's INSERT can be the WITH clause of the game's UPDATE (PostgreSQL's
        #: data-modifying WITH; SQLite has no such clause).
        self.insert_with_update = conn.vendor == "postgresql"
        #: The move's INSERT taking its values from a SELECT, to be followed by its FROM.
        self.insert_move_select = f"{insert_into} SELECT {placeholders}"
        #: The game's row locked if it still has a version (PostgreSQL), and the same ``NOWAIT``.
        self.lock_game_at_version = (
            f"SELECT 1 FROM {self.game_table} WHERE {self.game_pk_column} = %s"
            f" AND {self.game_version_column} = %s FOR UPDATE")
        self.lock_game_at_version_nowait = self.lock_game_at_version + " NOWAIT"


_move_path_sql: dict[str, _MovePathSql] = {}


def _connection() -> tuple[Any, _MovePathSql]:
    """This thread's connection and the move path's SQL for its backend.

    The connection itself, not ``django.db.connection``: every attribute read through that
    proxy looks the thread's connection up again.
    """
    conn = connections[DEFAULT_DB_ALIAS]
    sql = _move_path_sql.get(conn.vendor)
    if sql is None:
        sql = _move_path_sql[conn.vendor] = _MovePathSql(conn)
    return conn, sql


def stored_id(game_id: object) -> str | None:
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


class RowBusy(Exception):
    """Another transaction holds the game's row: nothing was done, and the action may be tried
    again.  Raised at once instead of waiting, inside :func:`without_waiting`, so that a database
    thread never sits idle behind one game's lock while other games wait for a thread
    (:meth:`game.round.round.Round.run`)."""


_not_waiting = threading.local()


def without_waiting(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` with every row lock it takes through :func:`load_for_update` taken with ``NOWAIT``
    (where the database has it): a held row raises :class:`RowBusy` at once."""
    @functools.wraps(func)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        _not_waiting.on = True
        try:
            return func(*args, **kwargs)
        finally:
            _not_waiting.on = False

    return call


def never_waits() -> bool:
    """Whether this call runs within :func:`without_waiting`: a held row raises :class:`RowBusy`."""
    return getattr(_not_waiting, "on", False)


@contextlib.contextmanager
def _busy_when_held(key: str) -> Iterator[None]:
    """Raise :class:`RowBusy` for the game ``key`` where a ``NOWAIT`` lock found its row held
    (within :func:`without_waiting`), and :class:`ActionError` ``busy`` where a waiting lock gave
    up after ``lock_timeout`` (:func:`game.locks.wait_for_locks_at_most`)."""
    try:
        yield
    except OperationalError as exc:
        if getattr(exc.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE:
            if never_waits():
                raise RowBusy(key) from exc
            raise busy() from exc
        raise


def load_for_update(game_id: object) -> Game:
    """The game ``game_id`` with its row locked until the transaction ends.

    One ``SELECT ... FOR UPDATE`` read into a :class:`Game` as the ORM reads it (SQLite has
    no row locks: there the transaction holds the database's write lock from its
    ``BEGIN IMMEDIATE``).  Must run inside ``transaction.atomic()``; where rows lock, outside
    one raises ``TransactionManagementError``.  Within :func:`without_waiting` the lock is taken
    ``NOWAIT`` and :class:`RowBusy` raised when another transaction holds the row (PostgreSQL);
    outside it the transaction waits at most ``DATABASE_LOCK_TIMEOUT_MS`` (``SET LOCAL
    lock_timeout``, :func:`game.locks.wait_for_locks_at_most`), then raises :class:`ActionError`
    ``busy``.
    Raises :class:`ActionError` ``no_such_game``
    when no game has that id, whatever the value: ``None``, a non-string (looked up as its
    ``str()``, as the ORM's ``pk=`` lookup does), text that no stored id can be (:func:`stored_id`).
    """
    conn, sql = _connection()
    if conn.features.has_select_for_update and conn.get_autocommit():
        raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
    key = stored_id(game_id)
    if key is None:
        raise no_such_game()
    if not never_waits():
        wait_for_locks_at_most(conn.alias)
    with _busy_when_held(key), conn.cursor() as cursor:
        cursor.execute(sql.select_game_nowait if never_waits() else sql.select_game, [key])
        row = cursor.fetchone()
    if row is None:
        raise no_such_game()
    if sql.game_converters:
        row = list(row)
        for index, converters, col in sql.game_converters:
            value = row[index]
            for convert in converters:
                value = convert(value, col, conn)
            row[index] = value
    return Game.from_db(conn.alias, sql.game_attnames, row)


def insert_move(game: Game, ply: int, notation: str, fen_after: str) -> None:
    """Store ply ``ply`` of ``game`` (one ``INSERT``; ``played_at`` is now).

    Raises ``IntegrityError`` when the game has that ply already.
    """
    conn, sql = _connection()
    with conn.cursor() as cursor:
        cursor.execute(sql.insert_move, _move_params(conn, sql, game, ply, notation, fen_after))


def _move_params(conn: Any, sql: _MovePathSql, game: Game, ply: int, notation: str, fen_after: str) -> list[Any]:
    """The values of :attr:`_MovePathSql.insert_move` for ply ``ply``, as the ORM stores them."""
    # The fields' own pre_save (``played_at``'s auto_now_add) on the plain values, without the
    # cost of a model instance.
    given = {"game_id": game.pk, "ply": ply, "notation": notation, "fen_after": fen_after}
    move = SimpleNamespace(**{f.attname: given[f.attname] if f.attname in given else f.get_default()
                              for f in sql.move_fields})
    return [f.get_db_prep_save(f.pre_save(move, True), conn)  # type: ignore[arg-type]
            for f in sql.move_fields]


def delete_moves(game: Game, from_ply: int) -> int:
    """Delete the stored plies ``from_ply`` onwards of ``game`` (a takeback: one ``DELETE``);
    returns how many were deleted.  Must run in the transaction holding the game's row lock
    (:func:`load_for_update`), so that nothing is inserted meanwhile.  Raises ValueError for a
    ``from_ply`` below 1."""
    if from_ply < 1:
        raise ValueError(f"plies are numbered from 1, not {from_ply}")
    deleted, _ = Move.objects.filter(game_id=game.pk, ply__gte=from_ply).delete()
    return deleted


def move_rows(game: Game, up_to_ply: int) -> list[tuple[str, str]]:
    """The stored ``(notation, fen_after)`` of plies 1 to ``up_to_ply`` of ``game``, ply 1 first."""
    return list(game.move_set.filter(ply__lte=up_to_ply).order_by("ply").values_list("notation", "fen_after"))


def bump(game: Game, **changes: Any) -> None:
    """Store ``changes`` and advance the version, only if nobody else wrote since ``game`` was loaded.

    ``changes`` maps field names to plain values (a model instance for a foreign key), stored
    as the ORM would store them, with ``version`` (one more) and ``updated_at`` (now, unless
    given), in one ``UPDATE ... WHERE id = %s AND version = %s``.  Raises :class:`ActionError`
    ``stale`` when that updates no row.  ``game`` then holds the stored values (set here, not
    read back: the row is ours until commit).  What a start or an end brings with it is the
    caller's to add (:func:`game.round.finisher.complete`).
    """
    conn, sql = _connection()
    update, params = _update(conn, sql, game, changes)
    with conn.cursor() as cursor:
        cursor.execute(update, params)
        updated = cursor.rowcount
    _updated(game, changes, updated)


def insert_move_and_bump(game: Game, played: tuple[int, str, str], changes: dict[str, Any]) -> None:
    """:func:`insert_move` of ``played`` (ply, notation, FEN after it) then :func:`bump` of
    ``changes``, as one statement where the database can.

    On PostgreSQL the ``INSERT`` rides in the ``UPDATE``'s ``WITH`` clause, so a move costs one
    round trip less; elsewhere the two statements run in turn.  Same rows, same errors:
    ``IntegrityError`` when the game has ply ``ply`` already, :class:`ActionError` ``stale``
    when the version moved (the inserted row goes with the transaction's rollback).
    """
    conn, sql = _connection()
    if not sql.insert_with_update:
        insert_move(game, *played)
        bump(game, **changes)
        return
    params = _move_params(conn, sql, game, *played)
    update, update_params = _update(conn, sql, game, changes)
    with conn.cursor() as cursor:
        cursor.execute(f"WITH inserted_move AS ({sql.insert_move}) {update}", params + update_params)
        updated = cursor.rowcount
    _updated(game, changes, updated)


def writes_unlocked() -> bool:
    """Whether a move may be written by :func:`move_if_unchanged` now: outside any transaction
    (an action that already holds the row writes through its transaction).  Connects first when
    it may, so that the wait for a connection comes before the move's time is taken, as the row
    lock's does on the locked way (that time is charged to nobody)."""
    conn, _ = _connection()
    if conn.in_atomic_block:
        return False
    conn.ensure_connection()
    return True


def move_if_unchanged(game: Game, played: tuple[int, str, str], changes: dict[str, Any]) -> bool:
    """Store ``played`` (ply, notation, FEN after it) and ``changes`` as :func:`insert_move_and_bump`
    does, if the stored game still has ``game.version``; returns whether it did.

    ``game`` is a copy of the row this process kept after the game's last change
    (:class:`game.round.records.Kept`), not a row read now.  Every change of a game advances its
    version (:func:`bump`), so a row with the same version holds the same values: the move was
    decided on what is stored.  On PostgreSQL it is one statement on its own (autocommit within
    :func:`without_waiting`; outside it, in a transaction that waits for the row at most
    ``DATABASE_LOCK_TIMEOUT_MS``, then raises :class:`ActionError` ``busy``): it
    locks the row only at that version (``NOWAIT`` within :func:`without_waiting`, as
    :func:`load_for_update`), updates it only then and inserts the ply only if it updated it.
    Elsewhere (SQLite, whose writers take turns for the whole database) the conditional
    ``UPDATE`` and then the ``INSERT`` run in one transaction.  False, with nothing stored, when
    the version moved; raises :class:`RowBusy` when another transaction holds the row (within
    :func:`without_waiting`), ``IntegrityError`` when the game has ply ``ply`` already.  On
    success ``game`` holds the stored values.
    """
    conn, sql = _connection()
    if not sql.insert_with_update:
        return _move_if_unchanged_in_turn(conn, sql, game, played, changes)
    nowait = never_waits()
    statement, params = _kept_move_statement(game, played, changes, nowait=nowait)
    with (contextlib.nullcontext() if nowait else transaction.atomic(using=conn.alias, savepoint=False)), \
            _busy_when_held(game.pk), conn.cursor() as cursor:
        if not nowait:
            wait_for_locks_at_most(conn.alias)   # a wait for the row, limited in its own transaction
        cursor.execute(statement, params)
        inserted = cursor.rowcount
    if inserted != 1:
        return False
    _updated(game, changes, 1)
    return True


def _move_if_unchanged_in_turn(conn: Any, sql: _MovePathSql, game: Game, played: tuple[int, str, str],
                               changes: dict[str, Any]) -> bool:
    """:func:`move_if_unchanged` where the ``INSERT`` cannot ride in the ``UPDATE``: both in one
    transaction, the ``INSERT`` only after the ``UPDATE`` found the kept version."""
    update, params = _update(conn, sql, game, changes)
    with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
        cursor.execute(update, params)
        if cursor.rowcount != 1:
            return False
        cursor.execute(sql.insert_move, _move_params(conn, sql, game, *played))
    _updated(game, changes, 1)
    return True


def _kept_move_statement(game: Game, played: tuple[int, str, str], changes: dict[str, Any],
                         nowait: bool) -> tuple[str, list[Any]]:
    """The one statement of :func:`move_if_unchanged` and its parameters (``%s`` placeholders);
    ``changes`` gains what :func:`_update` adds."""
    conn, sql = _connection()
    params = _move_params(conn, sql, game, *played)
    update, update_params = _update(conn, sql, game, changes)
    key = update_params[-2:]   # the id and the version its WHERE ends with
    lock = sql.lock_game_at_version_nowait if nowait else sql.lock_game_at_version
    return (f"WITH locked AS ({lock}),"
            f" updated AS ({update} AND EXISTS (SELECT 1 FROM locked) RETURNING 1)"
            f" {sql.insert_move_select} FROM updated", key + update_params + params)


def _update(conn: Any, sql: _MovePathSql, game: Game, changes: dict[str, Any]) -> tuple[str, list[Any]]:
    """The conditional ``UPDATE`` of :func:`bump` and its parameters; ``changes`` gains the
    version and ``updated_at`` (now, unless given)."""
    changes["version"] = game.version + 1
    changes.setdefault("updated_at", timezone.now())
    qn = conn.ops.quote_name
    meta = Game._meta
    assignments, params = [], []
    for name, value in changes.items():
        f = meta.get_field(name)
        assert isinstance(f, Field), name  # a concrete field of the game, not a reverse relation
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
    return (f"UPDATE {sql.game_table} SET {', '.join(assignments)}"
            f" WHERE {sql.game_pk_column} = %s AND {sql.game_version_column} = %s", params)


def _updated(game: Game, changes: dict[str, Any], updated: int) -> None:
    """After :func:`_update`'s statement changed ``updated`` rows: ``stale`` unless one, else
    ``game`` takes ``changes``."""
    if updated != 1:
        raise ActionError("stale", _("The game changed meanwhile; your board has been refreshed."))
    for name, value in changes.items():
        setattr(game, name, value)


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
