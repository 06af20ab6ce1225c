"""The tournament pages and their socket: the list with the next hourly arena, joining from the
page (a guest refused a rated arena, to that browser only), berserk from the page, the live
standings and a paired player's message over the tournament's socket; no player id shown."""

from __future__ import annotations

import django_rq
import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from checkers_site.asgi import application
from game.models import Game
from game.round import actions
from game.tournaments import arena, jobs, live, schedule, socket, standings
from game.tournaments.models import Entry, Tournament
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def empty_queue():
    """The ``tournaments`` queue, its scheduled jobs and the arenas' keys in Redis, empty before and after."""
    clear_tournament_jobs()
    yield django_rq.get_queue(jobs.QUEUE)
    clear_tournament_jobs()


def client_of(browser) -> Client:
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = browser.cookie
    return client


def test_the_list_shows_the_next_hourly_arena_and_the_header_links_to_it():
    schedule.create_ahead()
    page = Client().get("/tournaments")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Hourly Blitz Arena" in text and 'id="tournaments-link"' in text
    assert Tournament.objects.filter(status="created").count() == len(schedule.HOURLY) * schedule.HOURS_AHEAD
    french = Client(HTTP_ACCEPT_LANGUAGE="fr").get("/tournaments").content.decode()
    assert "Arène Blitz de l&#x27;heure" in french and "Tournois" in french


def test_a_guest_joins_a_casual_arena_and_is_refused_a_rated_one(alice, bob):
    casual = arena.create(account("host"), "Casual", "3+0", 30, timezone.now(), rated=False)
    rated = arena.create(account("host2"), "Rated", "3+0", 30, timezone.now())
    response = client_of(alice).post(f"/tournaments/{casual.id}/join")
    assert response.status_code == 302
    assert Entry.objects.get(tournament=casual).player_id == alice.player_id
    refused = client_of(bob).post(f"/tournaments/{rated.id}/join", follow=True)
    assert "Rated games are for signed-in players" in refused.content.decode()
    assert not Entry.objects.filter(tournament=rated).exists()
    other = client_of(alice).get(f"/tournaments/{rated.id}").content.decode()
    assert "Rated games are for signed-in players" not in other


