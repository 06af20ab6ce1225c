"""An arena attacked as a cheater would: a seat in two arena games at once, arena points farmed
between one person's accounts, and an action that must not fail when Redis is down."""

from __future__ import annotations

import django_rq
import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from game.models import Game
from game.round import actions
from game.tournaments import arena, jobs
from game.tournaments.models import Entry, Pairing
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
