"""An arena end to end on the real database and Redis: joining (rated: accounts only; a
password), the start and the pairing by its tick, berserk and its refusals, a game's end reaching
the arena through ``game_ended`` and a real burst worker of the ``tournaments`` queue, the player
who never moves withdrawn, the standings frozen at the end, the hourly arenas created once."""

from __future__ import annotations

from datetime import timedelta

import django_rq
import pytest
from django.db import connections
from django.utils import timezone

from game.errors import ActionError
from game.models import Game
from game.round import actions
from game.tournaments import arena, jobs, schedule, standings
from game.tournaments.models import Entry, Pairing, Tournament
from game.worker import MAINTENANCE_EVERY_S, Worker
from tests.ratings.helpers import account, guest
from tests.tournaments.helpers import clear_tournament_jobs

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_queue():
    """The ``tournaments`` queue, its scheduled jobs and the arenas' keys in Redis, empty before and after."""
    clear_tournament_jobs()
    yield django_rq.get_queue(jobs.QUEUE)
    clear_tournament_jobs()


def work() -> int:
    """Run the jobs queued on the ``tournaments`` queue in a burst worker; returns how many ran."""
    queue = django_rq.get_queue(jobs.QUEUE)
    count = queue.count
    connections.close_all()  # the worker forks a work horse per job: it opens its own connections
    django_rq.get_worker(jobs.QUEUE).work(burst=True)
    assert queue.failed_job_registry.count == 0
    return count


def started_arena(players: int, rated: bool = True, control: str = "3+0") -> tuple[Tournament, list[str]]:
    """An arena with ``players`` accounts joined, started and paired by its first tick."""
    creator = account("creator")
    tournament = arena.create(creator, "Test arena", control, 30, timezone.now(), rated=rated)
    ids = [account(f"player{i}") for i in range(players)]
    for index, player in enumerate(ids):
        arena.join(tournament.id, player, f"player{index}")
    jobs.tick(tournament.id)
    tournament.refresh_from_db()
    return tournament, ids


OPENING = ["11-15", "23-19", "8-11", "22-17"]


def play(game: Game, moves: list[str]) -> Game:
    """Play ``moves`` in ``game`` through the actions, each by the side to move."""
    for text in moves:
        game.refresh_from_db()
        actions.play_move(game.id, game.player(game.turn), text, game.version)
    game.refresh_from_db()
    return game


def game_of(tournament: Tournament, player: str) -> Game:
    pairing = arena.current_pairing(tournament.id, player)
    assert pairing is not None
    return Game.objects.get(pk=pairing.game_id)


def test_the_first_tick_starts_the_arena_and_pairs_everyone_once():
    tournament, _ = started_arena(5)
    assert tournament.status == Tournament.Status.STARTED
    pairings = list(Pairing.objects.filter(tournament=tournament))
    seated = [p for pairing in pairings for p in (pairing.black, pairing.white)]
    assert len(pairings) == 2 and len(set(seated)) == 4
    games = Game.objects.filter(pk__in=[p.game_id for p in pairings])
    assert all(g.rated and g.status == Game.Status.ACTIVE and g.time_control == "3+0" for g in games)
    jobs.pair_arena(tournament.id)      # another tick: the odd one out has nobody to meet
    assert Pairing.objects.filter(tournament=tournament).count() == 2


def test_a_rated_arena_refuses_guests_and_a_password_is_checked():
    tournament = arena.create(account("creator"), "Club", "1+0", 20, timezone.now(), password="secret")
    with pytest.raises(ActionError) as refused:
        arena.join(tournament.id, guest(), "visitor", password="secret")
    assert refused.value.code == "sign_in_required"
    member = account("member")
    with pytest.raises(ActionError) as refused:
        arena.join(tournament.id, member, "member", password="wrong")
    assert refused.value.code == "bad_password"
    assert arena.join(tournament.id, member, "member", password="secret").player_id == member
    casual = arena.create(account("host"), "Casual", "1+0", 20, timezone.now(), rated=False)
    assert arena.join(casual.id, guest(), "visitor").name == "visitor"


@pytest.mark.parametrize(("control", "minutes", "code"), [
    ("untimed", 30, "bad_time_control"), ("1d", 30, "bad_time_control"), ("3+0", 5, "bad_duration"),
])
def test_bad_arenas_are_refused(control, minutes, code):
    with pytest.raises(ActionError) as refused:
        arena.create(account("creator"), "Bad", control, minutes, timezone.now())
    assert refused.value.code == code
    assert not Tournament.objects.exists()


