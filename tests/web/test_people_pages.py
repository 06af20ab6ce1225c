"""Reports, game search and the profile's people parts (docs/people.md): the real views, database
and Redis.  Reports are limited and refused with codes; the search filters, pages and writes its
PDN file; a profile shows its player's country, online status or last seen, and follow counts."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client, override_settings
from django.utils import timezone

from game.models import Game
from game.people import follows, reports
from game.people.models import Card, Follow, Report
from game.profiles import search
from tests.web.test_challenges import accounts, people
from tests.web.test_profiles import OPENING, account, game

pytestmark = pytest.mark.django_db(transaction=True)


def signed_in(account_row) -> Client:
    client = Client()
    client.force_login(account_row.user)
    return client


def report(client: Client, name: str, **fields) -> str:
    """Post a report of ``name``; the text of the profile the answer redirects to (with its message)."""
    response = client.post(f"/@/{name}/report", {"reason": "rude_chat", **fields})
    assert response.status_code == 302
    return client.get(response["Location"]).content.decode()


def test_a_report_is_stored_with_its_game_and_listed_in_the_admin():
    ann, ben = account("ann"), account("ben")
    played = game(ann.player_id, ben.player_id, moves=OPENING, result="1-0")
    page = report(signed_in(ann), "BEN", reason="cheating", game=f"https://example.org/g/{played.id}/",
                  text=" engine moves ")
    assert "Thank you" in page
    stored = Report.objects.get()
    assert (stored.reporter, stored.reported, stored.reason, stored.game, stored.text, stored.status) == (
        ann.player_id, ben.player_id, "cheating", played.id, "engine moves", "open")
    admin = account("root").user
    admin.is_staff = admin.is_superuser = True
    admin.save()
    listing = signed_in(admin.account).get("/admin/people/report/?status__exact=open&reason__exact=cheating")
    assert listing.status_code == 200 and "ben" in listing.content.decode()


@pytest.mark.parametrize(("fields", "code"), [
    ({"reason": "bogus"}, "bad_report"),
    ({"text": "x" * 501}, "bad_report"),
    ({"game": "not-a-game"}, "no_such_game"),
    ({"game": "/g/abcdefghjk/"}, "no_such_game"),
])
def test_refused_reports_have_codes_and_store_nothing(fields, code):
    ann, _ben = account("ann"), account("ben")
    assert f"code-{code}" in report(signed_in(ann), "ben", **fields)
    assert Report.objects.count() == 0


def test_reports_are_limited_one_open_per_player_and_so_many_a_day():
    ann = account("ann")
    others = [account(f"p{i}") for i in range(reports.DAILY_REPORTS + 1)]
    client = signed_in(ann)
    assert "code-self_report" in report(client, "ann")
    report(client, "p0")
    assert "code-already_reported" in report(client, "p0")
    for other in others[1:reports.DAILY_REPORTS]:
        report(client, other.user.username)
    assert Report.objects.count() == reports.DAILY_REPORTS
    assert "code-too_many_reports" in report(client, others[-1].user.username)
    Report.objects.update(created_at=timezone.now() - timedelta(days=2), status="closed")
    assert "Thank you" in report(client, others[-1].user.username)
    guest = Client().post("/@/p0/report", {"reason": "other"})
    assert guest.status_code == 302 and "/accounts/login/" in guest["Location"]
    assert Report.objects.count() == reports.DAILY_REPORTS + 1


def results(client: Client, **query) -> list[str]:
    response = client.get("/games/search", query)
    assert response.status_code == 200, response.content[:2000]
    text = response.content.decode()
    return [part.split('"')[0] for part in text.split('data-game="')[1:]]


def test_search_filters_every_way():
    ann, ben, cat = account("ann"), account("ben"), account("cat")
    g1 = game(ann.player_id, ben.player_id, moves=OPENING, result="1-0", time_control="5+3", rated=True)
    g2 = game(ben.player_id, cat.player_id, result="0-1", time_control="1d")
    g3 = game(cat.player_id, ann.player_id, moves=OPENING[:2], result="1/2-1/2", time_control="untimed")
    game(ann.player_id, ben.player_id, status="active")  # in play: never found
    client = Client()
    assert results(client) == [g3.id, g2.id, g1.id]
    assert results(client, player="ANN") == [g3.id, g1.id]
    assert results(client, player="ann", opponent="ben") == [g1.id]
    assert results(client, opponent="cat") == [g3.id, g2.id]
    assert results(client, player="ann", result="won") == [g1.id]
    assert results(client, player="cat", result="won") == [g2.id]
    assert results(client, result="drawn") == [g3.id]
    assert results(client, result="white") == [g2.id]
    assert results(client, control="1d") == [g2.id]
    assert results(client, control="untimed") == [g3.id]
    assert results(client, rated="yes") == [g1.id]
    assert results(client, min_plies=3) == [g1.id]
    assert results(client, max_plies=2, min_plies=1) == [g3.id]
    assert results(client, ballot="yes") == []
    Game.objects.filter(pk=g2.pk).update(created_at=timezone.now() - timedelta(days=1000))
    day = Game.objects.get(pk=g2.pk).created_at.date()
    assert results(client, since=day.isoformat(), until=day.isoformat()) == [g2.id]
    assert results(client, since=(day + timedelta(days=1)).isoformat(), player="cat") == [g3.id]


@pytest.mark.parametrize("query", [{"player": "nobody"}, {"result": "won"}, {"control": "9x"},
                                   {"since": "2026-02-02", "until": "2026-01-01"},
                                   {"min_plies": 5, "max_plies": 2}, {"min_plies": -1}])
def test_bad_filters_show_their_errors_and_no_games(query):
    response = Client().get("/games/search", query)
    assert response.status_code == 400 and 'id="search-results"' not in response.content.decode()
    assert Client().get("/games/search.pdn", query).status_code == 400


@override_settings(PDN_RATE_LIMIT_ANONYMOUS="2/minute")
def test_search_pages_are_capped_and_the_pdn_holds_the_results(monkeypatch):
    ann, ben = account("ann"), account("ben")
    games = [game(ann.player_id, ben.player_id, moves=OPENING, result="1-0") for _ in range(7)]
    monkeypatch.setattr(search, "PAGE_SIZE", 2)
    monkeypatch.setattr(search, "MAX_RESULTS", 5)
    monkeypatch.setattr(search, "MAX_PDN_GAMES", 3)
    client = Client()
    first = client.get("/games/search", {"player": "ann"}).content.decode()
    assert "Page 1 of 3" in first and "The latest 5 games" in first
    assert results(client, player="ann", page=3) == [games[2].id]
    assert results(client, player="ann", page=99) == [games[2].id]  # past the end: the last page
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.7"  # an address of this test's own
    pdn = client.get("/games/search.pdn", {"player": "ann"}, REMOTE_ADDR=address)
    assert pdn.status_code == 200 and pdn["Content-Disposition"].startswith("attachment")
    text = pdn.content.decode()
    assert text.count("[Event ") == 3 and "1. 11-15 23-19 2. 8-11" in text and '[Result "1-0"]' in text
    answers = [client.get("/games/search.pdn", {"player": "ann"}, REMOTE_ADDR=address).status_code
               for _ in range(2)]
    assert answers == [200, 429]  # counted as archive downloads (anonymous: 2 a minute an address)


def test_the_search_reads_a_bounded_number_of_rows(django_assert_max_num_queries):
    ann, ben = account("ann"), account("ben")
    for _ in range(3):
        game(ann.player_id, ben.player_id, result="1-0")
    with django_assert_max_num_queries(6):
        Client().get("/games/search", {"player": "ann", "rated": "no"})


def test_a_profile_shows_country_online_or_last_seen_and_follow_counts():
    ann, ben, cat = account("ann"), account("ben"), account("cat")
    Follow.objects.create(follower=ben.player_id, followed=ann.player_id)
    Follow.objects.create(follower=cat.player_id, followed=ann.player_id)
    Follow.objects.create(follower=ann.player_id, followed=cat.player_id)
    page = Client().get("/@/ann").content.decode()
    assert "2 followers, follows 1 player" in page and 'id="profile-offline"' in page
    client = signed_in(ann)
    assert client.post("/settings/country", {"country": "FR"}).status_code == 302
    assert client.post("/settings/country", {"country": "XX"}).status_code == 400
    assert Card.objects.get(player_id=ann.player_id).country.code == "FR"
    follows.seen(ann.player_id)
    page = Client().get("/@/ann").content.decode()
    assert "\U0001f1eb\U0001f1f7" in page and "France" in page and "Last seen" in page
    r = redis.Redis.from_url(settings.MATCHMAKING_REDIS_URL)
    r.zadd(follows._key(), {ann.player_id: time.time() + 60})
    try:
        assert 'id="profile-online"' in Client().get("/@/ann").content.decode()
    finally:
        r.zrem(follows._key(), ann.player_id)
        r.close()
    assert "Pays-Bas" in signed_in(ann).get("/settings/country", HTTP_ACCEPT_LANGUAGE="fr").content.decode()


def test_a_game_page_links_the_report_form_of_each_seated_account_with_the_game():
    ann, ben = account("ann"), account("ben")
    played = game(ann.player_id, ben.player_id, moves=OPENING, result="1-0")
    page = signed_in(ann).get(f"/g/{played.id}/").content.decode()
    assert f'href="/@/ben?game={played.id}#report-box"' in page
    profile = signed_in(ann).get(f"/@/ben?game={played.id}").content.decode()
    assert 'id="report-box" open' in profile and f'value="{played.id}"' in profile
    assert 'value="' + "x" * 5 not in signed_in(ann).get("/@/ben?game=xxxxx<").content.decode()


@pytest.mark.asyncio
async def test_a_people_socket_records_when_its_player_was_last_seen():
    [ann] = await accounts("ann")

    def last_seen():
        return Card.objects.get(player_id=ann.player_id).last_seen

    comm, _ = await people(ann)
    opened = await database_sync_to_async(last_seen)()
    assert opened is not None
    await comm.disconnect()
    assert await database_sync_to_async(last_seen)() > opened
