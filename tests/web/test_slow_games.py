"""A game whose row is held (a long transaction, a stuck process) keeps its slowness to itself:
the other games of the process go on at their usual pace."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connection

from game.round import actions, store
from tests.web.conftest import recv

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(not connection.features.has_select_for_update,
                                 reason="rows lock on PostgreSQL; SQLite locks the whole database")]

HELD_S = 3.0


def hold_rows(game_ids: list[str], locked: threading.Barrier, release: threading.Event) -> None:
    """One transaction per game, each holding that game's row until ``release``."""
    from django.db import connection, transaction
    with transaction.atomic():
        for game_id in game_ids:
            store.load_for_update(game_id)
        locked.wait(5)
        release.wait(HELD_S)
    connection.close()


async def test_games_whose_rows_are_held_do_not_hold_up_another_game(alice, bob):
    slow = settings.GAME_DB_THREADS   # as many held games as the process has database threads
    games = [await database_sync_to_async(actions.start_game)(black=(alice.player_id, "alice"),
                                                               white=(bob.player_id, "bob"))
             for _ in range(slow + 1)]
    honest, held = games[0].id, [g.id for g in games[1:]]
    a, snap = await alice.connect(honest)
    b, _ = await bob.connect(honest)
    slow_sockets = [(await alice.connect(game_id))[0] for game_id in held]
    locked, release = threading.Barrier(slow + 1), threading.Event()
    holders = [threading.Thread(target=hold_rows, args=([game_id], locked, release)) for game_id in held]
    for holder in holders:
        holder.start()
    try:
        await asyncio.to_thread(locked.wait, 5)
        for comm in slow_sockets:   # one move in each held game: each waits for its row
            await comm.send_json_to({"type": "move", "move": "11-15", "v": 0})
        await asyncio.sleep(0.2)
        started = time.monotonic()
        await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
        event = await recv(b, timeout=HELD_S + 5)
        waited = time.monotonic() - started
        assert event["type"] == "move" and event["move"] == "11-15"
        assert waited < 1.0, f"the honest game's move waited {waited:.2f} s behind the held games"
    finally:
        release.set()
        for holder in holders:
            await asyncio.to_thread(holder.join)
    for comm in slow_sockets:   # the held games' moves are played once their rows are free
        event = await recv(comm, timeout=10)
        assert (event["type"], event["move"]) == ("move", "11-15")
    for comm in [a, b, *slow_sockets]:
        await comm.disconnect()
