"""One rule for an empty name on every form: the visitor's generated guest name ("Guest 4821").

The home page's "Create game", "Play the computer" and joining a game through the invite link
are tested here; "Play online" (the lobby socket) in tests/web/test_matchmaking.py
(``test_seek_without_a_name_plays_as_the_visitors_guest``).
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import translation

from game.errors import ActionError
from game.models import Game
from game.names import display_name, guest_name

pytestmark = pytest.mark.django_db(transaction=True)


def visitor() -> tuple[Client, str]:
    """A browser that opened the home page, and its session's player id."""
    client = Client()
    assert client.get("/").status_code == 200
    return client, client.session["player_id"]


def test_guest_name_is_stable_per_visitor_and_numbered():
    a, b = "a" * 32, "b" * 32
    with translation.override("en"):   # a request of an earlier test may have left another language active
        assert re.fullmatch(r"Guest [1-9]\d{3}", guest_name(a))
        assert guest_name(a) == guest_name(a)
        assert guest_name(a) != guest_name(b)  # these two ids differ in their numbers
        assert re.fullmatch(r"Guest [1-9]\d{3}", guest_name(None))


@pytest.mark.parametrize("typed", ["", "   ", None, "\t\n"])
def test_display_name_of_nothing_typed_is_the_guest_name(typed):
    assert display_name(typed, "c" * 32) == guest_name("c" * 32)


@pytest.mark.parametrize("typed", ["x" * 25, "bad\x00name", 12])
def test_display_name_refuses_what_cannot_be_a_name(typed):
    with pytest.raises(ActionError) as exc:
        display_name(typed, "c" * 32)
    assert exc.value.code == "bad_name"


@pytest.mark.parametrize("typed", ["", "    "])
def test_create_game_with_an_empty_name_plays_as_the_guest(typed):
    client, pid = visitor()
    home = client.get("/").content.decode()
    assert f'placeholder="{guest_name(pid)}"' in home  # the box says what an empty name gives
    response = client.post("/", {"name": typed, "color": "B"})
    assert response.status_code == 302
    game = Game.objects.get()
    assert (game.black_player, game.black_name) == (pid, guest_name(pid))
    assert "name" not in client.session  # nothing typed is remembered


def test_join_with_an_empty_name_plays_as_the_guest():
    alice, _ = visitor()
    alice.post("/", {"name": "alice", "color": "B"})
    game = Game.objects.get()
    bob, bob_id = visitor()
    page = bob.get(f"/g/{game.id}/").content.decode()
    assert f'placeholder="{guest_name(bob_id)}"' in page
    response = bob.post(f"/g/{game.id}/join", {"name": "  "})
    assert response.status_code == 302
    game.refresh_from_db()
    assert (game.white_player, game.white_name, game.status) == (bob_id, guest_name(bob_id), "active")


def test_play_the_computer_with_an_empty_name_plays_as_the_guest():
    client, pid = visitor()
    client.post("/", {"name": "Remembered", "color": "B"})  # a name typed before...
    Game.objects.all().delete()
    response = client.post("/computer", {"name": "", "level": "1", "color": "B"})  # ...then emptied
    assert response.status_code == 302
    game = Game.objects.get()
    assert (game.black_player, game.black_name) == (pid, guest_name(pid))


def test_one_visitor_is_the_same_guest_on_every_form():
    client, pid = visitor()
    client.post("/", {"name": "", "color": "W"})
    client.post("/computer", {"name": "", "level": "2", "color": "W"})
    names = {g.white_name for g in Game.objects.all()}
    assert names == {guest_name(pid)}


def test_a_typed_name_is_still_used_and_remembered():
    client, _ = visitor()
    client.post("/", {"name": "  Ann   Lee ", "color": "B"})
    assert Game.objects.get().black_name == "Ann Lee"
    assert client.session["name"] == "Ann Lee"
    assert 'value="Ann Lee"' in client.get("/").content.decode()


# ---- names that pass for someone else's ------------------------------------------------------------

@pytest.mark.parametrize("typed", ["Computer (level 5)", "computer", "Guest 4821", "guest12", "  GUEST  1 ",
                                   "Invité 4821", "Invitado 1234", "Ordenador (nivel 3)", "ordinateur",
                                   "deleted player", "C-o-m-p-u-t-e-r",
                                   "Gu\u0435st 1234", "\uff27\uff55\uff45\uff53\uff54 1", "\u0421omputer"])
def test_a_name_passing_for_the_sites_own_players_is_refused_everywhere(typed):
    with pytest.raises(ActionError) as exc:
        display_name(typed, "c" * 32)
    assert exc.value.code == "name_reserved"
    client, _ = visitor()
    response = client.post("/", {"name": typed, "color": "B"})
    assert "kept for the site" in response.content.decode()
    assert Game.objects.count() == 0
    alice, _ = visitor()
    alice.post("/", {"name": "alice", "color": "B"})
    game = Game.objects.get()
    response = client.post(f"/g/{game.id}/join", {"name": typed})
    assert response.status_code == 400
    game.refresh_from_db()
    assert game.white_player == "" and game.status == Game.Status.WAITING
    response = client.post("/computer", {"name": typed, "color": "B", "level": "1"})
    assert response.status_code == 400
    assert Game.objects.count() == 1


@pytest.mark.parametrize("typed", ["Computing Club", "Botvinnik", "Ann", "Invincible"])
def test_names_that_merely_begin_alike_are_fine(typed):
    assert display_name(typed, "c" * 32) == typed


def test_an_accounts_username_is_refused_to_anyone_else_but_its_own_player_plays_under_it():
    from django.contrib.auth.models import User

    from game.models import Account

    user = User.objects.create_user(username="Marion", password="Long-Pass-2026!")
    Account.objects.create(user=user, player_id="d" * 32)
    guest, _ = visitor()
    # Also the look-alikes: full-width letters, an accent added, Cyrillic letters drawn like Latin ones.
    for typed in ("Marion", "marion", " MARION ", "\uff2darion", "Mario\u0301n", "M\u0430ri\u043en", "Mari\u03bfn"):
        response = guest.post("/", {"name": typed, "color": "B"})
        assert "belongs to a player with an account" in response.content.decode(), typed
    assert Game.objects.count() == 0
    marion = Client()
    marion.force_login(user)
    assert marion.get("/").status_code == 200
    response = marion.post("/", {"name": "Marion", "color": "B"})  # sent anyway: played as the username
    assert response.status_code == 302, response.content.decode()[:500]
    assert Game.objects.get().black_name == "Marion"
