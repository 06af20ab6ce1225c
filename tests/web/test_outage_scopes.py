"""An outage window pauses only the clocks of the games it touched (game/round/outages.py): a failed
publish on one game's channel, another process's window of some games, a window that ended before
the turn began.  Real Redis (a refused connection for the failed publish), real database."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
import redis.asyncio
from channels.db import database_sync_to_async
from django.utils import timezone

from game.models import DeliveryOutage, Game
from game.round import actions, fanout, outages
from tests.web.conftest import recv
from tests.web.test_outages import dead_redis, start_game, timed_game, until

pytestmark = pytest.mark.django_db(transaction=True)


def window_of(games: list[str], seconds_ago: float, lasting: float) -> None:
    """Another process's window of ``games`` that began ``seconds_ago`` and lasted ``lasting`` s."""
    start = timezone.now() - timedelta(seconds=seconds_ago)
    end = start + timedelta(seconds=lasting)
    DeliveryOutage.objects.create(instance="another-process", started_at=start, seen_at=end, ended_at=end,
                                  games=" ".join(games))
    outages.tracker.reset()   # read the windows again at once


def test_another_process_s_window_of_one_game_pauses_that_game_s_clock_only(alice, bob, carol):
    """Two games, each with Black thinking 70 s of a one-minute clock; another process could not
    deliver the first game's events for 30 s of it: the first game goes on (40 s charged), the
    second is lost on time."""
    paused = timed_game(alice.player_id, bob.player_id, thinking_s=70)
    other = timed_game(carol.player_id, bob.player_id, thinking_s=70)
    window_of([paused.id], seconds_ago=50, lasting=30)
    assert outages.tracker.pauses(other.id, other.turn_started_at) == ()
    assert [e["what"] for e in actions.check_clock(other.id).events] == ["flagged"]
    assert actions.check_clock(paused.id).events == []
    moved = actions.play_move(paused.id, alice.player_id, "8-11", paused.version)
    assert 19_000 <= moved.game.black_ms <= 20_500


def test_a_window_that_ended_before_the_turn_began_is_not_read_by_its_clock(alice, bob):
    game = timed_game(alice.player_id, bob.player_id, thinking_s=10)
    window_of([game.id], seconds_ago=3600, lasting=30)           # an hour ago: another turn's
    window_of([game.id], seconds_ago=8, lasting=2)
    assert len(outages.tracker.pauses(game.id, game.turn_started_at)) == 1
    assert len(outages.tracker.pauses(game.id)) == 2


async def test_a_failed_publish_on_one_game_s_channel_pauses_that_game_and_not_another(alice, bob, carol):
    """Redis refuses the publish of a move in one game: the window opened is that game's (in
    memory and as stored); another game in play on the same process is not paused."""
    game_id = await start_game(alice, bob)
    other_id = await start_game(carol, bob)
    a, snap = await alice.connect(game_id)
    c, _ = await carol.connect(other_id)
    hub = fanout.hub()
    working = hub.client
    hub.client = redis.asyncio.Redis.from_url(dead_redis(), socket_connect_timeout=1)
    try:
        await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
        assert (await recv(a, timeout=2))["type"] == "move"
        assert outages.tracker.open
        assert len(outages.tracker.pauses(game_id)) == 1
        assert outages.tracker.pauses(other_id) == ()
    finally:
        await hub.client.aclose()
        hub.client = working
    await until(lambda: asyncio.sleep(0, result=not outages.tracker.open))

    def stored() -> list[tuple[str, bool]]:
        return [(games, ended is not None) for games, ended in DeliveryOutage.objects.values_list("games", "ended_at")]

    await until(lambda: database_sync_to_async(lambda: stored() == [(game_id, True)])())
    another_process = outages.Tracker()
    await database_sync_to_async(another_process.read_others)()
    assert another_process.pauses(other_id, read=False) == ()
    assert len(another_process.pauses(game_id, read=False)) == 1
    assert await database_sync_to_async(lambda: Game.objects.get(pk=other_id).status)() == "active"
    for comm in (a, c):
        await comm.disconnect()
