"""The server keeps its open sockets' presence entries (game/round/presence.py) itself, all in one
round trip: a page counts in the audience while its socket is open and heard, whether or not its
pings renew anything, and a closed socket is renewed no more.  Real Redis; short lifetimes."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from game.round import actions, presence

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def start_game(black, white) -> str:
    game = await database_sync_to_async(actions.create_game)(black.player_id, black.name, "B")
    await database_sync_to_async(actions.join_game)(game.id, white.player_id, white.name)
    return game.id


@pytest.fixture
def short_lives(monkeypatch):
    """Entries that live 1 s unless renewed; the process renews them every 0.3 s."""
    monkeypatch.setattr(presence, "VIEWER_TTL_S", 1)
    monkeypatch.setattr(presence, "RENEW_EVERY_S", 0.3, raising=False)


async def test_open_sockets_stay_in_the_audience_without_renewing_anything_themselves(alice, bob, carol,
                                                                                      short_lives):
    game_id = await start_game(alice, bob)
    a, _ = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    for _ in range(4):   # four entry lifetimes; the pings keep the sockets heard, nothing more
        await asyncio.sleep(1)
        for comm in (a, b, c):
            await comm.send_json_to({"type": "ping"})
    assert await presence.audience(game_id) == {"spectators": 1, "online": {"B": True, "W": True}}
    await c.disconnect()
    await asyncio.sleep(1.5)
    assert await presence.audience(game_id) == {"spectators": 0, "online": {"B": True, "W": True}}
    assert sorted(entry[2] for entry in presence.keeper().entries.values() if entry[0] == game_id) == ["B", "W"]
    await a.disconnect()
    await b.disconnect()
    assert not [entry for entry in presence.keeper().entries.values() if entry[0] == game_id]


async def test_the_renewal_of_many_sockets_goes_in_batches(alice, bob, short_lives, monkeypatch):
    """More sockets than one round trip renews: every entry is renewed all the same."""
    monkeypatch.setattr(presence, "RENEW_BATCH", 2, raising=False)
    game_id = await start_game(alice, bob)
    watchers = [await alice.connect(game_id) for _ in range(2)] + [await bob.connect(game_id)]
    others = []
    for _ in range(3):
        other = await start_game(alice, bob)
        others.append(other)
        watchers.append(await bob.connect(other))
    await asyncio.sleep(2.5)
    assert (await presence.audience(game_id))["online"] == {"B": True, "W": True}
    for other in others:
        assert (await presence.audience(other))["online"] == {"B": False, "W": True}
    for comm, _ in watchers:
        await comm.disconnect()
