""""Games being played now" lists only games someone has open or that moved lately, best rated first;
untimed games both players left are not listed, and ``manage.py housekeeping`` ends them as abandoned."""

from __future__ import annotations

import asyncio
import io
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command
from django.utils import timezone

from game.models import Game
from game.round import actions, reads

pytestmark = pytest.mark.django_db(transaction=True)


def idle(game: Game, age: timedelta) -> None:
    Game.objects.filter(pk=game.id).update(updated_at=timezone.now() - age)


def listed() -> list[str]:
    return [g["id"] for g in reads.live_games()]


def test_only_games_played_or_open_are_listed_best_rated_first(alice, bob, carol):
    fresh = actions.start_game(black=(alice.player_id, "alice"), white=(bob.player_id, "bob"))
    left = actions.start_game(black=(alice.player_id, "alice"), white=(carol.player_id, "carol"))
    strong = actions.start_game(black=(bob.player_id, "bob"), white=(carol.player_id, "carol"), time_control="10+5")
    weak = actions.start_game(black=(carol.player_id, "carol"), white=(alice.player_id, "alice"), time_control="10+5")
    Game.objects.filter(pk=strong.id).update(rated=True, black_rating=1900, white_rating=1850)
    Game.objects.filter(pk=weak.id).update(rated=True, black_rating=1400, white_rating=1420)
    idle(left, timedelta(minutes=10))
    assert listed() == [strong.id, weak.id, fresh.id]
    assert reads.live_games()[0]["rating"] == 1875


@pytest.mark.asyncio
async def test_an_idle_untimed_game_is_listed_while_a_player_has_it_open(alice, bob):
    game = await database_sync_to_async(actions.start_game)(black=(alice.player_id, "alice"),
                                                            white=(bob.player_id, "bob"))
    await database_sync_to_async(idle)(game, timedelta(minutes=10))
    assert await database_sync_to_async(listed)() == []
    comm, _snapshot = await alice.connect(game.id)
    assert await until_listed(game.id) == [game.id]  # presence is written in the background
    await comm.disconnect()
    assert await database_sync_to_async(listed)() == []


async def until_listed(game_id: str, timeout: float = 5.0) -> list[str]:
    """The live list once it holds ``game_id`` (or as it is after ``timeout`` seconds)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        ids = await database_sync_to_async(listed)()
        if game_id in ids or asyncio.get_running_loop().time() > deadline:
            return ids
        await asyncio.sleep(0.05)


def housekeeping(*args: str) -> str:
    out = io.StringIO()
    call_command("housekeeping", *args, stdout=out)
    return out.getvalue()


@pytest.mark.asyncio
async def test_housekeeping_ends_untimed_games_both_players_left_as_abandoned(alice, bob, carol):
    def start(black, white, control="untimed"):
        return actions.start_game(black=(black.player_id, black.name), white=(white.player_id, white.name),
                                  time_control=control)

    deserted = await database_sync_to_async(start)(alice, bob)
    watched = await database_sync_to_async(start)(bob, carol)
    timed = await database_sync_to_async(start)(carol, alice, "1d")
    seen, _ = await alice.connect(deserted.id)
    await seen.disconnect()
    open_page, _ = await carol.connect(watched.id)
    assert await until_listed(watched.id)
    for game in (deserted, watched, timed):
        await database_sync_to_async(idle)(game, timedelta(hours=25))

    report = await database_sync_to_async(housekeeping)("--dry-run")
    assert "would end 1 untimed games deserted by both players" in report
    assert (await database_sync_to_async(Game.objects.get)(pk=deserted.id)).status == "active"
    report = await database_sync_to_async(housekeeping)()
    assert "ended 1 untimed games deserted by both players as abandoned" in report
    ended = await database_sync_to_async(Game.objects.get)(pk=deserted.id)
    assert (ended.status, ended.result, ended.termination) == ("finished", "1/2-1/2", "abandoned")
    assert ended.version == deserted.version + 1
    for game in (watched, timed):
        assert (await database_sync_to_async(Game.objects.get)(pk=game.id)).status == "active"
    assert "ended 0 untimed games" in await database_sync_to_async(housekeeping)("--deserted-after", "48h")
    await open_page.disconnect()
