"""Live games out of time end with nobody watching: the periodic sweep on RQ's scheduler
(:mod:`game.round.timeouts`) ends them through the clock check's action and publishes the end."""

from __future__ import annotations

import json
from datetime import timedelta

import django_rq
import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client
from django.utils import timezone
from rq.registry import ScheduledJobRegistry

from game.models import Game
from game.round import actions, timeouts
from game.round.events import read_publication
from game.worker import Worker
from tests.web.conftest import Published, mark, recv

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB = "a" * 32, "b" * 32


def started(control: str, seconds_ago: float) -> Game:
    return actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control=control,
                              now=timezone.now() - timedelta(seconds=seconds_ago))


def events_of(game_id: str, since: int) -> list[str]:
    """What each event published for ``game_id`` since ``since`` (a :func:`mark`) says (``update.what``)."""
    assert Published.current is not None
    return [json.loads(read_publication(text)[1][0][1]).get("what", "")
            for gid, text in Published.current.items[since:] if gid == game_id]


def test_a_game_left_before_its_first_move_is_aborted():
    left = started("10+0", 31)
    young = started("10+0", 20)
    since = mark()
    assert timeouts.end_overdue() == [left.id]
    stored = Game.objects.get(pk=left.id)
    assert (stored.status, stored.termination, stored.result) == ("aborted", "aborted", "*")
    assert stored.version == left.version + 1
    assert events_of(left.id, since) == ["aborted"]
    assert Game.objects.get(pk=young.id).status == "active"


def test_a_game_left_mid_game_is_lost_on_time_by_the_side_to_move():
    now = timezone.now()
    game = started("1+0", 100)
    game = actions.play_move(game.id, ALICE, "11-15", game.version, now=now - timedelta(seconds=90)).game
    game = actions.play_move(game.id, BOB, "23-19", game.version, now=now - timedelta(seconds=80)).game
    client = Client()
    session = client.session
    session["player_id"] = ALICE
    session.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key
    assert "Your turn" in client.get("/games/mine").content.decode()
    # Black's clock has run since 80 s ago, with 60 s: out of time 20 s ago.
    assert timeouts.end_overdue(now) == [game.id]
    stored = Game.objects.get(pk=game.id)
    assert (stored.status, stored.termination, stored.result, stored.black_ms) == \
        ("finished", "time_forfeit", "0-1", 0)
    # The player's games list no longer says it is their turn.
    assert "Your turn" not in client.get("/games/mine").content.decode()


def test_untimed_correspondence_and_in_time_games_are_untouched():
    untimed = started("untimed", 10**6)
    correspondence = started("1d", 2 * 86_400)       # out of its day: its own mails and pages end it
    in_time = started("5+3", 10)
    assert timeouts.end_overdue() == []
    for game in (untimed, correspondence, in_time):
        stored = Game.objects.get(pk=game.id)
        assert (stored.status, stored.version) == ("active", game.version)


def test_the_sweep_run_twice_changes_nothing_more():
    games = [started("3+0", 40) for _ in range(3)]
    assert sorted(timeouts.end_overdue()) == sorted(g.id for g in games)
    versions = {g.id: g.version for g in Game.objects.filter(pk__in=[g.id for g in games])}
    since = mark()
    assert timeouts.end_overdue() == []
    assert {g.id: g.version for g in Game.objects.filter(pk__in=versions)} == versions
    assert all(events_of(g, since) == [] for g in versions)


def test_a_batch_is_bounded_and_pages_walk_on(monkeypatch):
    monkeypatch.setattr(timeouts, "PAGE", 2)
    games = [started("3+0", 40) for _ in range(5)]
    first = timeouts.end_overdue(limit=3)
    assert len(first) == 3
    rest = timeouts.end_overdue()
    assert sorted(first + rest) == sorted(g.id for g in games)


@pytest.mark.asyncio
async def test_a_connected_player_changes_nothing_the_clock_decides(alice, bob):
    now = timezone.now()
    game = await database_sync_to_async(actions.start_game)(
        black=(alice.player_id, "alice"), white=(bob.player_id, "bob"), time_control="1+0",
        now=now - timedelta(seconds=5))
    game = (await database_sync_to_async(actions.play_move)(
        game.id, alice.player_id, "11-15", game.version, now=now - timedelta(seconds=4))).game
    game = (await database_sync_to_async(actions.play_move)(
        game.id, bob.player_id, "23-19", game.version, now=now - timedelta(seconds=3))).game
    comm, snapshot = await alice.connect(game.id)
    assert snapshot["state"]["clock"]["running"] == "B"
    assert await database_sync_to_async(timeouts.end_overdue)(now) == []     # in time: the clock says so
    # A minute on, Black is out of time, connected or not: the sweep ends it and the page is told.
    assert await database_sync_to_async(timeouts.end_overdue)(now + timedelta(seconds=60)) == [game.id]
    event = await recv(comm)
    assert (event["type"], event["what"], event["state"]["result"]) == ("update", "flagged", "0-1")
    await comm.disconnect()


def test_the_job_puts_itself_back_and_a_workers_maintenance_starts_it():
    connection = django_rq.get_connection(timeouts.QUEUE)
    queue = django_rq.get_queue(timeouts.QUEUE)
    registry = ScheduledJobRegistry(queue=queue)
    connection.delete("clocks:sweep")
    before = set(registry.get_job_ids())
    try:
        left = started("1+0", 31)
        timeouts.sweep()
        assert Game.objects.get(pk=left.id).status == "aborted"
        scheduled = set(registry.get_job_ids()) - before
        assert len(scheduled) == 1 and next(iter(scheduled)).startswith("clock-sweep-")
        assert timeouts.keep_sweeping() is False            # the chain runs: its heartbeat is there
        for job_id in scheduled:
            registry.remove(job_id, delete_job=True)
        connection.delete("clocks:sweep")                   # lost (a Redis that kept nothing) ...
        Worker([queue], connection=queue.connection).run_maintenance_tasks()
        again = set(registry.get_job_ids()) - before        # ... a worker's maintenance puts it back
        assert len(again) == 1 and next(iter(again)).startswith("clock-sweep-")
        assert timeouts.keep_sweeping() is False            # once
    finally:
        for job_id in set(registry.get_job_ids()) - before:
            registry.remove(job_id, delete_job=True)
        connection.delete("clocks:sweep")
