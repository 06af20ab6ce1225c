"""Late entries into a Swiss event on the real database and Redis, and the tie-breaks of unplayed
rounds by FIDE's regulations against a hand-worked table.

A Swiss takes a late entrant until its last two rounds: paired from the next round, a half-point
bye for each round missed, numbered by rating among the others; after that, refused
``late_entry_closed``.  The tie-breaks (``game.tournaments.tiebreaks``): a player's own unplayed
round counts a dummy opponent with their own score (Buchholz) and that score times the round's
points (Sonneborn-Berger); an opponent's rounds not played after their last played one count as
draws."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.db.models import Q
from django.utils import timezone

from game.clock import TimeControl
from game.errors import ActionError
from game.models import Game, Rating
from game.ratings.categories import category_of
from game.tournaments import arena, jobs, standings, tiebreaks
from game.tournaments.models import Entry, Pairing, Tournament
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs
from tests.tournaments.test_swiss import expected_from_games, finish_game, swiss_of, work

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


def rated(name: str, rating: float) -> str:
    """An account with ``rating`` in the 3+0 category."""
    player = account(name)
    Rating.objects.create(player_id=player, category=category_of(TimeControl.parse("3+0")), rating=rating)
    return player


def play_round(tournament: Tournament, rng: random.Random) -> None:
    """Finish every game of the round in play (results drawn by ``rng``); the worker starts the next round."""
    for pairing in list(Pairing.objects.filter(tournament=tournament, scored=False)):
        finish_game(Game.objects.get(pk=pairing.game_id), rng.choice(("black", "white", "draw")))
    work()


def test_a_late_entrant_plays_from_the_next_round_with_a_half_point_bye_for_each_round_missed():
    tournament, ids = swiss_of(4, 4)
    rng = random.Random(7)
    late = rated("latecomer", 1900)
    entry = arena.join(tournament.id, late, "latecomer")            # round 1 of 4 in play
    assert (entry.first_round, entry.score, entry.number) == (2, 1, 1)   # ½ point; numbered 1 by rating
    numbers = sorted(Entry.objects.filter(tournament=tournament).values_list("number", flat=True))
    assert numbers == [1, 2, 3, 4, 5]
    play_round(tournament, rng)
    tournament.refresh_from_db()
    assert tournament.round == 2 and Pairing.objects.filter(tournament=tournament, round=2).filter(
        Q(black=late) | Q(white=late)).exists()                          # paired from round 2
    later = account("later")                                             # round 2 of 4: the last open
    assert arena.join(tournament.id, later, "later").first_round == 3
    assert Entry.objects.get(tournament=tournament, player_id=later).score == 2     # two half-point byes
    play_round(tournament, rng)
    with pytest.raises(ActionError) as closed:                           # round 3 of 4: the last two
        arena.join(tournament.id, account("toolate"), "toolate")
    assert closed.value.code == "late_entry_closed"
    play_round(tournament, rng)
    play_round(tournament, rng)
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    expected = expected_from_games(tournament)
    expected[late] += 0.5
    expected[later] += 1
    rows = {row["player"]: row for row in standings.table(tournament)}
    assert {p: rows[p]["score"] for p in rows} == {p: expected[p] for p in [*ids, late, later]}
    met = [frozenset((p.black, p.white)) for p in Pairing.objects.filter(tournament=tournament)]
    assert len(met) == len(set(met))                                     # no opponent met twice
    # the half-point bye counts the late entrant's own score in their Buchholz (FIDE's dummy opponent)
    opponents = [p.white if p.black == late else p.black
                 for p in Pairing.objects.filter(tournament=tournament).filter(Q(black=late) | Q(white=late))]
    bye = 1 if Entry.objects.get(tournament=tournament, player_id=late).bye_round else 0
    assert len(opponents) + bye == 3
    assert rows[late]["buchholz"] == sum(rows[o]["score"] for o in opponents) + (1 + bye) * rows[late]["score"]


def test_a_round_robin_under_way_takes_no_late_entry():
    robin = arena.create(account("host"), "Robin", "3+0", 0, timezone.now() + timedelta(minutes=5), rated=False,
                         system=Tournament.System.ROUND_ROBIN)
    for index in range(3):
        arena.join(robin.id, account(f"robin{index}"), f"robin{index}")
    Tournament.objects.filter(pk=robin.id).update(starts_at=timezone.now())
    jobs.tick(robin.id)
    with pytest.raises(ActionError) as refused:
        arena.join(robin.id, account("late"), "late")
    assert refused.value.code == "already_started"


def test_unplayed_rounds_count_as_fide_says_against_a_hand_worked_table():
    # Five players, four rounds (points; half points in the code).  E enters late, at round 3:
    # half-point byes in rounds 1 and 2.  C withdraws after round 3 (not paired in round 4).
    # r1: A beats B, C-D drawn.  r2: A-C drawn, B beats D.  r3: E beats A, B-C drawn, D a bye (1).
    # r4: A beats D; B wins by forfeit against E (E never moved: unplayed for both).
    # Scores: A 2.5, B 2.5, C 1.5, D 1.5, E 2.
    # Scores as others' Buchholz count them: C's round 4 (not played, after their last game) is a
    # draw: 2; the others' as they are.
    # Buchholz (a player's own unplayed round: a dummy opponent with their own score):
    #   A: B 2.5 + C 2 + E 2 + D 1.5 = 8;    B: A 2.5 + D 1.5 + C 2 + own 2.5 (forfeit) = 8.5
    #   C: D 1.5 + A 2.5 + B 2.5 + own 1.5 = 8;    D: C 2 + B 2.5 + own 1.5 (bye) + A 2.5 = 8.5
    #   E: own 2 + own 2 (half-point byes) + A 2.5 + own 2 (forfeit) = 8.5
    # Sonneborn-Berger (opponent's score times one's result; unplayed: own score times the points):
    #   A: 2.5 + 2*0.5 + 0 + 1.5 = 5;    B: 0 + 1.5 + 2*0.5 + 2.5*1 = 5
    #   C: 1.5*0.5 + 2.5*0.5 + 2.5*0.5 + 1.5*0 = 3.25;    D: 2*0.5 + 0 + 1.5*1 + 0 = 2.5
    #   E: 2*0.5 + 2*0.5 + 2.5*1 + 2*0 = 4.5
    G = tiebreaks.Game
    games = [G(1, "A", "B", 2, 0), G(1, "C", "D", 1, 1), G(2, "A", "C", 1, 1), G(2, "B", "D", 2, 0),
             G(3, "A", "E", 0, 2), G(3, "B", "C", 1, 1), G(4, "A", "D", 2, 0), G(4, "B", "E", 2, 0, played=False)]
    players = [tiebreaks.Player("A", 5), tiebreaks.Player("B", 5), tiebreaks.Player("C", 3),
               tiebreaks.Player("D", 3, bye_round=3), tiebreaks.Player("E", 4, first_round=3)]
    values = tiebreaks.compute(players, games, rounds=4, round_points=2)
    assert {p: (b / 2, sb / 4) for p, (b, sb) in values.items()} == {
        "A": (8, 5), "B": (8.5, 5), "C": (8, 3.25), "D": (8.5, 2.5), "E": (8.5, 4.5)}
    # a round robin counts no dummy opponent: D's bye and B's forfeit add nothing
    robin = tiebreaks.compute(players, games, rounds=4, round_points=2, swiss=False)
    assert robin["D"][0] / 2 == 1.5 + 2.5 + 2.5 and robin["B"][0] / 2 == 2.5 + 1.5 + 1.5
