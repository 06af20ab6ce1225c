"""Two rated games of one player ending at the same moment, from two threads with their own
database connections: both count, one after the other (the second from the first's result),
and neither waits for ever.  Row locks are PostgreSQL's; SQLite runs one writer at a time."""

from __future__ import annotations

import itertools
import threading

import pytest
from django.db import connection, connections, transaction

from game.models import Game, Rating, RatingChange
from game.round import actions, reads
from tests.ratings.helpers import account
from tests.ratings.test_rated_games import OPENING

pytestmark = pytest.mark.django_db(transaction=True)


def started(black: str, white: str) -> Game:
    game = actions.create_game(black, "black", "B", time_control="3+2", rated=True)
    actions.join_game(game.id, white, "white")
    for ply, text in enumerate(OPENING):      # two moves a side: the result counts
        actions.play_move(game.id, (black, white)[ply % 2], text, reads.version(game.id))
    return game


def end_at_once(ends: list[tuple[str, str]]) -> list[Exception]:
    """Resign each ``(game id, loser)`` of ``ends`` from a thread of its own, all released at
    once; returns what the threads raised."""
    barrier = threading.Barrier(len(ends))
    errors: list[Exception] = []

    def resign(game_id: str, loser: str) -> None:
        try:
            barrier.wait(timeout=10)
            actions.resign(game_id, loser)
        except Exception as exc:  # noqa: BLE001 - reported in the test's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=resign, args=end) for end in ends]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    return errors


@pytest.mark.parametrize("rounds", [3])
def test_two_games_of_one_player_ending_at_once_both_count_in_order(rounds):
    if connection.vendor != "postgresql":
        pytest.skip("row locks: run with DATABASE_URL=postgres://...")
    alice, bob, carol = account("alice"), account("bob"), account("carol")
    for round_ in range(rounds):
        games = [started(alice, bob), started(alice, carol)]
        assert end_at_once([(games[0].id, bob), (games[1].id, carol)]) == []
        mine = Rating.objects.get(player_id=alice, category="blitz")
        assert (mine.games, mine.wins) == (2 * (round_ + 1), 2 * (round_ + 1))
    history = list(RatingChange.objects.filter(player_id=alice).order_by("id"))
    assert len(history) == 2 * rounds
    # In order: each game starts from the rating the one before it left.
    assert history[0].before == 1500
    for earlier, later in itertools.pairwise(history):
        assert later.before == pytest.approx(earlier.after)
        assert later.after > later.before
    assert mine.rating == pytest.approx(history[-1].after)
    # Each game's diff is what its change did.
    for change in history:
        game = Game.objects.get(pk=change.game_id)
        assert game.black_rating_diff == round(change.after) - round(change.before)


def test_a_rating_deleted_while_the_game_s_end_waits_for_it_starts_again():
    """An account deleted while one of its rated games ends: its Rating row goes (account
    deletion) while the game's end waits for the row's lock; the end still rates the game, from a
    new player's rating, and the game ends."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks: run with DATABASE_URL=postgres://...")
    alice, bob = account("alice"), account("bob")
    game = started(alice, bob)
    Rating.objects.create(player_id=alice, category="blitz", rating=1800.0, deviation=60.0)
    locked, release = threading.Event(), threading.Event()

    def delete_alices_rating() -> None:
        try:
            with transaction.atomic():
                list(Rating.objects.select_for_update().filter(player_id=alice))
                locked.set()
                release.wait(timeout=10)
                Rating.objects.filter(player_id=alice).delete()
        finally:
            connections.close_all()

    deleter = threading.Thread(target=delete_alices_rating)
    deleter.start()
    assert locked.wait(timeout=10)
    threading.Timer(0.5, release.set).start()   # the end below is waiting for the row by then
    actions.resign(game.id, bob)
    deleter.join(timeout=10)
    game = Game.objects.get(pk=game.id)
    assert game.status == Game.Status.FINISHED and game.black_rating_diff is not None
    mine = Rating.objects.get(player_id=alice)
    assert mine.games == 1 and mine.rating > 1500
