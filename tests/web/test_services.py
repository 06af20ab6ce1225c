"""Game services against the real database, including truly concurrent submissions."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from django.db import connection, transaction
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from game import errors
from game.models import Game, Move
from game.round import actions, drawer, finisher, store
from game.rules import Color

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB, CAROL = "a" * 32, "b" * 32, "c" * 32


def test_create_game_seats_creator_in_chosen_colour():
    game = actions.create_game(ALICE, "  alice  ", "W")
    assert (game.white_player, game.white_name, game.black_player) == (ALICE, "alice", "")
    assert game.status == Game.Status.WAITING
    assert game.fen == "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"


def test_create_game_random_colour_seats_creator_once():
    seats = {actions.create_game(ALICE, "alice", "random").seat_of(ALICE) for _ in range(40)}
    assert seats == {Color.BLACK, Color.WHITE}


@pytest.mark.parametrize("name", ["", "   ", "x" * 25, "bell\x07", None, 42])
def test_create_game_bad_name_refused(name):
    with pytest.raises(errors.ActionError) as exc:
        actions.create_game(ALICE, name, "B")
    assert exc.value.code == "bad_name"
    assert Game.objects.count() == 0


def test_create_game_bad_colour_and_fen_refused():
    with pytest.raises(errors.ActionError) as exc:
        actions.create_game(ALICE, "alice", "red")
    assert exc.value.code == "bad_color"
    with pytest.raises(errors.ActionError) as exc:
        actions.create_game(ALICE, "alice", "B", "B:W33:B1")
    assert exc.value.code == "bad_fen"
    assert Game.objects.count() == 0


def test_join_takes_free_seat_then_others_watch():
    game = actions.create_game(ALICE, "alice", "B")
    outcome = actions.join_game(game.id, BOB, "bob")
    assert outcome.game.white_player == BOB
    assert outcome.game.status == Game.Status.ACTIVE
    assert [e["type"] for e in outcome.events] == ["seats"]
    with pytest.raises(errors.ActionError) as exc:
        actions.join_game(game.id, CAROL, "carol")
    assert exc.value.code == "seats_taken"
    again = actions.join_game(game.id, BOB, "bob")  # reopening the link keeps the seat
    assert again.events == [] and again.game.version == outcome.game.version


def test_join_unknown_game_refused():
    with pytest.raises(errors.ActionError) as exc:
        actions.join_game("nosuchgame", BOB, "bob")
    assert exc.value.code == "no_such_game"


def test_concurrent_submissions_for_one_ply_land_once():
    """Eight threads, each with its own database connection, submit a move for ply 1 at once."""
    game = actions.create_game(ALICE, "alice", "B")
    actions.join_game(game.id, BOB, "bob")
    game.refresh_from_db()
    barrier = threading.Barrier(8)
    results = []
    moves = ["9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16", "11-15"]

    def submit(text):
        try:
            barrier.wait()
            try:
                actions.play_move(game.id, ALICE, text, game.version)
                results.append("ok")
            except errors.ActionError as exc:
                results.append(exc.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(m,)) for m in moves]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    game.refresh_from_db()
    assert results.count("ok") == 1, results
    assert set(results) - {"ok"} <= {"stale", "not_your_turn"}
    assert game.ply == 1
    assert game.move_set.count() == 1
    assert game.version == 2


def test_start_game_seats_both_players_and_is_active():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    assert (game.seat_of(ALICE), game.seat_of(BOB), game.seat_of(CAROL)) == (Color.BLACK, Color.WHITE, None)
    assert game.status == Game.Status.ACTIVE
    outcome = actions.play_move(game.id, ALICE, "11-15", game.version)
    assert outcome.game.ply == 1


# The move path's plain SQL (lock, insert, conditional update) against what the ORM does.

def row_of(model, pk) -> dict:
    """The stored row of ``model`` ``pk`` as the driver returns it (before any conversion)."""
    meta = model._meta
    qn = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {qn(meta.db_table)} WHERE {qn(meta.pk.column)} = %s", [pk])
        names = [column[0] for column in cursor.description]
        return dict(zip(names, cursor.fetchone(), strict=False))


def described(instance) -> dict:
    """Every concrete field of ``instance``: its value, type and time zone offset."""
    return {f.attname: (getattr(instance, f.attname), type(getattr(instance, f.attname)),
                        getattr(getattr(instance, f.attname), "utcoffset", lambda: None)())
            for f in type(instance)._meta.concrete_fields}


def test_the_locked_game_is_the_game_the_orm_loads():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="5+3")
    actions.play_move(game.id, ALICE, "11-15", game.version)
    drawer.offer_draw(game.id, BOB)
    with transaction.atomic():
        loaded = store.load_for_update(game.id)
    expected = Game.objects.get(pk=game.id)
    assert described(loaded) == described(expected)
    assert loaded.turn_started_at.tzinfo is not None and loaded.black_ms is not None
    assert (loaded._state.adding, loaded._state.db) == (False, expected._state.db)
    assert loaded.status is not None and loaded.is_over is False and loaded.seat_of(BOB) is Color.WHITE


def test_locking_outside_a_transaction_is_refused_where_rows_lock():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    if connection.features.has_select_for_update:
        with pytest.raises(TransactionManagementError):
            store.load_for_update(game.id)
    else:
        assert store.load_for_update(game.id).pk == game.id


@pytest.mark.parametrize("game_id", ["nosuchgame", "", "x" * 100, "ab'c", "a\x00b", "\ud800", "é", 123, None])
def test_moves_in_no_game_are_refused_whatever_the_id(game_id):
    actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    with pytest.raises(errors.ActionError) as exc:
        actions.play_move(game_id, ALICE, "11-15", 1)
    assert exc.value.code == "no_such_game"
    with pytest.raises(errors.ActionError) as exc:
        actions.resign(game_id, ALICE)
    assert exc.value.code == "no_such_game"


def test_a_second_move_for_a_stored_ply_is_stale():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    Move.objects.create(game=game, ply=1, notation="9-13", fen_after=game.fen)
    with pytest.raises(errors.ActionError) as exc:
        actions.play_move(game.id, ALICE, "11-15", game.version)
    assert exc.value.code == "stale"
    game.refresh_from_db()
    assert (game.ply, game.version, game.move_set.count()) == (0, 0, 1)


def test_a_move_locks_then_stores_its_ply_and_the_game_in_one_statement_on_postgresql():
    """The first move of a game this process has played nothing of (its next ones:
    ``tests/web/test_kept_records.py``)."""
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    version = actions.play_move(game.id, ALICE, "11-15", game.version).game.version
    with CaptureQueriesContext(connection) as queries:
        actions.play_move(game.id, BOB, "22-18", version)
    sent = [q["sql"].split()[0] for q in queries.captured_queries]
    if connection.vendor == "postgresql":
        assert sent == ["BEGIN", "SET", "SELECT", "WITH", "COMMIT"]   # SET: lock_timeout for this transaction
        assert "INSERT INTO" in queries.captured_queries[3]["sql"]
    else:
        assert sent == ["BEGIN", "SELECT", "INSERT", "UPDATE", "COMMIT"]
    game.refresh_from_db()
    assert (game.ply, game.version) == (2, version + 1)
    assert list(game.move_set.values_list("ply", "notation")) == [(1, "11-15"), (2, "22-18")]


def test_a_move_whose_version_moved_meanwhile_stores_no_ply():
    """The conditional update finds no row: the ply inserted with it goes with the rollback (and
    so does the other write, made here in the same transaction)."""
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    with pytest.raises(errors.ActionError) as exc, transaction.atomic():
        loaded = store.load_for_update(game.id)
        Game.objects.filter(pk=game.pk).update(version=loaded.version + 7)
        store.insert_move_and_bump(loaded, (1, "11-15", game.fen), {"ply": 1})
    assert exc.value.code == "stale"
    assert (loaded.ply, loaded.version) == (0, game.version)
    game.refresh_from_db()
    assert (game.ply, game.version, game.move_set.count()) == (0, 0, 0)


def test_moves_are_stored_as_the_orm_stores_them(monkeypatch):
    now = datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: now)
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    other = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    actions.play_move(game.id, ALICE, "11-15", game.version)
    played = game.move_set.get()
    by_orm = Move.objects.create(game=other, ply=1, notation=played.notation, fen_after=played.fen_after)
    ours, theirs = row_of(Move, played.pk), row_of(Move, by_orm.pk)
    for row in (ours, theirs):
        del row["id"], row["game_id"]
    assert ours == theirs
    assert played.played_at == now


def test_bump_stores_what_an_orm_update_stores(monkeypatch):
    now = datetime(2024, 2, 29, 23, 59, 58, 123456, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: now)
    games = [actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="5+3")
             for _ in range(2)]
    rematches = [actions.start_game(black=(BOB, "bob"), white=(ALICE, "alice")) for _ in range(2)]
    started = datetime(2023, 12, 31, 22, 0, 1, 5, tzinfo=UTC)
    changes = {"status": Game.Status.FINISHED, "result": "1-0", "termination": "resignation",
               "turn_started_at": started, "black_ms": None, "white_ms": 12345678901,
               "draw_offer": "", "ply": 3}
    with transaction.atomic():
        game = store.load_for_update(games[0].id)
        store.bump(game, **finisher.complete(game, dict(changes)), next_game=rematches[0])
    # The end of a game stamps finished_at too (finisher.complete, for every way a game ends).
    Game.objects.filter(pk=games[1].pk, version=games[1].version).update(
        **changes, next_game=rematches[1], version=games[1].version + 1, updated_at=now, finished_at=now)
    ours, theirs = row_of(Game, games[0].pk), row_of(Game, games[1].pk)
    assert ours.pop("id") != theirs.pop("id")
    assert (ours.pop("next_game_id"), theirs.pop("next_game_id")) == (rematches[0].pk, rematches[1].pk)
    assert ours == theirs
    stored = Game.objects.get(pk=games[0].pk)
    assert {f.attname: getattr(game, f.attname) for f in Game._meta.concrete_fields} \
        == {f.attname: getattr(stored, f.attname) for f in Game._meta.concrete_fields}
    assert game.next_game == rematches[0] and game.version == 1 and game.updated_at == now


def test_bump_after_someone_else_wrote_is_stale_and_changes_nothing():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    with pytest.raises(errors.ActionError) as exc, transaction.atomic():
        loaded = store.load_for_update(game.id)
        Game.objects.filter(pk=game.pk).update(version=5)
        store.bump(loaded, draw_offer="B")
    assert exc.value.code == "stale"
    assert loaded.draw_offer == "" and loaded.version == 0
    game.refresh_from_db()
    assert (game.version, game.draw_offer) == (0, "")
