"""A Swiss event end to end on the real database and Redis: nine accounts through five rounds,
each game's result made by the actions (a win, a resignation, a draw agreed), each end reaching
the event through ``game_ended`` and a real burst worker of the ``tournaments`` queue, which
starts the next round; the standings against what the stored games give."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import django_rq
import pytest
from django.utils import timezone
from rq import SimpleWorker

from game.errors import ActionError
from game.models import Game
from game.round import actions, drawer
from game.tournaments import arena, jobs, schedule, standings
from game.tournaments.models import Entry, Pairing, Tournament
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs

pytestmark = [pytest.mark.django_db(transaction=True)]

OPENING = ["11-15", "23-19", "8-11", "22-17"]


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


def work() -> None:
    """Run the jobs queued on the ``tournaments`` queue in a burst worker (RQ's worker that runs
    them in its own process: the same jobs, without a fork each)."""
    queue = django_rq.get_queue(jobs.QUEUE)
    django_rq.get_worker(jobs.QUEUE, worker_class=SimpleWorker).work(burst=True)
    assert queue.failed_job_registry.count == 0


def swiss_of(players: int, rounds: int) -> tuple[Tournament, list[str]]:
    creator = account("creator")
    tournament = arena.create(creator, "Club Swiss", "3+0", 0, timezone.now() + timedelta(minutes=5),
                              rated=False, system=Tournament.System.SWISS, rounds=rounds)
    ids = [account(f"swiss{i}") for i in range(players)]
    for index, player in enumerate(ids):
        arena.join(tournament.id, player, f"swiss{index}")
    Tournament.objects.filter(pk=tournament.id).update(starts_at=timezone.now())
    jobs.tick(tournament.id)
    tournament.refresh_from_db()
    return tournament, ids


def finish_game(game: Game, outcome: str) -> None:
    """End ``game`` through the actions: ``black``/``white`` wins (the other resigns after the
    opening) or ``draw`` (offered and accepted)."""
    for text in OPENING:
        game.refresh_from_db()
        actions.play_move(game.id, game.player(game.turn), text, game.version)
    if outcome == "draw":
        drawer.offer_draw(game.id, game.black_player)
        drawer.accept_draw(game.id, game.white_player)
    else:
        actions.resign(game.id, game.white_player if outcome == "black" else game.black_player)


def expected_from_games(tournament: Tournament) -> dict[str, float]:
    """Each player's score from the stored games alone (and the byes)."""
    score: Counter = Counter()
    for pairing in Pairing.objects.filter(tournament=tournament).select_related("game"):
        result = pairing.game.result
        score[pairing.black] += {"1-0": 1, "1/2-1/2": 0.5}.get(result, 0)
        score[pairing.white] += {"0-1": 1, "1/2-1/2": 0.5}.get(result, 0)
    for player in Entry.objects.filter(tournament=tournament, bye_round__isnull=False).values_list(
            "player_id", flat=True):
        score[player] += 1
    return score


def test_a_nine_player_five_round_swiss_played_through():
    tournament, ids = swiss_of(9, 5)
    rng = random.Random(31)
    for round_number in range(1, 6):
        tournament.refresh_from_db()
        assert (tournament.status, tournament.round) == (Tournament.Status.STARTED, round_number)
        games = Pairing.objects.filter(tournament=tournament, round=round_number, scored=False)
        assert games.count() == 4
        assert Entry.objects.filter(tournament=tournament, bye_round=round_number).count() == 1
        for pairing in list(games):
            finish_game(Game.objects.get(pk=pairing.game_id), rng.choice(("black", "white", "draw")))
        work()
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    pairings = list(Pairing.objects.filter(tournament=tournament))
    met = [frozenset((p.black, p.white)) for p in pairings]
    assert len(pairings) == 20 and len(set(met)) == 20                  # nobody paired twice
    byes = list(Entry.objects.filter(tournament=tournament, bye_round__isnull=False).values_list(
        "player_id", flat=True))
    assert len(byes) == 5 and len(set(byes)) == 5                        # one bye each at most
    for player in ids:                                                   # every player every round
        rounds = {p.round for p in pairings if player in (p.black, p.white)}
        bye = Entry.objects.get(tournament=tournament, player_id=player).bye_round
        assert sorted(rounds | ({bye} if bye else set())) == [1, 2, 3, 4, 5]
    expected = expected_from_games(tournament)
    rows = standings.table(tournament)
    assert {row["player"]: row["score"] for row in rows} == {p: expected[p] for p in ids}
    assert [row["score"] for row in rows] == sorted((row["score"] for row in rows), reverse=True)


