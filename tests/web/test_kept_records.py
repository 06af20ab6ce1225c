"""The row and record a process keeps after a game's move, for the game's next move
(game/round/records.py, handed from move to move as a game's Round does): the moves of a king
endgame read no earlier plies, decide the end exactly as the whole game's record does, and a game
changed in between (any new version) or a move rolled back is read again.  Real database."""

from __future__ import annotations

import copy
import threading
import time

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from prometheus_client import REGISTRY

from game import errors, rules
from game.models import Game
from game.round import actions, drawer, signals, store
from game.round.records import Kept
from tests.web.conftest import row_held

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB = "a" * 32, "b" * 32
#: Black's king on 1 and White's on 32, Black to move: 1-6 32-27 6-1 27-32 comes back to it.
KINGS = "B:WK32:BK1"
ROUND = ["1-6", "32-27", "6-1", "27-32"]


#: What each game's Round would keep after its last move here.
_kept: dict[str, Kept | None] = {}


@pytest.fixture(autouse=True)
def nothing_kept():
    _kept.clear()
    yield
    _kept.clear()


def king_game() -> str:
    game = actions.create_game(ALICE, "alice", "B", start_fen=KINGS)
    actions.join_game(game.id, BOB, "bob")
    return game.id


def play(game_id: str, text: str) -> tuple[Game, list[str]]:
    """Play ``text`` for the side to move; the game after it and the statements it sent."""
    game = Game.objects.get(pk=game_id)
    player = ALICE if game.turn is rules.Color.BLACK else BOB
    with CaptureQueriesContext(connection) as queries:
        progress = actions.play_move(game_id, player, text, game.version, kept=_kept.pop(game_id, None))
    _kept[game_id] = progress.kept
    return progress.game, [q["sql"] for q in queries.captured_queries]


def reads_of_moves(statements: list[str]) -> int:
    """The statements that read stored moves (the plies since the last capture or man move)."""
    return sum(1 for sql in statements if sql.lstrip().upper().startswith("SELECT") and "game_move" in sql)


def test_a_king_endgame_reads_no_earlier_plies_and_draws_on_the_third_occurrence():
    game_id = king_game()
    whole = rules.Game(rules.Position.from_fen(KINGS))
    for ply, text in enumerate(ROUND * 2, start=1):
        game, statements = play(game_id, text)
        whole.play(text)
        assert reads_of_moves(statements) == 0, (ply, statements)
        assert (game.ply, game.no_progress, game.fen) == (ply, whole.no_progress_plies, whole.position.fen())
        assert game.is_over is whole.is_over
    # The start position a third time after eight plies: drawn, as the rules' own record says.
    assert whole.outcome is not None and whole.outcome.termination is rules.Termination.REPETITION
    assert game.status == Game.Status.FINISHED
    assert game.result == "1/2-1/2"


def test_a_game_changed_between_two_moves_is_read_again():
    game_id = king_game()
    play(game_id, "1-6")
    drawer.offer_draw(game_id, BOB)  # White offers a draw: a new version, not made by a move
    game, statements = play(game_id, "32-27")
    assert reads_of_moves(statements) == 1
    assert game.no_progress == 2
    # The record read then is kept in turn: the next move reads nothing.
    _, statements = play(game_id, "6-1")
    assert reads_of_moves(statements) == 0


def test_a_record_forgotten_is_read_again_with_the_same_outcome():
    """As on another process (which keeps nothing of this game): the repetition still counts."""
    game_id = king_game()
    for text in ROUND * 2:
        _kept.clear()
        game, statements = play(game_id, text)
        assert reads_of_moves(statements) == (1 if game.ply > 1 else 0)
    assert game.status == Game.Status.FINISHED
    assert game.result == "1/2-1/2"


def test_a_move_rolled_back_keeps_nothing():
    game_id = king_game()
    play(game_id, "1-6")
    game = Game.objects.get(pk=game_id)
    with pytest.raises(RuntimeError), transaction.atomic():
        actions.play_move(game_id, BOB, "32-27", game.version, kept=_kept.pop(game_id))
        raise RuntimeError("the caller's transaction fails after the move")
    game, statements = play(game_id, "32-28")
    assert reads_of_moves(statements) == 1
    assert (game.ply, game.fen) == (2, "B:WK28:BK6")


