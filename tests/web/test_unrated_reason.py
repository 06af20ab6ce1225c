"""A rated game whose end counted for nothing because its players' accounts are linked
(docs/ratings.md, "Results that count") says why to whoever opens it: the state's ``unrated``,
which the end banner shows as "Not rated: ..." in the page's language."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from game.models import Account
from game.ratings import links
from game.round import actions
from tests.ratings.helpers import account
from tests.ratings.test_rated_games import rated_game

pytestmark = pytest.mark.django_db(transaction=True)


def linked_game_resigned() -> str:
    sister, brother = account("sister"), account("brother")
    for player in (sister, brother):
        links.note_sign_in(Account.objects.get(player_id=player), None, "203.0.113.9", new=True)
    game = rated_game(sister, brother)
    actions.resign(game.id, brother)
    return game.id


@pytest.mark.asyncio
async def test_the_final_state_says_why_the_game_was_not_rated(carol):
    game_id = await database_sync_to_async(linked_game_resigned)()
    comm, snapshot = await carol.connect(game_id)
    state = snapshot["state"]
    assert (state["status"], state["rated"], state["unrated"]) == ("finished", True, "sign_up")
    assert (state["seats"]["B"]["diff"], state["seats"]["W"]["diff"]) == (0, 0)
    await comm.disconnect()


@pytest.mark.parametrize("language, words", [
    ("fr", "Non classée : les deux comptes ont été créés depuis la même adresse réseau."),
    ("es", "No puntuable: las dos cuentas se crearon desde la misma dirección de red."),
])
def test_the_banners_words_are_translated(language, words):
    """The scripts' catalog of the language carries the end banner's sentence for a sign-up link."""
    catalog = Client().get(f"/jsi18n/{language}/x/")
    assert catalog.status_code == 200
    text = catalog.content.decode()
    assert json.dumps(words)[1:-1] in text or words in text