def test_a_guest_is_sent_to_sign_in_on_a_rated_arenas_page_and_an_account_may_join(alice):
    rated = arena.create(account("host3"), "Rated", "3+0", 30, timezone.now())
    guest = client_of(alice).get(f"/tournaments/{rated.id}").content.decode()
    assert 'id="join"' not in guest and 'id="sign-in-to-join"' in guest
    assert "Rated tournaments are for players with an account." in guest
    assert f'href="/accounts/login/?next=/tournaments/{rated.id}"' in guest
    french = client_of(alice).get(f"/tournaments/{rated.id}", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "Les tournois classés sont réservés aux joueurs qui ont un compte." in french
    member = Client()
    account("joiner")
    member.force_login(User.objects.get(username="joiner"))
    page = member.get(f"/tournaments/{rated.id}").content.decode()
    assert 'id="join"' in page and 'id="sign-in-to-join"' not in page


def test_berserk_from_the_page_goes_back_to_the_halved_game(alice, bob):
    tournament = arena.create(account("host"), "Casual", "3+0", 30, timezone.now(), rated=False)
    for browser in (alice, bob):
        client_of(browser).post(f"/tournaments/{tournament.id}/join")
    jobs.tick(tournament.id)
    pairing = arena.current_pairing(tournament.id, alice.player_id)
    page = client_of(alice).get(f"/tournaments/{tournament.id}").content.decode()
    assert 'id="berserk"' in page and f"/g/{pairing.game_id}/" in page
    game_page = client_of(alice).get(f"/g/{pairing.game_id}/").content.decode()
    assert 'id="game-berserk"' in game_page and 'id="arena-link"' in game_page
    response = client_of(alice).post(f"/tournaments/{tournament.id}/berserk")
    assert response.status_code == 302 and response.url == f"/g/{pairing.game_id}/"
    game = Game.objects.get(pk=pairing.game_id)
    seat = game.seat_of(alice.player_id)
    assert getattr(game, Game.ms_field(seat)) == 90_000
    again = client_of(alice).post(f"/tournaments/{tournament.id}/berserk", follow=True).content.decode()
    assert "You have gone berserk already" in again


def test_a_bad_tournament_id_is_a_plain_404():
    assert Client().get("/tournaments/nothere1").status_code == 404
    assert Client().get("/tournaments/%00").status_code == 404


async def test_the_socket_sends_standings_and_a_paired_players_game_to_that_player_only(alice, bob):
    host = await sync_to_async(account)("host")
    tournament = await sync_to_async(arena.create)(host, "Casual", "3+0", 30, timezone.now(),
                                                   rated=False)
    for browser in (alice, bob):
        await sync_to_async(arena.join)(tournament.id, browser.player_id, browser.name)
    sockets = {}
    for browser in (alice, bob):
        comm = WebsocketCommunicator(application, f"/ws/tournament/{tournament.id}/", headers=browser.headers())
        assert (await comm.connect())[0]
        first = await comm.receive_json_from(timeout=5)
        assert first["type"] == "standings" and first["players"] == 2
        sockets[browser.name] = comm
    await sync_to_async(jobs.tick)(tournament.id)   # starts and pairs: each player's socket is told
    for browser in (alice, bob):
        message = await sockets[browser.name].receive_json_from(timeout=5)
        assert message["type"] == "paired"
        game = await sync_to_async(Game.objects.get)(pk=message["game"])
        assert game.seat_of(browser.player_id) is not None and message["url"] == f"/g/{game.id}/"
    await sync_to_async(live.push_standings)(tournament.id)
    for comm in sockets.values():
        standings = await comm.receive_json_from(timeout=5)
        assert standings["type"] == "standings" and standings["status"] == "started"
        assert all(row["playing"] for row in standings["standings"])
        await comm.disconnect()


async def test_the_socket_refuses_unknown_arenas(alice):
    gone = WebsocketCommunicator(application, "/ws/tournament/nothere2/", headers=alice.headers())
    assert (await gone.connect())[0]
    assert (await gone.receive_output(timeout=5))["code"] == socket.CLOSE_NO_SUCH_TOURNAMENT


def test_a_finished_arena_offers_every_game_in_one_pdn_file(alice, bob):
    tournament = arena.create(account("host"), "Friday Arena", "3+0", 30, timezone.now(), rated=False)
    for browser in (alice, bob):
        client_of(browser).post(f"/tournaments/{tournament.id}/join")
    jobs.tick(tournament.id)
    game = Game.objects.get(pk=arena.current_pairing(tournament.id, alice.player_id).game_id)
    for text in ("11-15", "23-19"):
        game.refresh_from_db()
        actions.play_move(game.id, game.player(game.turn), text, game.version)
    actions.resign(game.id, game.black_player)
    assert Client().get(f"/tournaments/{tournament.id}.pdn").status_code == 404     # not finished yet
    jobs.game_over(game.id)
    jobs.finish(tournament.id)
    page = Client().get(f"/tournaments/{tournament.id}").content.decode()
    assert 'id="podium"' in page and f"/tournaments/{tournament.id}.pdn" in page
    response = Client().get(f"/tournaments/{tournament.id}.pdn")
    assert response["Content-Disposition"] == f'attachment; filename="arena-{tournament.id}.pdn"'
    single = Client().get(f"/g/{game.id}.pdn").content.decode()
    assert response.content.decode() == single.replace('[Event "Casual game"]', '[Event "Friday Arena"]') + "\n"


def test_the_standings_show_no_players_id_and_mark_the_viewers_own_row(alice, bob):
    tournament = arena.create(account("host"), "Casual", "3+0", 30, timezone.now(), rated=False)
    for browser in (alice, bob):
        client_of(browser).post(f"/tournaments/{tournament.id}/join")
    page = client_of(alice).get(f"/tournaments/{tournament.id}").content.decode()
    sent = str(standings.public(tournament.id))
    for player in (alice.player_id, bob.player_id):
        assert player not in page and player not in sent
    [own] = [r for r in standings.public(tournament.id)["standings"] if r["name"] == "alice"]
    assert f'"you": "{own["player"]}"' in page and page.count('<tr class="you"') == 1


def test_guessing_a_tournaments_password_is_stopped_by_the_join_limit(alice, settings):
    settings.TOURNAMENT_JOIN_RATE_LIMIT_SESSION = "3/minute"
    tournament = arena.create(account("host"), "Private", "3+0", 30, timezone.now(), rated=False,
                              password="sesame")
    client = client_of(alice)
    for guess in ("a", "b", "c"):
        page = client.post(f"/tournaments/{tournament.id}/join", {"password": guess}, follow=True).content.decode()
        assert "That is not the tournament&#x27;s password." in page
    refused = client.post(f"/tournaments/{tournament.id}/join", {"password": "sesame"}, follow=True).content.decode()
    assert "Too many tries to join this tournament; try again in" in refused
    assert not Entry.objects.filter(tournament=tournament).exists()
