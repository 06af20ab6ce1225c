"""Presence lost by Redis (a restart, a failover, a flush) never makes a connected player lose."""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings
from django.utils import timezone

from game.models import Game
from game.round import actions, presence
from tests.web.conftest import recv

pytestmark = pytest.mark.django_db(transaction=True)


def _thinking_for(black: str, white: str, seconds: float) -> Game:
    """A 15+10 game after each side's first move, Black to move for ``seconds`` already."""
    now = timezone.now()
    game = actions.start_game(black=(black, "alice"), white=(white, "bob"), time_control="15+10",
                              now=now - timedelta(seconds=seconds + 20))
    actions.play_move(game.id, black, "11-15", 0, now=now - timedelta(seconds=seconds + 10))
    actions.play_move(game.id, white, "23-19", 1, now=now - timedelta(seconds=seconds))
    return Game.objects.get(pk=game.id)


def lose_presence(game_id: str) -> None:
    """What a Redis restart does to a game's presence: every key of it is gone."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.delete(presence._key(game_id), presence._seen_key(game_id))
    client.close()


async def test_a_connected_player_is_not_absent_after_presence_is_lost(alice, bob):
    game = await database_sync_to_async(_thinking_for)(alice.player_id, bob.player_id, 65)
    a, _ = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    await b.send_json_to({"type": "ping"})
    assert (await recv(b))["type"] == "pong"
    await b.send_json_to({"type": "claim_win"})
    assert (await recv(b))["code"] == "opponent_present"
    await database_sync_to_async(lose_presence)(game.id)
    # Bob's page pings first after the loss; Alice, connected and thinking, has not pinged yet.
    await b.send_json_to({"type": "ping"})
    assert (await recv(b))["type"] == "pong"
    await b.send_json_to({"type": "claim_win"})
    refusal = await recv(b)
    assert refusal["code"] == "opponent_present", refusal
    stored = await database_sync_to_async(Game.objects.get)(pk=game.id)
    assert (stored.status, stored.result) == ("active", "*")
    for comm in (a, b):
        await comm.disconnect()


def test_absence_is_unknown_without_a_record_of_the_game(alice):
    game = _thinking_for(alice.player_id, "b" * 32, 65)
    since = (timezone.now() - timedelta(seconds=65)).timestamp()
    lose_presence(game.id)
    assert presence.offline_s(game.id, "B", since) == 0.0