def test_a_round_robin_of_four_follows_the_berger_table_and_the_tie_breaks_a_hand_worked_one():
    # Players numbered in joining order (equal ratings).  Berger: 1-4, 2-3 / 1-2, 4-3 / 3-1, 2-4.
    # Results: 1 beats 4, 2-3 drawn; 1 beats 2, 4 beats 3; 3-1 drawn, 2 beats 4.
    # Scores 2.5, 1.5, 1, 1.  Buchholz: 1+1.5+1 = 3.5; 1+2.5+1 = 4.5; 1.5+1+2.5 = 5; 2.5+1+1.5 = 5.
    # Sonneborn-Berger: 1+1.5+0.5*1 = 3; 0.5*1+1 = 1.5; 0.5*1.5+0.5*2.5 = 2; 1 (3 beaten) = 1.
    creator = account("creator")
    tournament = arena.create(creator, "Club round robin", "3+0", 0, timezone.now() + timedelta(minutes=5),
                              rated=False, system=Tournament.System.ROUND_ROBIN)
    ids = [account(f"robin{i}") for i in range(4)]
    for index, player in enumerate(ids):
        arena.join(tournament.id, player, f"robin{index}")
    Tournament.objects.filter(pk=tournament.id).update(starts_at=timezone.now())
    jobs.tick(tournament.id)
    number = {e.player_id: e.number for e in Entry.objects.filter(tournament=tournament)}
    assert [number[p] for p in ids] == [1, 2, 3, 4]
    winner = {frozenset((1, 4)): 1, frozenset((2, 3)): None, frozenset((1, 2)): 1, frozenset((3, 4)): 4,
              frozenset((1, 3)): None, frozenset((2, 4)): 2}
    boards = []
    for _ in range(3):
        for pairing in Pairing.objects.filter(tournament=tournament, scored=False).order_by("created_at"):
            black, white = number[pairing.black], number[pairing.white]
            boards.append((black, white))
            won = winner[frozenset((black, white))]
            finish_game(Game.objects.get(pk=pairing.game_id),
                        "draw" if won is None else "black" if won == black else "white")
        work()
    assert boards == [(1, 4), (2, 3), (1, 2), (4, 3), (3, 1), (2, 4)]
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED and tournament.rounds == 3
    rows = [(number[r["player"]], r["score"], r["buchholz"], r["sonneborn_berger"])
            for r in standings.table(tournament)]
    assert rows == [(1, 2.5, 3.5, 3.0), (2, 1.5, 4.5, 1.5), (3, 1.0, 5.0, 2.0), (4, 1.0, 5.0, 1.0)]


def test_a_swiss_takes_no_entry_in_its_last_two_rounds_and_bad_rounds_are_refused():
    early = account("early")
    tournament, players = swiss_of(3, 3)
    Tournament.objects.filter(pk=tournament.id).update(status=Tournament.Status.CREATED)
    arena.join(tournament.id, early, "early")
    arena.withdraw(tournament.id, early)            # withdrew before the start: not numbered
    Tournament.objects.filter(pk=tournament.id).update(status=Tournament.Status.STARTED, round=2)
    with pytest.raises(ActionError) as unnumbered:
        arena.join(tournament.id, early, "early")
    assert unnumbered.value.code == "late_entry_closed"
    arena.withdraw(tournament.id, players[0])       # withdrew after the start: may come back
    assert not arena.join(tournament.id, players[0], "swiss0").withdrawn
    late = account("late")
    with pytest.raises(ActionError) as refused:
        arena.join(tournament.id, late, "late")
    assert refused.value.code == "late_entry_closed"
    with pytest.raises(ActionError) as bad:
        arena.create(account("maker"), "Too long", "3+0", 0, timezone.now() + timedelta(minutes=5),
                     system=Tournament.System.SWISS, rounds=40)
    assert bad.value.code == "bad_rounds"


def test_a_round_robin_takes_ten_players_at_most():
    tournament = arena.create(account("host"), "Small", "3+0", 0, timezone.now() + timedelta(minutes=5),
                              rated=False, system=Tournament.System.ROUND_ROBIN, rounds=7)
    assert tournament.rounds == 0                     # counted from its players at the start
    for index in range(arena.ROUND_ROBIN_MAX):
        arena.join(tournament.id, account(f"rr{index}"), f"rr{index}")
    with pytest.raises(ActionError) as full:
        arena.join(tournament.id, account("eleventh"), "eleventh")
    assert full.value.code == "tournament_full"


def test_the_daily_swiss_is_created_once_a_day_ahead():
    now = datetime(2026, 12, 5, 20, 30, tzinfo=UTC)
    made = schedule.create_daily_swiss(now)
    assert made is not None and schedule.create_daily_swiss(now) is None   # a second process
    assert (made.system, made.rounds, made.time_control, made.rated) == ("swiss", 5, "3+2", True)
    assert made.starts_at == datetime(2026, 12, 6, 19, 0, tzinfo=UTC)
    assert made.schedule_key == "daily-swiss:20261206"
    scheduled = django_rq.get_queue(jobs.QUEUE).scheduled_job_registry.get_job_ids()
    assert jobs.tick_job_id(made.id, made.starts_at) in scheduled


def test_a_forfeit_shows_as_plus_minus_on_the_board_and_in_the_games_list():
    tournament, _ = swiss_of(2, 3)
    game = Game.objects.get(pairing__tournament=tournament)
    Game.objects.filter(pk=game.id).update(turn_started_at=timezone.now() - timedelta(minutes=1))
    actions.check_clock(game.id)     # Black never made a first move: aborted, a forfeit Black lost
    work()
    game.refresh_from_db()
    assert game.status == Game.Status.ABORTED and game.result in ("", "*")
    assert [row["result"] for row in standings.board(tournament)] == ["-/+"]
    assert [g.shown_result for g in standings.games_of(tournament.id)] == ["-/+"]
    scores = {row["player"]: row["score"] for row in standings.table(tournament)}
    assert scores[game.white_player] == 1 and scores[game.black_player] == 0   # the point the board shows
