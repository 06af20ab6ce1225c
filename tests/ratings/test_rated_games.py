"""Rated games on the real database: who may play one, the ratings they start with, the end that
rates them in the same transaction (every way a game ends), what the state shows, and what is
never rated (aborted, unrated, the computer, guests)."""

from __future__ import annotations

import io

import pytest
from django.db import transaction

from game.computer import seat as computer
from game.errors import ActionError
from game.models import Game, Rating, RatingChange
from game.ratings import games as ratings
from game.ratings import glicko
from game.round import actions, drawer, reads, store
from game.rules import pdn
from tests.ratings.helpers import account, guest

pytestmark = pytest.mark.django_db


#: Two moves a side: a rated game's result counts from there (game/round/finisher.py, ``earned``).
OPENING = ["11-15", "23-19", "8-11", "22-18"]


def rated_game(black: str, white: str, control: str = "5+3") -> Game:
    """A rated game created by ``black`` and joined by ``white``, both having moved twice."""
    game = actions.create_game(black, "black", "B", time_control=control, rated=True)
    actions.join_game(game.id, white, "white")
    for ply, text in enumerate(OPENING):
        actions.play_move(game.id, (black, white)[ply % 2], text, reads.version(game.id))
    return Game.objects.get(pk=game.id)


def test_a_rated_game_starts_with_both_ratings_and_its_end_rates_both_players():
    alice, bob = account("alice"), account("bob")
    game = rated_game(alice, bob)
    assert game.rated and (game.black_rating, game.white_rating) == (1500, 1500)
    assert game.black_rating_diff is None and game.finished_at is None
    progress = actions.resign(game.id, bob)       # White resigns: Black wins
    game = Game.objects.get(pk=game.id)
    won = glicko.after_game(glicko.Glicko(), glicko.Glicko(), 1.0, ratings.TAU)
    lost = glicko.after_game(glicko.Glicko(), glicko.Glicko(), 0.0, ratings.TAU)
    assert game.black_rating_diff == round(won.rating) - 1500 > 0
    assert game.white_rating_diff == round(lost.rating) - 1500 < 0
    assert game.finished_at == game.updated_at
    a, b = Rating.objects.get(player_id=alice), Rating.objects.get(player_id=bob)
    assert a.category == b.category == "blitz"
    assert (a.rating, a.deviation) == (pytest.approx(won.rating), pytest.approx(won.deviation))
    assert (a.games, a.wins, a.losses) == (1, 1, 0)
    assert (b.rating, b.games, b.wins, b.losses) == (pytest.approx(lost.rating), 1, 0, 1)
    changes = {c.player_id: c for c in RatingChange.objects.filter(game=game)}
    assert changes[alice].before == 1500 and changes[alice].after == pytest.approx(won.rating)
    assert changes[bob].after == pytest.approx(lost.rating) and changes[bob].category == "blitz"
    # The update event and every later snapshot carry the ratings and the diffs.
    seats = progress.events[0]["state"]["seats"]
    assert progress.events[0]["state"]["rated"] is True
    assert seats["B"] == {"name": "black", "rating": 1500, "provisional": True, "diff": game.black_rating_diff}
    assert seats["W"] == {"name": "white", "rating": 1500, "provisional": True, "diff": game.white_rating_diff}
    assert reads.snapshot(game.id, None)["state"]["seats"] == seats


def test_ratings_carry_from_game_to_game_and_a_draw_counts():
    alice, bob = account("alice"), account("bob")
    actions.resign(rated_game(alice, bob).id, bob)
    after_first = Rating.objects.get(player_id=alice).rating
    game = rated_game(bob, alice)                  # the rematch's colours: alice is White
    bob_now = Rating.objects.get(player_id=bob).rating
    assert (game.black_rating, game.white_rating) == (round(bob_now), round(after_first))
    drawer.offer_draw(game.id, alice)
    drawer.accept_draw(game.id, bob)
    game = Game.objects.get(pk=game.id)
    a = Rating.objects.get(player_id=alice)
    assert (a.games, a.wins, a.draws) == (2, 1, 1)
    assert a.rating < after_first                  # the stronger player drew: a little lost
    assert game.white_rating_diff == round(a.rating) - round(after_first) < 0 < game.black_rating_diff
    history = list(RatingChange.objects.filter(player_id=alice).order_by("id"))
    assert [c.before for c in history] == [1500, pytest.approx(after_first)]


