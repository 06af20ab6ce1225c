"""The pages of rated games: the home page's Rated box, the refusal to guests, and a rated game's
invite link opened by a guest (told to sign in, never seated) and by an account (joins)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from game.models import Account, Game
from tests.ratings.helpers import account

pytestmark = pytest.mark.django_db


def signed_in(username: str) -> Client:
    """A browser signed in to a new account ``username``, playing with the account's player id."""
    player_id = account(username)
    client = Client()
    client.force_login(User.objects.get(username=username))
    session = client.session
    session["player_id"] = player_id
    session["account"] = username
    session.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key
    return client


def create(client: Client, **fields) -> object:
    return client.post("/", {"name": "", "color": "W", "time_control": "5+0", "opening": "free", **fields})


def test_the_rated_box_is_for_signed_in_players():
    assert 'name="rated"' not in Client().get("/").content.decode()
    assert 'name="rated"' in signed_in("alice").get("/").content.decode()


def test_a_guest_cannot_create_a_rated_game():
    response = create(Client(), rated="on")
    assert response.status_code == 400
    assert "Rated games are for signed-in players" in response.content.decode()
    assert not Game.objects.exists()


def test_an_untimed_rated_game_is_refused_on_the_form():
    response = create(signed_in("alice"), rated="on", time_control="untimed")
    assert response.status_code == 400 and "Untimed games are not rated" in response.content.decode()
    assert not Game.objects.exists()


def test_a_rated_invite_asks_a_guest_to_sign_in_and_lets_an_account_join():
    alice = signed_in("alice")
    response = create(alice, rated="on", time_control="3d")
    game = Game.objects.get()
    assert response.status_code == 302 and game.rated and game.time_control == "3d"
    assert game.white_player == Account.objects.get(user__username="alice").player_id
    guest = Client()
    page = guest.get(f"/g/{game.id}/").content.decode()
    assert 'id="sign-in-to-join-link"' in page and 'id="join-form"' not in page
    assert f"next=%2Fg%2F{game.id}%2F" in page
    guest.post(f"/g/{game.id}/join", {"name": "mallory"})
    game.refresh_from_db()
    assert game.status == Game.Status.WAITING and not game.black_player
    bob = signed_in("bob")
    assert 'id="join-form"' in bob.get(f"/g/{game.id}/").content.decode()
    bob.post(f"/g/{game.id}/join", {"name": ""})
    game.refresh_from_db()
    assert game.status == Game.Status.ACTIVE and (game.black_rating, game.white_rating) == (1500, 1500)
    assert game.black_player == Account.objects.get(user__username="bob").player_id
