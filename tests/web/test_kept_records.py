"""The record a process keeps after a game's move, for the game's next move (game/round/records.py):
the moves of a king endgame read no earlier plies, decide the end exactly as the whole game's
record does, and a game changed in between (any new version) or a move rolled back is read again.
Real database."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from game import rules
from game.models import Game
from game.round import actions, drawer, records

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB = "a" * 32, "b" * 32
#: Black's king on 1 and White's on 32, Black to move: 1-6 32-27 6-1 27-32 comes back to it.
KINGS = "B:WK32:BK1"
ROUND = ["1-6", "32-27", "6-1", "27-32"]


@pytest.fixture(autouse=True)
def nothing_kept():
    records.forget()
    yield
    records.forget()


def king_game() -> str:
    game = actions.create_game(ALICE, "alice", "B", start_fen=KINGS)
    actions.join_game(game.id, BOB, "bob")
    return game.id


def play(game_id: str, text: str) -> tuple[Game, list[str]]:
    """Play ``text`` for the side to move; the game after it and the statements it sent."""
    game = Game.objects.get(pk=game_id)
    player = ALICE if game.turn is rules.Color.BLACK else BOB
    with CaptureQueriesContext(connection) as queries:
        progress = actions.play_move(game_id, player, text, game.version)
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
        records.forget()
        game, statements = play(game_id, text)
        assert reads_of_moves(statements) == (1 if game.ply > 1 else 0)
    assert game.status == Game.Status.FINISHED
    assert game.result == "1/2-1/2"


def test_a_move_rolled_back_keeps_nothing():
    game_id = king_game()
    play(game_id, "1-6")
    game = Game.objects.get(pk=game_id)
    with pytest.raises(RuntimeError), transaction.atomic():
        actions.play_move(game_id, BOB, "32-27", game.version)
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
