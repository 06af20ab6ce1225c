"""The home page's "Create game" form sent with errors answers 400, as the site's other forms do
(joining a game, "Play the computer", deleting an account), with the errors shown on the page and
nothing created (game/views.py, ``home``)."""

from __future__ import annotations

import pytest
from django.test import Client

from game.models import Game

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize(("form", "words"), [
    ({"name": "x" * 25, "color": "B"}, "at most 24 characters"),
    ({"name": "alice", "color": "purple"}, "Select a valid choice. purple is not one of the available choices."),
    ({"name": "alice", "color": "B", "time_control": "3 hours"}, "Select a valid choice."),
    ({"name": "alice", "color": "B", "opening": "ballot", "ballot": "3"}, "is barred"),
    ({"name": "Guest 4821", "color": "B"}, "kept for the site"),
    # A guest's page has no "Rated" box, but the reason of a refused rated request is still shown.
    ({"name": "alice", "color": "B", "time_control": "untimed", "rated": "on"}, "Untimed games are not rated"),
])
def test_a_new_game_form_with_errors_answers_400_and_shows_them(form, words):
    client = Client()
    assert client.get("/").status_code == 200
    response = client.post("/", form)
    assert response.status_code == 400
    page = response.content.decode()
    assert words in page and 'name="color"' in page      # the form again, with its errors
    assert not Game.objects.exists()


def test_a_good_form_still_goes_to_the_game():
    response = Client().post("/", {"name": "alice", "color": "B"})
    assert response.status_code == 302 and Game.objects.count() == 1
