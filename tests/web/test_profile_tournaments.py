"""A profile's tournaments on the real database: the finished events a player played, with their
rank and score, a trophy for a podium place; an event under way, or one joined and never played,
is not listed."""

from __future__ import annotations

import django_rq
import pytest
from django.test import Client
from django.utils import timezone

from game.models import Game
from game.round import actions
from game.tournaments import arena, jobs, standings
from game.tournaments.models import Pairing
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield django_rq.get_queue(jobs.QUEUE)
    clear_tournament_jobs()


def test_a_profile_lists_the_finished_events_played_and_a_trophy_for_a_podium():
    names = ["ann", "ben", "cid", "dot", "eve"]
    ids = {name: account(name) for name in names}
    tournament = arena.create(account("host"), "Sunday Arena", "3+0", 30, timezone.now(), rated=False)
    for name in names[:4]:
        arena.join(tournament.id, ids[name], name)
    jobs.tick(tournament.id)
    for pairing in Pairing.objects.filter(tournament=tournament):
        game = Game.objects.get(pk=pairing.game_id)
        for text in ("11-15", "23-19", "8-11", "22-17"):
            game.refresh_from_db()
            actions.play_move(game.id, game.player(game.turn), text, game.version)
        actions.resign(game.id, game.white_player)
        jobs.game_over(game.id)
    running = arena.create(account("host2"), "Still Running", "3+0", 30, timezone.now(), rated=False)
    arena.join(running.id, ids["ann"], "ann")
    arena.join(running.id, ids["eve"], "eve")
    jobs.finish(tournament.id)
    order = [e.player_id for e in standings.ranked(tournament.id)]
    first = next(name for name in names if ids[name] == order[0])
    last = next(name for name in names if ids[name] == order[3])
    winner_page = Client().get(f"/@/{first}").content.decode()
    assert 'id="trophies"' in winner_page and "1st in Sunday Arena" in winner_page
    assert "1 of 4" in winner_page and "Still Running" not in winner_page
    loser_page = Client().get(f"/@/{last}").content.decode()
    assert 'id="trophies"' not in loser_page and "4 of 4" in loser_page and "Sunday Arena" in loser_page
    nobody = Client().get("/@/eve").content.decode()     # joined one under way only: nothing listed
    assert "No finished tournament yet." in nobody and 'id="tournaments-played-list"' not in nobody
    spanish = Client(HTTP_ACCEPT_LANGUAGE="es").get(f"/@/{first}").content.decode()
    assert "Sunday Arena" in spanish