def test_the_end_on_time_rates_too():
    from datetime import timedelta

    from django.utils import timezone

    alice, bob = account("alice"), account("bob")
    game = rated_game(alice, bob, control="1+0")
    later = timezone.now() + timedelta(minutes=2)
    progress = actions.check_clock(game.id, now=later)
    assert progress.events[0]["what"] == "flagged"
    game = Game.objects.get(pk=game.id)
    assert game.result == "0-1" and game.black_rating_diff < 0 < game.white_rating_diff
    assert Rating.objects.get(player_id=alice).category == "bullet"


def test_the_end_of_the_rating_write_is_the_end_of_the_game_s_transaction():
    alice, bob = account("alice"), account("bob")
    game = rated_game(alice, bob)
    with pytest.raises(RuntimeError), transaction.atomic():
        actions.resign(game.id, bob)
        raise RuntimeError("the game's end is rolled back")
    assert not Rating.objects.exists() and not RatingChange.objects.exists()
    assert Game.objects.get(pk=game.id).status == Game.Status.ACTIVE


def test_a_stale_end_changes_no_rating():
    alice, bob = account("alice"), account("bob")
    game = rated_game(alice, bob)
    with transaction.atomic():
        locked = store.load_for_update(game.id)
        locked.version -= 1          # as if another transaction had written meanwhile
        with pytest.raises(ActionError) as caught, transaction.atomic():
            store.bump(locked, status=Game.Status.FINISHED, result="1-0", termination="resignation")
    assert caught.value.code == "stale"
    assert not Rating.objects.exists() and not RatingChange.objects.exists()


def test_an_aborted_rated_game_changes_no_rating():
    alice, bob = account("alice"), account("bob")
    game = actions.create_game(alice, "alice", "B", time_control="3d", rated=True)
    actions.join_game(game.id, bob, "bob")
    actions.abort(game.id, bob)
    game = Game.objects.get(pk=game.id)
    assert game.status == Game.Status.ABORTED and game.finished_at is not None
    assert game.black_rating_diff is None and game.white_rating_diff is None
    assert not Rating.objects.exists() and not RatingChange.objects.exists()
    assert "diff" not in reads.snapshot(game.id, None)["state"]["seats"]["B"]


def test_an_unrated_game_between_accounts_changes_no_rating():
    alice, bob = account("alice"), account("bob")
    game = actions.create_game(alice, "alice", "B", time_control="5+3")
    actions.join_game(game.id, bob, "bob")
    actions.play_move(game.id, alice, "11-15", reads.version(game.id))
    actions.play_move(game.id, bob, "23-19", reads.version(game.id))
    progress = actions.resign(game.id, bob)
    game = Game.objects.get(pk=game.id)
    assert not game.rated and game.black_rating is None and game.black_rating_diff is None
    assert game.finished_at is not None
    assert not Rating.objects.exists() and not RatingChange.objects.exists()
    state = progress.events[0]["state"]
    assert state["rated"] is False and state["seats"]["B"] == {"name": "alice"}


def test_guests_the_computer_and_untimed_games_are_never_rated():
    alice, visitor = account("alice"), guest()
    with pytest.raises(ActionError) as caught:
        actions.create_game(visitor, "guest", "B", time_control="5+3", rated=True)
    assert caught.value.code == "sign_in_required"
    with pytest.raises(ActionError) as caught:
        actions.create_game(alice, "alice", "B", time_control="untimed", rated=True)
    assert caught.value.code == "unrated_control"
    with pytest.raises(ActionError) as caught:
        actions.start_game((alice, "alice"), (computer.player_id(3), "Computer (level 3)"), "5+3", rated=True)
    assert caught.value.code == "sign_in_required"
    with pytest.raises(ActionError) as caught:
        actions.start_game((alice, "alice"), (visitor, "guest"), "5+3", rated=True)
    assert caught.value.code == "sign_in_required"
    assert not Game.objects.exists()


def test_a_guest_cannot_join_a_rated_game_and_the_seat_stays_free():
    alice = account("alice")
    game = actions.create_game(alice, "alice", "W", time_control="10+5", rated=True)
    with pytest.raises(ActionError) as caught:
        actions.join_game(game.id, guest(), "guest")
    assert caught.value.code == "sign_in_required"
    game = Game.objects.get(pk=game.id)
    assert game.status == Game.Status.WAITING and not game.black_player and game.version == 0


