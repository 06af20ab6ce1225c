"""Game services against the real database, including truly concurrent submissions."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from game import services
from game.models import Game

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB, CAROL = "a" * 32, "b" * 32, "c" * 32


def test_create_game_seats_creator_in_chosen_colour():
    game = services.create_game(ALICE, "  alice  ", "W")
    assert (game.white_player, game.white_name, game.black_player) == (ALICE, "alice", "")
    assert game.status == Game.Status.WAITING
    assert game.fen == "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"


def test_create_game_random_colour_seats_creator_once():
    seats = {services.create_game(ALICE, "alice", "random").seat_of(ALICE) for _ in range(40)}
    assert seats == {"B", "W"}


@pytest.mark.parametrize("name", ["", "   ", "x" * 25, "bell\x07", None, 42])
def test_create_game_bad_name_refused(name):
    with pytest.raises(services.ActionError) as exc:
        services.create_game(ALICE, name, "B")
    assert exc.value.code == "bad_name"
    assert Game.objects.count() == 0


def test_create_game_bad_colour_and_fen_refused():
    with pytest.raises(services.ActionError) as exc:
        services.create_game(ALICE, "alice", "red")
    assert exc.value.code == "bad_color"
    with pytest.raises(services.ActionError) as exc:
        services.create_game(ALICE, "alice", "B", "B:W33:B1")
    assert exc.value.code == "bad_fen"
    assert Game.objects.count() == 0


def test_join_takes_free_seat_then_others_watch():
    game = services.create_game(ALICE, "alice", "B")
    outcome = services.join_game(game.id, BOB, "bob")
    assert outcome.game.white_player == BOB
    assert outcome.game.status == Game.Status.ACTIVE
    assert [e["type"] for e in outcome.events] == ["seats"]
    with pytest.raises(services.ActionError) as exc:
        services.join_game(game.id, CAROL, "carol")
    assert exc.value.code == "seats_taken"
    again = services.join_game(game.id, BOB, "bob")  # reopening the link keeps the seat
    assert again.events == [] and again.game.version == outcome.game.version


def test_join_unknown_game_refused():
    with pytest.raises(services.ActionError) as exc:
        services.join_game("nosuchgame", BOB, "bob")
    assert exc.value.code == "no_such_game"


def test_concurrent_submissions_for_one_ply_land_once():
    """Eight threads, each with its own database connection, submit a move for ply 1 at once."""
    game = services.create_game(ALICE, "alice", "B")
    services.join_game(game.id, BOB, "bob")
    game.refresh_from_db()
    barrier = threading.Barrier(8)
    results = []
    moves = ["9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16", "11-15"]

    def submit(text):
        try:
            barrier.wait()
            try:
                services.play_move(game.id, ALICE, text, game.version)
                results.append("ok")
            except services.ActionError as exc:
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
    game = services.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))
    assert (game.seat_of(ALICE), game.seat_of(BOB), game.seat_of(CAROL)) == ("B", "W", None)
    assert game.status == Game.Status.ACTIVE
    outcome = services.play_move(game.id, ALICE, "11-15", game.version)
    assert outcome.game.ply == 1