def test_a_capture_keeps_a_record_that_starts_from_it():
    game = actions.create_game(ALICE, "alice", "B", start_fen="B:WK32,K10:BK1,K5")
    actions.join_game(game.id, BOB, "bob")
    game, _ = play(game.id, "5-9")
    game, _ = play(game.id, "10-14")   # White moves away; Black's king on 9 cannot jump 14 (18 is free)
    game, _ = play(game.id, "9x18")
    assert game.no_progress == 0
    game, statements = play(game.id, "32-27")
    assert reads_of_moves(statements) == 0
    assert game.no_progress == 1


# The row kept with the record: a move after one played here is decided on it and stored by one
# conditional write (one statement on PostgreSQL, the UPDATE then the INSERT on SQLite), as long
# as the stored version is still the kept row's.

postgresql_only = pytest.mark.skipif("connection.vendor != 'postgresql'",
                                     reason="PostgreSQL's row locks")


def stored_by_row() -> tuple[float, float]:
    """``checkers_moves_stored_total`` so far: moves decided on a kept row, on a locked row."""
    return tuple(REGISTRY.get_sample_value("checkers_moves_stored_total", {"row": row}) or 0.0
                 for row in ("kept", "locked"))


def test_a_move_after_one_played_here_is_one_statement_and_stores_what_the_locked_way_stores():
    game_id = king_game()
    kept, locked = stored_by_row()
    first, statements = play(game_id, "1-6")
    assert [sql.split()[0] for sql in statements if not sql.startswith("SET LOCAL")][:2] == ["BEGIN", "SELECT"]
    assert stored_by_row() == (kept, locked + 1)
    game, statements = play(game_id, "32-27")
    if connection.vendor == "postgresql":
        # Outside without_waiting the one statement waits for the row, within a transaction that
        # limits the wait (game/locks.py); the Round's way (NOWAIT) sends it alone.
        assert [sql.split()[0] for sql in statements] == ["BEGIN", "SET", "WITH", "COMMIT"]
        assert "FOR UPDATE" in statements[2] and "INSERT INTO" in statements[2]
        assert "NOWAIT" not in statements[2]   # outside without_waiting, as load_for_update
        assert stored_by_row() == (kept + 1, locked + 1)
    else:
        assert [sql.split()[0] for sql in statements] == ["BEGIN", "UPDATE", "INSERT", "COMMIT"]
        assert stored_by_row() == (kept + 1, locked + 1)
    stored = Game.objects.get(pk=game_id)
    assert (game.ply, game.version, game.fen) == (2, first.version + 1, "B:WK27:BK6")
    assert (stored.ply, stored.version, stored.fen, stored.position_version) == (
        2, first.version + 1, "B:WK27:BK6", first.version + 1)
    assert stored.updated_at == game.updated_at and stored.turn_started_at == game.turn_started_at
    assert list(stored.move_set.order_by("ply").values_list("ply", "notation")) == [(1, "1-6"), (2, "32-27")]


def test_a_game_ended_elsewhere_refuses_the_move_kept_here():
    """White resigns (any process: it leaves this process's kept row behind); Black's move is
    then decided on the stored row: the game is over, and nothing is stored."""
    game_id = king_game()
    play(game_id, "1-6")
    play(game_id, "32-27")
    actions.resign(game_id, BOB)
    with pytest.raises(errors.ActionError) as exc:
        actions.play_move(game_id, ALICE, "6-1", Game.objects.get(pk=game_id).version, kept=_kept.pop(game_id))
    assert exc.value.code == "game_over"
    stored = Game.objects.get(pk=game_id)
    assert (stored.status, stored.ply, stored.move_set.count()) == (Game.Status.FINISHED, 2, 2)


def test_a_refused_move_leaves_the_game_as_it_was_and_the_next_one_plays():
    game_id = king_game()
    first, _ = play(game_id, "1-6")
    for text, code in (("32-23", "illegal_move"), ("hello", "malformed_move")):
        with pytest.raises(errors.ActionError) as exc:
            actions.play_move(game_id, BOB, text, first.version, kept=_kept.pop(game_id, None))
        assert exc.value.code == code
    with pytest.raises(errors.ActionError) as exc:
        actions.play_move(game_id, ALICE, "6-1", first.version, kept=_kept.pop(game_id, None))
    assert exc.value.code == "not_your_turn"
    stored = Game.objects.get(pk=game_id)
    assert (stored.ply, stored.version, stored.move_set.count()) == (1, first.version, 1)
    game, _ = play(game_id, "32-27")
    assert (game.ply, game.fen) == (2, "B:WK27:BK6")


