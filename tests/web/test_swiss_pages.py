"""A Swiss event made from the create form by a signed-in player, its page before the start and
with its first round's pairing board, in English and French."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from game.models import Account
from game.tournaments import arena, jobs, standings
from game.tournaments.models import Pairing, Tournament
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


def signed_in(username: str) -> tuple[Client, str]:
    player = account(username)
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client, Account.objects.get(player_id=player).player_id


def test_a_player_makes_a_swiss_from_the_form_and_its_page_shows_the_round_board():
    client, _ = signed_in("maker")
    response = client.post("/tournaments/new", {"name": "Club Swiss", "system": "swiss", "time_control": "3+0",
                                                "minutes": 45, "rounds": 4, "starts_in": 10, "rated": "on"})
    assert response.status_code == 302
    tournament = Tournament.objects.get(name="Club Swiss")
    assert (tournament.system, tournament.rounds, tournament.rated) == ("swiss", 4, True)
    before = client.get(f"/tournaments/{tournament.id}").content.decode()
    assert "4 rounds · Swiss" in before and 'id="pairing-board"' in before and 'id="berserk"' not in before
    assert "Swiss · 4 rounds" in client.get("/tournaments").content.decode()
    players = [account(f"p{i}") for i in range(3)]
    for index, player in enumerate(players):
        arena.join(tournament.id, player, f"p{index}")
    Tournament.objects.filter(pk=tournament.id).update(starts_at=timezone.now())
    jobs.tick(tournament.id)
    pairing = Pairing.objects.get(tournament=tournament)
    page = client.get(f"/tournaments/{tournament.id}").content.decode()
    assert "Round 1 of 4" in page and f'href="/g/{pairing.game_id}/"' in page and ">Bye<" in page
    board = standings.public(tournament.id)["board"]
    assert [row["white"] is None for row in board] == [False, True]
    french = client.get(f"/tournaments/{tournament.id}", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "Ronde 1 sur 4" in french


def test_bad_rounds_from_the_form_are_refused():
    client, _ = signed_in("maker")
    response = client.post("/tournaments/new", {"name": "Long", "system": "swiss", "time_control": "3+0",
                                                "minutes": 45, "rounds": 40, "starts_in": 10})
    assert response.status_code == 400
    assert not Tournament.objects.filter(name="Long").exists()