def test_matchmaking_and_rematches_start_rated_games_with_the_ratings():
    alice, bob = account("alice"), account("bob")
    game = actions.start_game((alice, "alice"), (bob, "bob"), "3+2", rated=True)
    assert game.rated and (game.black_rating, game.white_rating) == (1500, 1500)
    for ply, text in enumerate(OPENING):
        actions.play_move(game.id, (alice, bob)[ply % 2], text, reads.version(game.id))
    actions.resign(game.id, alice)
    from game.round import rematcher

    rematcher.offer_rematch(game.id, alice)
    rematcher.offer_rematch(game.id, bob)
    rematch = Game.objects.get(pk=Game.objects.get(pk=game.id).next_game_id)
    assert rematch.rated and rematch.black_player == bob
    assert rematch.black_rating == round(Rating.objects.get(player_id=bob).rating) > 1500


def test_settle_refuses_what_is_no_rated_end():
    alice, bob = account("alice"), account("bob")
    game = rated_game(alice, bob)
    with pytest.raises(ValueError):
        ratings.settle(game, "*")
    with pytest.raises(ValueError):
        ratings.settle(Game(id="x", black_player=alice, white_player=alice, time_control="5+3"), "1-0")
    with pytest.raises(ValueError):
        ratings.start_fields(alice, bob, "untimed")


def test_a_move_that_wins_rates_the_game():
    alice, bob = account("alice"), account("bob")
    game = rated_game(alice, bob, control="3d")
    # Set up an ending (as if the game had gone on): Black to move takes White's last piece.
    Game.objects.filter(pk=game.id).update(fen="B:W18:B14", no_progress=0, ply=4)
    progress = actions.play_move(game.id, alice, "14x23", reads.version(game.id))
    game = Game.objects.get(pk=game.id)
    assert (game.status, game.result, game.termination) == (Game.Status.FINISHED, "1-0", "no_pieces")
    assert game.black_rating_diff > 0 > game.white_rating_diff
    assert Rating.objects.get(player_id=alice).category == "correspondence"
    assert progress.events[0]["state"]["seats"]["B"]["diff"] == game.black_rating_diff


def test_a_rated_game_s_pdn_has_the_ratings_and_their_changes():
    alice, bob = account("alice"), account("bob")
    game = rated_game(alice, bob)
    assert '[BlackElo "1500"]' in reads.game_pdn(game.id, site="test")
    actions.resign(game.id, bob)
    game = Game.objects.get(pk=game.id)
    text = reads.game_pdn(game.id, site="test")
    assert '[Event "Rated game"]' in text and '[WhiteElo "1500"]' in text
    assert f'[BlackRatingDiff "+{game.black_rating_diff}"]' in text
    assert f'[WhiteRatingDiff "-{-game.white_rating_diff}"]' in text
    (read,) = pdn.read_games(io.StringIO(text))        # still a PDN game the site reads back
    assert (read.tags["Event"], read.tags["BlackElo"], read.result) == ("Rated game", "1500", "1-0")
    assert pdn.replay(read).rejection is None


def test_a_player_back_after_a_year_moves_faster_than_one_who_played_yesterday():
    from datetime import timedelta

    from django.utils import timezone

    alice, bob = account("alice"), account("bob")
    for pid, days in ((alice, 365), (bob, 1)):
        Rating.objects.create(player_id=pid, category="blitz", rating=1800.0, deviation=60.0, games=30)
        Rating.objects.filter(player_id=pid).update(updated_at=timezone.now() - timedelta(days=days))
    game = rated_game(alice, bob)
    assert (game.black_rating, game.white_rating) == (1800, 1800)
    actions.resign(game.id, alice)         # the one back from a year away loses
    game = Game.objects.get(pk=game.id)
    assert -game.black_rating_diff > game.white_rating_diff > 0
    a, b = Rating.objects.get(player_id=alice), Rating.objects.get(player_id=bob)
    assert a.deviation > b.deviation > 45
    change = RatingChange.objects.get(game=game, player_id=alice)
    assert change.before == 1800 and change.after == pytest.approx(a.rating)
