"""Rated results must be earned (docs/ratings.md, "Results that count"), on the real database: a
game given up before each side made two moves is aborted, not rated; accounts linked by a browser
or by their sign-up address count nothing against each other; the same two players' games past
the first few of a day count less; leaving rated games unplayed again and again closes rated
play for a while."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from game import rules
from game.errors import ActionError
from game.models import Account, AccountDevice, Departure, Game, Rating, RatingChange
from game.ratings import links, playban
from game.round import actions, reads, store
from game.round.progress import Change, finished, store_update
from game.rules import Color
from tests.ratings.helpers import account
from tests.ratings.test_rated_games import OPENING, rated_game

pytestmark = pytest.mark.django_db


def started(black: str, white: str, control: str = "5+3") -> Game:
    game = actions.create_game(black, "black", "B", time_control=control, rated=True)
    actions.join_game(game.id, white, "white")
    return Game.objects.get(pk=game.id)


def rating(player_id: str) -> Rating | None:
    return Rating.objects.filter(player_id=player_id).first()


@pytest.mark.parametrize("plies", [0, 1, 2, 3])
def test_a_rated_game_given_up_before_each_side_made_two_moves_is_aborted_not_rated(plies):
    farmer, puppet = account("farmer"), account("puppet")
    game = started(puppet, farmer)
    for ply, text in enumerate(OPENING[:plies]):
        actions.play_move(game.id, (puppet, farmer)[ply % 2], text, reads.version(game.id))
    progress = actions.resign(game.id, puppet)
    [event] = progress.events
    assert event["what"] == "aborted" and event["state"]["status"] == "aborted"
    stored = Game.objects.get(pk=game.id)
    assert (stored.status, stored.result, stored.termination) == (Game.Status.ABORTED, "*", "aborted")
    assert stored.black_rating_diff is None and stored.finished_at is not None
    assert rating(farmer) is None and rating(puppet) is None
    assert not RatingChange.objects.filter(game=stored).exists()
    assert list(Departure.objects.values_list("player_id", "kind")) == [(puppet, playban.ABORTED)]


def test_after_two_moves_each_the_result_counts():
    alice, bob = account("alice"), account("bob")
    game = rated_game(alice, bob)
    actions.resign(game.id, bob)
    stored = Game.objects.get(pk=game.id)
    assert stored.status == Game.Status.FINISHED and stored.black_rating_diff > 0
    assert not Departure.objects.exists()


def test_a_claim_against_an_absent_player_before_the_result_is_earned_aborts_and_notes_the_absent_one():
    """As a claim ends a game (game/round/claims.py): White, to move, left; Black claims the win."""
    alice, bob = account("alice"), account("bob")
    game = started(alice, bob)
    for ply, text in enumerate(OPENING[:3]):
        actions.play_move(game.id, (alice, bob)[ply % 2], text, reads.version(game.id))
    with transaction.atomic():
        locked = store.load_for_update(game.id)
        progress = store_update(locked, Color.BLACK, Change("claimed_win", finished(
            rules.Outcome(rules.Termination.ABANDONED, Color.BLACK))))
    assert progress.events[0]["state"]["status"] == "aborted"
    assert list(Departure.objects.values_list("player_id", "kind")) == [(bob, playban.ABANDONED)]


def test_accounts_signed_in_from_one_browser_count_nothing_against_each_other():
    farmer, puppet = account("farmer"), account("puppet")
    device = links.new_device_id()
    for player in (farmer, puppet):
        links.note_sign_in(Account.objects.get(player_id=player), device, None, new=False)
    assert links.link(farmer, puppet) == "browser"
    game = rated_game(puppet, farmer)
    [event] = actions.resign(game.id, puppet).events
    # The players are told why the game counted for nothing (the end banner's "Not rated: ...").
    assert (event["state"]["unrated"], event["state"]["seats"]["B"]["diff"]) == ("browser", 0)
    stored = Game.objects.get(pk=game.id)
    assert stored.status == Game.Status.FINISHED and stored.result == "0-1"
    assert (stored.black_rating_diff, stored.white_rating_diff, stored.unrated_reason) == (0, 0, "browser")
    assert rating(farmer) is None and not RatingChange.objects.exists()


def test_a_browser_seen_long_apart_links_nobody():
    a, b = account("a"), account("b")
    device = links.new_device_id()
    links.note_sign_in(Account.objects.get(player_id=a), device, None, new=False,
                       now=timezone.now() - timedelta(days=links.DEVICE_LINK_DAYS + 1))
    links.note_sign_in(Account.objects.get(player_id=b), device, None, new=False)
    assert links.link(a, b) is None


def test_accounts_signed_up_from_one_address_count_once_each_has_played_others():
    sister, brother = account("sister"), account("brother")
    for player in (sister, brother):
        links.note_sign_in(Account.objects.get(player_id=player), None, "203.0.113.7", new=True)
    assert Account.objects.get(player_id=sister).signed_up_from == links.address_key("203.0.113.7") != ""
    assert links.link(sister, brother) == "sign_up"
    game = rated_game(sister, brother)
    [event] = actions.resign(game.id, brother).events
    assert event["state"]["unrated"] == "sign_up"
    assert Game.objects.get(pk=game.id).black_rating_diff == 0
    # Each plays others; from the fifth such game on, their games against each other count.
    for n in range(links.PLAYED_OTHERS):
        for player in (sister, brother):
            other = account(f"other{n}{player[:4]}")
            actions.resign(rated_game(player, other).id, other)
    assert links.link(sister, brother) is None
    game = rated_game(sister, brother)
    [event] = actions.resign(game.id, brother).events
    assert event["state"]["unrated"] is None
    assert Game.objects.get(pk=game.id).black_rating_diff > 0


def test_the_same_two_players_games_past_three_a_day_count_half_as_much_each_time():
    alice, bob = account("alice"), account("bob")
    gains = []
    for _ in range(5):
        before = rating(alice).rating if rating(alice) else 1500.0
        actions.resign(rated_game(alice, bob).id, bob)
        gains.append(rating(alice).rating - before)
    full = gains[:3]
    assert all(gain > 0 for gain in full)
    # The fourth counts half of what it would; the fifth a quarter.
    assert 0 < gains[3] < full[2] and 0 < gains[4] < gains[3]
    changes = list(RatingChange.objects.filter(player_id=alice).order_by("at", "id"))
    assert len(changes) == 5


def test_three_departures_in_a_day_close_rated_play_for_a_while_then_longer():
    leaver, other = account("leaver"), account("other")
    for _ in range(playban.FREE):
        actions.resign(started(leaver, other).id, leaver)          # at ply 0: aborted, noted
        playban.check(leaver)                                       # free
    actions.resign(started(leaver, other).id, leaver)
    with pytest.raises(ActionError) as refused:
        actions.create_game(leaver, "leaver", "B", time_control="5+3", rated=True)
    assert refused.value.code == "playban"
    assert 0 < playban.cooldown_s(leaver) <= playban.FIRST_COOLDOWN_S
    waiting = actions.create_game(other, "other", "W", time_control="5+3", rated=True)
    with pytest.raises(ActionError) as refused:
        actions.join_game(waiting.id, leaver, "leaver")
    assert refused.value.code == "playban"
    assert Game.objects.get(pk=waiting.id).status == Game.Status.WAITING
    casual = actions.create_game(leaver, "leaver", "B", time_control="5+3")   # casual games stay open
    assert not casual.rated
    # A fourth doubles the cooldown; past it, rated play opens again.
    Departure.objects.create(player_id=leaver, game=casual, kind=playban.ABORTED, at=timezone.now())
    assert playban.FIRST_COOLDOWN_S < playban.cooldown_s(leaver) <= 2 * playban.FIRST_COOLDOWN_S
    assert playban.cooldown_s(leaver, now=timezone.now() + timedelta(seconds=2 * playban.FIRST_COOLDOWN_S + 1)) == 0


def test_every_browser_gets_a_cookie_of_its_own_and_a_sign_up_notes_it_and_the_address():
    client = Client(REMOTE_ADDR="198.51.100.4")
    response = client.get("/")
    device = response.cookies[links.DEVICE_COOKIE].value
    assert links.is_device_id(device) and response.cookies[links.DEVICE_COOKIE]["httponly"]
    assert links.DEVICE_COOKIE not in client.get("/").cookies          # kept, not renewed
    response = client.post("/accounts/signup/", {"username": "Tess", "email": "", "password1": "Tess-Pass-2026!",
                                                 "password2": "Tess-Pass-2026!"})
    assert response.status_code == 302
    tess = Account.objects.get(user__username="Tess")
    assert list(AccountDevice.objects.filter(account=tess).values_list("device", flat=True)) == [device]
    assert tess.signed_up_from == links.address_key("198.51.100.4")
