"""A player-made tournament's invite link, through its pages: the creator sees the link, its
holder joins without the password, the creator replaces it and the old link is refused
(``bad_invite``) with nothing joined; a started Swiss's page offers a late entry, in French and
Spanish too."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from game.errors import ActionError
from game.tournaments import arena, jobs
from game.tournaments.models import Entry, Tournament
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


def client_of(browser) -> Client:
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = browser.cookie
    return client


def creator_client(username: str) -> tuple[Client, str]:
    player = account(username)
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client, player


def invite_link(page: str) -> str:
    return re.search(r'id="tournament-invite-url" type="text" readonly value="http://testserver([^"]+)"',
                     page).group(1)


def test_an_invite_link_admits_without_the_password_until_its_creator_replaces_it(alice, bob, carol):
    creator, player = creator_client("inviter")
    tournament = arena.create(player, "Friends only", "3+0", 30, timezone.now() + timedelta(minutes=10),
                              rated=False, password="sesame")
    own = creator.get(f"/tournaments/{tournament.id}").content.decode()
    link = invite_link(own)
    assert link == f"/tournaments/{tournament.id}/invite/{tournament.invite}" and len(tournament.invite) >= 22
    assert 'id="tournament-invite"' not in client_of(alice).get(f"/tournaments/{tournament.id}").content.decode()
    invited = client_of(alice).get(link).content.decode()
    assert 'id="invited"' in invited and 'id="arena-password"' not in invited
    assert f'name="invite" value="{tournament.invite}"' in invited
    joined = client_of(alice).post(f"/tournaments/{tournament.id}/join", {"invite": tournament.invite})
    assert joined.status_code == 302 and Entry.objects.filter(tournament=tournament, player_id=alice.player_id).exists()
    refused = client_of(bob).post(f"/tournaments/{tournament.id}/join", {"invite": "x" * 22}, follow=True)
    assert "This invite link is not valid (any more)" in refused.content.decode()
    old = tournament.invite
    assert client_of(bob).post(f"/tournaments/{tournament.id}/invite").status_code == 302   # not the creator
    assert Tournament.objects.get(pk=tournament.id).invite == old
    creator.post(f"/tournaments/{tournament.id}/invite")
    new = Tournament.objects.get(pk=tournament.id).invite
    assert new != old and invite_link(creator.get(f"/tournaments/{tournament.id}").content.decode()).endswith(new)
    stale = client_of(bob).get(f"/tournaments/{tournament.id}/invite/{old}", follow=True)
    assert stale.redirect_chain[-1][0] == f"/tournaments/{tournament.id}"
    assert "This invite link is not valid (any more)" in stale.content.decode()
    assert 'id="arena-password"' in stale.content.decode()
    client_of(bob).post(f"/tournaments/{tournament.id}/join", {"invite": old})
    with pytest.raises(ActionError) as by_action:
        arena.join(tournament.id, bob.player_id, "bob", invite=old)
    assert by_action.value.code == "bad_invite"
    assert not Entry.objects.filter(tournament=tournament, player_id=bob.player_id).exists()
    client_of(carol).post(f"/tournaments/{tournament.id}/join", {"invite": new})
    assert Entry.objects.filter(tournament=tournament, player_id=carol.player_id).exists()
    with pytest.raises(ActionError) as not_creator:
        arena.reset_invite(tournament.id, alice.player_id)
    assert not_creator.value.code == "not_creator"
    french = client_of(bob).get(f"/tournaments/{tournament.id}/invite/{new}", HTTP_ACCEPT_LANGUAGE="fr")
    assert "Vous avez une invitation : pas besoin de mot de passe." in french.content.decode()
    spanish = creator.get(f"/tournaments/{tournament.id}", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Quien abra este enlace puede inscribirse sin la contraseña." in spanish


def test_a_started_swiss_page_offers_a_late_entry_and_a_scheduled_arena_has_no_invite(alice):
    tournament = arena.create(account("swisshost"), "Late Swiss", "3+0", 0, timezone.now() + timedelta(minutes=5),
                              rated=False, system=Tournament.System.SWISS, rounds=5)
    for index in range(3):
        arena.join(tournament.id, account(f"early{index}"), f"early{index}")
    Tournament.objects.filter(pk=tournament.id).update(starts_at=timezone.now())
    jobs.tick(tournament.id)
    page = client_of(alice).get(f"/tournaments/{tournament.id}").content.decode()
    assert "You join late: you play from round 2, and each round missed counts as a draw." in page
    assert 'id="join"' in page
    spanish = client_of(alice).get(f"/tournaments/{tournament.id}", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Te inscribes tarde: juegas desde la ronda 2" in spanish
    client_of(alice).post(f"/tournaments/{tournament.id}/join")
    entry = Entry.objects.get(tournament=tournament, player_id=alice.player_id)
    assert (entry.first_round, entry.score) == (2, 1)
    assert 'id="late-entry"' not in client_of(alice).get(f"/tournaments/{tournament.id}").content.decode()
    hourly = arena.create("", "Hourly Blitz Arena", "3+0", 57, timezone.now(), schedule_key="hourly:test")
    assert hourly.invite == ""
    with pytest.raises(ActionError) as none:
        arena.join(hourly.id, alice.player_id, "alice", invite="anything")
    assert none.value.code == "bad_invite"
