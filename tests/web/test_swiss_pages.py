"""A Swiss event made from the create form by a signed-in player, its page before the start and
with its first round's pairing board, in English and French; its socket telling each player of
their game of each round and sending the round's board."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from checkers_site.asgi import application
from game.models import Account, Game
from game.round import actions
from game.tournaments import arena, jobs, live, standings
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
    seated = Client()   # a Swiss game's seat is offered no berserk (an arena's only)
    seated.force_login(Account.objects.get(player_id=pairing.black).user)
    game_page = seated.get(f"/g/{pairing.game_id}/").content.decode()
    assert 'id="arena-link"' in game_page and 'id="game-berserk"' not in game_page
    french = client.get(f"/tournaments/{tournament.id}", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "Ronde 1 sur 4" in french


def test_bad_rounds_from_the_form_are_refused():
    client, _ = signed_in("maker")
    response = client.post("/tournaments/new", {"name": "Long", "system": "swiss", "time_control": "3+0",
                                                "minutes": 45, "rounds": 40, "starts_in": 10})
    assert response.status_code == 400
    assert not Tournament.objects.filter(name="Long").exists()


def test_ballot_pairs_from_the_form_show_on_the_page_and_are_refused_in_an_arena():
    client, _ = signed_in("maker")
    response = client.post("/tournaments/new", {"name": "Pairs", "system": "round_robin", "time_control": "3+2",
                                                "minutes": 45, "rounds": 3, "starts_in": 10, "ballot_pairs": "on"})
    assert response.status_code == 302
    tournament = Tournament.objects.get(name="Pairs")
    assert tournament.ballot and tournament.ballot_pairs
    assert "Round robin · Ballot pairs" in client.get(f"/tournaments/{tournament.id}").content.decode()
    refused = client.post("/tournaments/new", {"name": "Arena pairs", "system": "arena", "time_control": "3+0",
                                               "minutes": 45, "rounds": 3, "starts_in": 10, "ballot": "on",
                                               "ballot_pairs": "on"})
    assert refused.status_code == 400 and "Ballot pairs are played in a Swiss event" in refused.content.decode()
    assert not Tournament.objects.filter(name="Arena pairs").exists()


def round_games(tournament: Tournament, round_number: int) -> list[Game]:
    return list(Game.objects.filter(pairing__tournament=tournament, pairing__round=round_number))


async def test_the_socket_tells_each_player_of_each_rounds_game_and_sends_the_board(alice, bob):
    host = await sync_to_async(account)("host")
    tournament = await sync_to_async(arena.create)(host, "Four", "3+0", 0, timezone.now(), rated=False,
                                                   system=Tournament.System.SWISS, rounds=3)
    for index in range(2):
        await sync_to_async(arena.join)(tournament.id, await sync_to_async(account)(f"other{index}"), f"o{index}")
    sockets = {}
    for browser in (alice, bob):
        await sync_to_async(arena.join)(tournament.id, browser.player_id, browser.name)
        comm = WebsocketCommunicator(application, f"/ws/tournament/{tournament.id}/", headers=browser.headers())
        assert (await comm.connect())[0]
        first = await comm.receive_json_from(timeout=5)
        assert first["type"] == "standings" and first["system"] == "swiss" and first["board"] == []
        sockets[browser.player_id] = comm
    played: list[Game] = []
    for round_number in (1, 2):
        if round_number == 1:
            await sync_to_async(jobs.tick)(tournament.id)
        else:
            for game in played:                             # round 1 over: round 2 paired at once
                await sync_to_async(actions.resign)(game.id, game.white_player)
                await sync_to_async(jobs.game_over)(game.id)
        told = {player: (await comm.receive_json_from(timeout=5))["game"] for player, comm in sockets.items()}
        played = await sync_to_async(round_games)(tournament, round_number)
        assert len(played) == 2
        for player, game_id in told.items():
            assert player in {g.black_player for g in played if g.id == game_id} | {
                g.white_player for g in played if g.id == game_id}
    await sync_to_async(live.push_standings)(tournament.id)
    for comm in sockets.values():
        message = await comm.receive_json_from(timeout=5)
        assert (message["type"], message["round"], message["rounds"]) == ("standings", 2, 3)
        assert sorted(row["game"] for row in message["board"]) == sorted(g.id for g in played)
        assert [row["score"] for row in message["standings"]] == [1, 1, 0, 0]
        await comm.disconnect()
