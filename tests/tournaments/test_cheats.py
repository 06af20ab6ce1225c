"""An arena attacked as a cheater would: a seat in two arena games at once, arena points farmed by
a game given up at once or between one person's accounts, and a join, pause or new arena while
the queues' Redis is down (the action stands, no HTTP 500), two tabs creating arenas at once past
the creator's limit."""

from __future__ import annotations

import threading

import django_rq
import django_rq.settings
import pytest
from django.db import OperationalError, connection, connections, transaction
from django.test import Client
from django.utils import timezone

from game.errors import ActionError
from game.models import Account, Game
from game.ratings import links
from game.round import actions
from game.tournaments import arena, jobs
from game.tournaments.models import Entry, Pairing, Tournament
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


def test_a_player_playing_in_one_arena_is_not_seated_in_another_until_that_game_ends():
    first = arena.create(account("host1"), "First", "3+0", 30, timezone.now())
    second = arena.create(account("host2"), "Second", "3+0", 30, timezone.now())
    cheat, opponent, other = account("cheat"), account("opponent"), account("other")
    arena.join(first.id, cheat, "cheat")
    arena.join(first.id, opponent, "opponent")
    jobs.tick(first.id)
    playing = arena.current_pairing(first.id, cheat)
    assert playing is not None
    arena.join(second.id, other, "other")
    arena.join(second.id, cheat, "cheat")
    jobs.tick(second.id)
    assert not Pairing.objects.filter(tournament=second).exists()
    actions.resign(playing.game_id, cheat)
    arena.record(playing.game_id)
    jobs.pair_arena(second.id)
    assert {p for pairing in Pairing.objects.filter(tournament=second) for p in (pairing.black, pairing.white)} \
        == {cheat, other}


OPENING = ["11-15", "23-19", "8-11", "22-17"]


def paired_pair(rated: bool, farmer: str, puppet: str) -> tuple[str, Game]:
    tournament = arena.create(account("host"), "Farm", "3+0", 30, timezone.now(), rated=rated)
    for player in (farmer, puppet):
        arena.join(tournament.id, player, player[:8])
    jobs.tick(tournament.id)
    pairing = arena.current_pairing(tournament.id, farmer)
    assert pairing is not None
    return tournament.id, Game.objects.get(pk=pairing.game_id)


def points(tournament_id: str, player: str) -> tuple[int, int]:
    entry = Entry.objects.get(tournament_id=tournament_id, player_id=player)
    return entry.score, entry.games


def test_a_casual_arena_game_given_up_at_once_scores_nothing():
    farmer, puppet = account("farmer"), account("puppet")
    tournament_id, game = paired_pair(False, farmer, puppet)
    actions.resign(game.id, puppet)
    pairing = arena.record(game.id)
    assert (pairing.black_points, pairing.white_points) == (None, None)
    assert points(tournament_id, farmer) == (0, 0) and points(tournament_id, puppet) == (0, 0)


def test_arena_points_between_one_persons_accounts_count_nothing():
    farmer, puppet = account("farmer"), account("puppet")
    device = links.new_device_id()
    for player in (farmer, puppet):
        links.note_sign_in(Account.objects.get(player_id=player), device, None, new=False)
    tournament_id, game = paired_pair(True, farmer, puppet)
    for text in OPENING:
        game.refresh_from_db()
        actions.play_move(game.id, game.player(game.turn), text, game.version)
    actions.resign(game.id, puppet)
    arena.record(game.id)
    assert points(tournament_id, farmer) == (0, 0) and points(tournament_id, puppet) == (0, 0)


def test_a_game_played_for_between_strangers_scores():
    alice, bob = account("alice"), account("bob")
    tournament_id, game = paired_pair(True, alice, bob)
    for text in OPENING:
        game.refresh_from_db()
        actions.play_move(game.id, game.player(game.turn), text, game.version)
    actions.resign(game.id, bob)
    arena.record(game.id)
    assert points(tournament_id, alice) == (2, 1) and points(tournament_id, bob) == (0, 1)


@pytest.fixture
def tournaments_redis_down(empty_queue):
    """The ``tournaments`` queue's Redis stopped: its URL a port nothing listens on, until the test ends."""
    config = django_rq.settings.QUEUES[jobs.QUEUE]
    running, config["URL"] = config["URL"], "redis://127.0.0.1:1/0"
    try:
        yield
    finally:
        config["URL"] = running


def test_joining_pausing_and_creating_work_while_the_queues_redis_is_down(tournaments_redis_down):
    host = account("host")
    tournament = arena.create(host, "Casual", "3+0", 30, timezone.now(), rated=False)
    guest = Client(raise_request_exception=False)
    joined = guest.post(f"/tournaments/{tournament.id}/join")
    assert joined.status_code == 302 and joined.url == f"/tournaments/{tournament.id}"
    assert Entry.objects.filter(tournament=tournament, withdrawn=False).count() == 1
    paused = guest.post(f"/tournaments/{tournament.id}/withdraw")
    assert paused.status_code == 302
    assert Entry.objects.filter(tournament=tournament, withdrawn=True).count() == 1
    creator = Client(raise_request_exception=False)
    assert creator.post("/accounts/login/", {"login": "host", "password": "host-Pass-2026!"}).status_code == 302
    created = creator.post("/tournaments/new", {"name": "Made while down", "system": "arena", "rounds": 5,
                                                "time_control": "3+0", "minutes": 30, "starts_in": 10, "rated": "on"})
    made = Tournament.objects.get(name="Made while down")
    assert created.status_code == 302 and created.url == f"/tournaments/{made.id}"


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL's row locks")
def test_a_create_waits_for_another_create_of_the_same_player_to_count_its_arenas():
    host = account("host")
    for n in range(arena.MAX_OPEN_PER_CREATOR - 1):
        arena.create(host, f"Mine {n}", "3+0", 30, timezone.now())
    holding, release = threading.Event(), threading.Event()

    def other_tab():
        # A create of the same player under way in another process: it holds that player's row.
        with transaction.atomic():
            arena.create(host, "The other tab's", "3+0", 30, timezone.now())
            holding.set()
            release.wait(30)
        connections.close_all()

    tab = threading.Thread(target=other_tab)
    tab.start()
    try:
        assert holding.wait(30)
        with pytest.raises(OperationalError), transaction.atomic():
            connection.cursor().execute("SET LOCAL lock_timeout = '100ms'")
            arena.create(host, "This tab's", "3+0", 30, timezone.now())
    finally:
        release.set()
        tab.join()
    with pytest.raises(ActionError) as refused:
        arena.create(host, "This tab's", "3+0", 30, timezone.now())
    assert refused.value.code == "too_many_tournaments"
    assert Tournament.objects.filter(created_by=host).count() == arena.MAX_OPEN_PER_CREATOR
