"""The game row's per-move ``UPDATE`` is a HOT update on PostgreSQL (no index entry written): no
index of ``game_game`` holds a column a move changes, and the table keeps room on each page
(``fillfactor``, migration ``game/0011``).  Counted by PostgreSQL itself
(``pg_stat_user_tables``: ``n_tup_upd`` against ``n_tup_hot_upd``) over a recorded game played
through the move action, every move committed on its own.  SQLite has no HOT updates: skipped."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from game import rules
from game.models import Game
from game.round import actions

pytestmark = pytest.mark.django_db(transaction=True)

DATA = Path(__file__).resolve().parent.parent / "data"
ALICE, BOB = "a" * 32, "b" * 32


def recorded_moves() -> list[str]:
    """The first game of the OCA archive in the tests' data, move by move (full notation)."""
    with open(DATA / "OCA_2.0.pdn", encoding="utf-8") as handle:
        record = next(rules.read_games(handle))
    game = rules.Game()
    for text in record.moves:
        game.play(text)
    return [str(m) for m in game.moves]


def game_row_updates() -> tuple[int, int]:
    """``(updates, HOT updates)`` of ``game_game`` so far, this connection's own counts flushed first."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")   # flushed when the statement ends
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = %s",
                       [Game._meta.db_table])
        return cursor.fetchone()


def test_every_move_of_a_played_game_updates_the_game_row_in_place():
    if connection.vendor != "postgresql":
        pytest.skip("HOT updates are PostgreSQL's: run with DATABASE_URL=postgres://...")
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [Game._meta.db_table])
        assert cursor.fetchone()[0] == ["fillfactor=80"]
    moves = recorded_moves()
    game = actions.create_game(ALICE, "alice", "B", time_control="10+5")
    actions.join_game(game.id, BOB, "bob")
    updates, hot = game_row_updates()
    kept = None
    for text in moves:
        game = Game.objects.get(pk=game.id)
        progress = actions.play_move(game.id, game.player(game.turn), text, game.version, kept=kept)
        kept = progress.kept
    game = Game.objects.get(pk=game.id)
    assert game.ply == len(moves) >= 40
    after, hot_after = game_row_updates()
    # One update of the row per move (the last one may end the game, which changes the status).
    assert after - updates == len(moves)
    assert hot_after - hot >= len(moves) - 1