def test_berserk_halves_the_clock_once_and_only_before_ones_first_move():
    tournament, ids = started_arena(2)
    game = game_of(tournament, ids[0])
    black, white = game.black_player, game.white_player
    progress = arena.berserk(tournament.id, black)
    assert progress.events[0].what == "berserk"
    game.refresh_from_db()
    assert (game.black_ms, game.white_ms) == (90_000, 180_000)
    for player, code in ((black, "berserk_twice"), (guest(), "not_in_game")):
        with pytest.raises(ActionError) as refused:
            arena.berserk(tournament.id, player)
        assert refused.value.code == code
    play(game, OPENING[:2])
    with pytest.raises(ActionError) as refused:
        arena.berserk(tournament.id, white)
    assert refused.value.code == "berserk_too_late"
    assert Pairing.objects.get(pk=game.id).black_berserk and not Pairing.objects.get(pk=game.id).white_berserk


def test_berserk_takes_the_increment_away_from_the_berserk_side_only():
    tournament, ids = started_arena(2, control="3+2")
    game = game_of(tournament, ids[0])
    arena.berserk(tournament.id, game.black_player)
    game = play(game, OPENING)      # each side's first move, then each side's second: incremented
    assert game.black_berserk and not game.white_berserk
    assert game.black_ms <= 90_000 < 180_000 < game.white_ms      # White got 2 s, Black nothing


def test_a_games_end_reaches_the_arena_through_game_ended_and_pairs_again():
    tournament, ids = started_arena(4)
    first = play(game_of(tournament, ids[0]), OPENING)
    actions.resign(first.id, first.white_player)
    assert work() == 1          # game_over, queued by the game_ended receiver
    winner = Entry.objects.get(tournament=tournament, player_id=first.black_player)
    loser = Entry.objects.get(tournament=tournament, player_id=first.white_player)
    assert (winner.score, winner.streak, winner.games, winner.wins) == (2, 1, 1, 1)
    assert (loser.score, loser.games, loser.withdrawn) == (0, 1, False)
    assert Pairing.objects.get(pk=first.id).black_points == 2
    second = game_of(tournament, ids[0] if ids[0] not in (first.black_player, first.white_player) else ids[2])
    play(second, OPENING)
    actions.resign(second.id, second.black_player)
    work()
    # the two free pairs met each other's opponents: nobody meets their last opponent at once
    latest = Pairing.objects.filter(tournament=tournament, scored=False)
    assert latest.count() == 2
    for pairing in latest:
        assert {pairing.black, pairing.white} not in ({first.black_player, first.white_player},
                                                      {second.black_player, second.white_player})
    rows = standings.public(tournament.id)["standings"]
    assert [r["score"] for r in rows] == [2, 2, 0, 0]


def test_a_player_who_never_moves_is_withdrawn_after_losing_on_time():
    tournament, ids = started_arena(2, control="1+0")
    game = game_of(tournament, ids[0])
    Game.objects.filter(pk=game.id).update(turn_started_at=timezone.now() - timedelta(minutes=1))
    actions.check_clock(game.id)
    game.refresh_from_db()
    assert game.status == Game.Status.ABORTED      # Black never made a first move
    work()
    black = Entry.objects.get(tournament=tournament, player_id=game.black_player)
    white = Entry.objects.get(tournament=tournament, player_id=game.white_player)
    assert black.withdrawn and black.free_since is None and black.games == 0
    assert not white.withdrawn and white.free_since is not None
    arena.join(tournament.id, game.black_player, "back")    # coming back is allowed
    assert not Entry.objects.get(pk=black.pk).withdrawn


def test_the_standings_freeze_at_the_end():
    tournament, ids = started_arena(2)
    game = game_of(tournament, ids[0])
    Tournament.objects.filter(pk=tournament.id).update(starts_at=timezone.now() - timedelta(minutes=31))
    jobs.tick(tournament.id)
    assert Tournament.objects.get(pk=tournament.id).status == Tournament.Status.FINISHED
    play(game, OPENING)
    actions.resign(game.id, game.white_player)
    work()
    assert sorted(Entry.objects.filter(tournament=tournament).values_list("score", flat=True)) == [0, 0]
    assert Pairing.objects.get(pk=game.id).scored
    with pytest.raises(ActionError) as refused:
        arena.join(tournament.id, account("late"), "late")
    assert refused.value.code == "tournament_over"


def test_the_creator_cancels_before_the_start_only():
    creator = account("creator")
    tournament = arena.create(creator, "Mine", "5+0", 60, timezone.now() + timedelta(hours=1))
    with pytest.raises(ActionError) as refused:
        arena.cancel(tournament.id, account("other"))
    assert refused.value.code == "not_creator"
    assert arena.cancel(tournament.id, creator).status == Tournament.Status.CANCELLED


