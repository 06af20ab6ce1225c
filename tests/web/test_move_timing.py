"""A move is timed from its arrival at the socket: the server's own delays are charged to nobody."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from game.models import Game
from game.round import actions, store
from tests.web.conftest import recv

pytestmark = pytest.mark.django_db(transaction=True)

BUSY_S = 3.0


def _with_time_left(black: str, white: str, left_s: float) -> Game:
    """A 1+0 game after each side's first move (not timed), Black to move with ``left_s`` left."""
    turn_started = timezone.now() - timedelta(seconds=60 - left_s)
    game = actions.start_game(black=(black, "alice"), white=(white, "bob"), time_control="1+0",
                              now=turn_started - timedelta(seconds=20))
    actions.play_move(game.id, black, "11-15", 0, now=turn_started - timedelta(seconds=10))
    actions.play_move(game.id, white, "23-19", 1, now=turn_started)
    return Game.objects.get(pk=game.id)


async def test_a_move_in_time_while_the_game_row_is_busy_is_played(alice, bob):
    """Sent with 2.5 s left while another transaction holds the game's row for 3 s: the move is
    played, charged up to its arrival, and the clock the players see is the one at arrival."""
    game = await database_sync_to_async(_with_time_left)(alice.player_id, bob.player_id, 2.5)
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    locked, release = threading.Event(), threading.Event()

    def hold_the_row():
        from django.db import connection, transaction
        with transaction.atomic():
            store.load_for_update(game.id)
            locked.set()
            release.wait(BUSY_S)
        connection.close()

    holder = threading.Thread(target=hold_the_row)
    holder.start()
    try:
        assert await asyncio.to_thread(locked.wait, 5)
        await a.send_json_to({"type": "move", "move": "8-11", "v": snap["v"]})
        event = await recv(b, timeout=10)
    finally:
        release.set()
        await asyncio.to_thread(holder.join)
    assert event["type"] == "move" and event["move"] == "8-11", event
    left = event["state"]["clock"]["B"]
    assert 1_500 <= left <= 2_500, left   # charged up to arrival, not the 3 s the row was busy
    stored = await database_sync_to_async(Game.objects.get)(pk=game.id)
    assert (stored.status, stored.ply, stored.black_ms) == ("active", 3, left)
    for comm in (a, b):
        await comm.disconnect()


def test_the_opponents_turn_starts_when_the_move_is_played():
    game = _with_time_left("a" * 32, "b" * 32, 10)
    arrived = timezone.now()
    played = arrived + timedelta(seconds=3)
    [event] = actions.play_move(game.id, "a" * 32, "8-11", 2, now=played, arrived_at=arrived).events
    stored = Game.objects.get(pk=game.id)
    assert stored.turn_started_at == played
    assert 9_000 <= stored.black_ms <= 10_000
    assert event["state"]["clock"]["running"] == "W"