def test_a_move_that_ends_a_game_from_a_kept_row_ends_it_as_the_locked_way_does():
    game = actions.create_game(ALICE, "alice", "B", start_fen="B:W18:B10")
    actions.join_game(game.id, BOB, "bob")
    play(game.id, "10-14")
    game, statements = play(game.id, "18x9")
    if connection.vendor == "postgresql":
        # After the commit, the end is announced: the tournaments ask whether it was an arena's game.
        assert [sql.split()[0] for sql in statements] == ["BEGIN", "SET", "WITH", "COMMIT", "SELECT"]
        assert "tournaments_pairing" in statements[-1]
    stored = Game.objects.get(pk=game.id)
    assert (stored.status, stored.result, stored.termination, stored.ply) == (
        Game.Status.FINISHED, "0-1", game.termination, 2)
    assert stored.finished_at is not None and stored.finished_at == stored.updated_at


@postgresql_only
def test_a_kept_move_on_a_row_held_elsewhere_is_busy_at_once_and_stores_nothing():
    game_id = king_game()
    first, _ = play(game_id, "1-6")
    with row_held(game_id), pytest.raises(store.RowBusy):
        store.without_waiting(actions.play_move)(game_id, BOB, "32-27", first.version, kept=_kept.pop(game_id))
    stored = Game.objects.get(pk=game_id)
    assert (stored.ply, stored.version, stored.move_set.count()) == (1, first.version, 1)
    game, _ = play(game_id, "32-27")
    assert (game.ply, game.version) == (2, first.version + 1)


@postgresql_only
def test_a_kept_move_on_a_row_held_elsewhere_waits_outside_without_waiting():
    game_id = king_game()
    first, _ = play(game_id, "1-6")
    with row_held(game_id, for_s=0.3):
        started = time.monotonic()
        game, statements = play(game_id, "32-27")
        waited = time.monotonic() - started
    assert [sql.split()[0] for sql in statements] == ["BEGIN", "SET", "WITH", "COMMIT"]
    assert waited >= 0.1, waited
    assert (game.ply, game.version) == (2, first.version + 1)


def test_racing_moves_for_a_kept_row_land_once():
    """Eight threads, each with its own connection and its own copy of the kept row (as eight
    processes that each kept it), submit White's reply at once: one move lands."""
    game_id = king_game()
    first, _ = play(game_id, "1-6")
    kept = _kept.pop(game_id)
    barrier = threading.Barrier(8)
    results = []

    def submit(text):
        try:
            mine = copy.deepcopy(kept)
            barrier.wait()
            try:
                actions.play_move(game_id, BOB, text, first.version, kept=mine)
                results.append("ok")
            except errors.ActionError as exc:
                results.append(exc.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit, args=(text,)) for text in ["32-27", "32-28"] * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count("ok") == 1, results
    assert set(results) - {"ok"} <= {"stale", "not_your_turn"}
    stored = Game.objects.get(pk=game_id)
    assert (stored.ply, stored.version, stored.move_set.count()) == (2, first.version + 1, 2)


def ended_as_announced(game_id: str, text: str) -> list[str]:
    """Play ``text``; the game's status as stored each time :data:`signals.game_ended` was sent."""
    seen: list[str] = []

    def receiver(sender, game, **kwargs):
        seen.append(Game.objects.get(pk=game.pk).status)

    signals.game_ended.connect(receiver)
    try:
        play(game_id, text)
    finally:
        signals.game_ended.disconnect(receiver)
    return seen


def test_a_game_ending_move_from_a_kept_row_is_announced_once_stored():
    game = actions.create_game(ALICE, "alice", "B", start_fen="B:W18:B10")
    actions.join_game(game.id, BOB, "bob")
    play(game.id, "10-14")
    assert ended_as_announced(game.id, "18x9") == [Game.Status.FINISHED]


def test_a_game_ending_move_whose_kept_row_moved_is_announced_once_by_the_locked_way():
    game = actions.create_game(ALICE, "alice", "B", start_fen="B:W18:B10")
    actions.join_game(game.id, BOB, "bob")
    play(game.id, "10-14")
    Game.objects.filter(pk=game.id).update(version=F("version") + 1)   # changed elsewhere: the kept row is stale
    assert ended_as_announced(game.id, "18x9") == [Game.Status.FINISHED]
    assert Game.objects.get(pk=game.id).move_set.count() == 2