def test_the_hourly_arenas_are_created_once_whoever_runs_the_schedule():
    now = timezone.now()
    made = schedule.create_ahead(now)
    assert len(made) == len(schedule.HOURLY) * schedule.HOURS_AHEAD
    assert schedule.create_ahead(now) == []     # a second process finds them made
    assert Tournament.objects.count() == len(made)
    starts = sorted({t.starts_at for t in made})
    assert starts[0] > now and starts[0].minute == 0 and starts[1] - starts[0] == timedelta(hours=1)
    scheduled = django_rq.get_queue(jobs.QUEUE).scheduled_job_registry.get_job_ids()
    assert {jobs.tick_job_id(t.id, t.starts_at) for t in made} <= set(scheduled)
    schedule.schedule_arenas()
    schedule.schedule_arenas()      # run twice (make run, the timer, the job): one run next hour
    next_hour = starts[0]
    assert schedule.job_id(next_hour) in django_rq.get_queue(jobs.QUEUE).scheduled_job_registry.get_job_ids()


def test_a_tick_runs_from_rqs_scheduler_and_puts_the_next_one_there():
    tournament = arena.create(account("creator"), "Soon", "3+0", 30, timezone.now())
    for index in range(2):
        arena.join(tournament.id, account(f"p{index}"), f"p{index}")
    jobs.schedule_tick(tournament)
    connections.close_all()
    django_rq.get_worker(jobs.QUEUE).work(burst=True, with_scheduler=True)
    assert Tournament.objects.get(pk=tournament.id).status == Tournament.Status.STARTED
    assert Pairing.objects.filter(tournament=tournament).count() == 1
    registry = django_rq.get_queue(jobs.QUEUE).scheduled_job_registry
    following = [j for j in registry.get_job_ids() if j.startswith("arena-tick-")]
    assert len(following) == 1 and following[0].startswith(f"arena-tick-{tournament.id}-")
    job = django_rq.get_queue(jobs.QUEUE).fetch_job(following[0])
    assert job is not None and job.args == (tournament.id,)


def test_a_player_who_pauses_while_the_pairing_reads_is_not_paired():
    tournament = arena.create(account("creator"), "Race", "3+0", 30, timezone.now())
    ids = [account(f"p{index}") for index in range(2)]
    for index, player in enumerate(ids):
        arena.join(tournament.id, player, f"p{index}")
    Tournament.objects.filter(pk=tournament.id).update(status=Tournament.Status.STARTED)
    read = list(Entry.objects.filter(tournament=tournament))    # what the pairing read, then one pauses
    arena.withdraw(tournament.id, ids[1])
    assert jobs._start(tournament, *read) is None
    assert not Game.objects.exists() and not Pairing.objects.exists()
    assert Entry.objects.get(tournament=tournament, player_id=ids[0]).free_since is not None


def test_the_hourly_schedule_puts_back_the_ticks_redis_lost():
    soon = arena.create(account("host1"), "Soon", "3+0", 30, timezone.now() + timedelta(hours=1))
    running = arena.create(account("host2"), "Running", "3+0", 30, timezone.now())
    Tournament.objects.filter(pk=running.id).update(status=Tournament.Status.STARTED)
    assert sorted(jobs.revive_ticks()) == sorted([soon.id, running.id])     # nothing on the scheduler yet
    queue = django_rq.get_queue(jobs.QUEUE)
    assert queue.fetch_job(jobs.tick_job_id(soon.id, soon.starts_at)) is not None
    assert work() == 1      # the running arena's tick: it runs and leaves its heartbeat
    assert jobs.revive_ticks() == []


def test_the_workers_maintenance_comes_often_and_puts_back_the_ticks_redis_lost():
    running = arena.create(account("host"), "Running", "3+0", 30, timezone.now())
    Tournament.objects.filter(pk=running.id).update(status=Tournament.Status.STARTED)
    queue = django_rq.get_queue(jobs.QUEUE)
    worker = Worker([queue], connection=queue.connection)
    assert worker.maintenance_interval == MAINTENANCE_EVERY_S < 60     # RQ's own: 600 s
    assert queue.get_jobs() == []
    worker.run_maintenance_tasks()
    assert [(job.func_name, job.args) for job in queue.get_jobs()] == [("game.tournaments.jobs.tick", (running.id,))]
    assert work() == 1
    worker.run_maintenance_tasks()      # ticked: nothing to put back
    assert queue.get_jobs() == []
