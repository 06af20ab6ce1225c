"""Names that only look empty (Hangul fillers, the blank Braille pattern, zero-width spaces,
combining marks alone) are refused as an empty name is, wherever a name is typed: the display
names of every form and of the lobby (game/names.py), and usernames at sign-up
(game/accounts/usernames.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from game.errors import ActionError
from game.models import Game
from game.names import clean_name, display_name, is_blank
from game.round import actions
from tests.web.test_accounts import PASSWORD, create_game, guest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_rate_limits")]

BLANK_LOOKING = ["\u2800", "\u2800\u2800\u2800", "\u3164", "\u115f", "\u1160\u1160", "\uffa0",
                 "\u200b", "\u200b\u200b\u200b", "\u0301", "\u0301\u0308\u0323", "\u3164 \u2800",
                 "\u2060\ufeff\u200d", "\u034f\u034f\u034f"]


def empty_name_error() -> ActionError:
    with pytest.raises(ActionError) as exc:
        clean_name("")
    return exc.value


@pytest.mark.parametrize("typed", BLANK_LOOKING)
def test_a_blank_looking_display_name_is_refused_as_an_empty_one(typed):
    assert is_blank(typed)
    expected = empty_name_error()
    for check in (clean_name, lambda name: display_name(name, "c" * 32)):
        with pytest.raises(ActionError) as exc:
            check(typed)
        assert (exc.value.code, str(exc.value.message)) == (expected.code, str(expected.message))


@pytest.mark.parametrize("typed", ["Ann\u3164", "\u2800Bo", "Zo\u0301e", "\u0905\u093f"])
def test_a_name_with_something_visible_in_it_is_kept(typed):
    assert not is_blank(typed) and clean_name(typed) == typed


@pytest.mark.parametrize("typed", ["\u2800\u2800", "\u3164", "\u200b\u200b", "\u0301"])
def test_the_forms_refuse_a_blank_looking_name(typed):
    client = guest()
    response = client.post("/", {"name": typed, "color": "B", "time_control": "untimed", "opening": "free"})
    assert response.status_code == 400
    assert "Choose a display name of 1 to 24 characters." in response.content.decode()
    assert not Game.objects.exists()
    game = create_game(guest())
    response = client.post(f"/g/{game.id}/join", {"name": typed})
    assert response.status_code in (200, 302, 400)
    game.refresh_from_db()
    assert not game.white_player
    with pytest.raises(ActionError) as exc:
        actions.join_game(game.id, "d" * 32, typed)
    assert exc.value.code == "bad_name"


@pytest.mark.parametrize("typed", ["\u3164\u3164\u3164", "\u2800\u2800\u2800\u2800", "\u200b\u200b\u200b",
                                   "\u115f\u115f\u115f", "\u0301\u0301\u0301"])
def test_a_blank_looking_username_is_refused_as_an_empty_one(typed):
    client = guest()
    empty = client.post("/accounts/signup/", {"username": "", "password1": PASSWORD, "password2": PASSWORD})
    response = client.post("/accounts/signup/", {"username": typed, "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 200 and User.objects.count() == 0
    assert empty.context["form"].errors["username"] == response.context["form"].errors["username"] \
        == ["This field is required."]


@pytest.mark.parametrize("typed", ["a" + "\u0301" * 10, "Zo\u0301\u0308\u0323\u0302e", "Bo" + "\u0e49" * 4])
def test_a_name_piling_marks_on_one_letter_is_refused(typed):
    """More than three combining marks on one character (a name that spills out of its bar) is refused
    on every form and in the actions; real letters with two or three marks are kept."""
    with pytest.raises(ActionError) as exc:
        clean_name(typed)
    assert exc.value.code == "bad_name"
    client = guest()
    response = client.post("/", {"name": typed, "color": "B", "time_control": "untimed", "opening": "free"})
    assert response.status_code == 400
    assert "A letter of a display name may carry at most three accents." in response.content.decode()
    assert not Game.objects.exists()


@pytest.mark.parametrize("typed", ["Vi\u1ec7t", "Vie\u0323\u0302t", "\u0915\u094d\u0937\u093f", "ก\u0e34\u0e49"])
def test_letters_with_their_own_marks_are_kept(typed):
    assert clean_name(typed) == typed
