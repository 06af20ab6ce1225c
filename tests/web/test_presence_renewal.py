"""The server keeps its open sockets' presence entries (game/round/presence.py) itself, all in one
round trip: a page counts in the audience while its socket is open and heard, whether or not its
pings renew anything, and a closed socket is renewed no more.  Real Redis; short lifetimes."""

from __future__ import annotations

import asyncio
import time

import pytest

from game.round import presence
from tests.web.test_socket_entries import start_game

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


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


async def test_a_renewal_that_reaches_redis_after_the_leave_does_not_bring_the_entry_back(alice, bob):
    """The process's renewal of a batch of entries crosses a socket's leave: the leave wins, and the
    entry is not written again for another minute."""
    game_id = await start_game(alice, bob)
    entry = (game_id, "renewed-after-leave", "B", presence.SEEN_TTL_S)
    presence.keeper().keep(*entry)
    await presence.refresh(*entry)
    assert (await presence.audience(game_id))["online"]["B"] is True
    await presence.leave(*entry)
    assert "renewed-after-leave" not in presence.keeper().entries
    pipe = presence._client().pipeline(transaction=False)
    presence._write(pipe, [entry], time.time(), renew=True)     # the renewal, sent before the leave
    await pipe.execute()
    assert (await presence.audience(game_id))["online"]["B"] is False


async def test_sockets_opening_together_write_their_entries_in_few_round_trips(alice, bob, monkeypatch):
    """Sixty sockets' first writes at once: every entry is in Redis when its write returns, in a few
    pipelines, not one each; a pipeline holds at most ``RENEW_BATCH`` of them."""
    monkeypatch.setattr(presence, "RENEW_BATCH", 25)
    games = [await start_game(alice, bob) for _ in range(20)]
    pipelines = []
    client = presence._client()
    real = client.pipeline

    def counted(*args, **kwargs):
        pipelines.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(client, "pipeline", counted)
    entries = [(game_id, f"together-{game_id}-{role}", role, presence.SEEN_TTL_S)
               for game_id in games for role in "BWS"]
    await asyncio.gather(*(presence.refresh(*entry) for entry in entries))
    assert 3 <= len(pipelines) <= 4      # 60 entries, 25 a pipeline; the first may go alone
    for game_id in games:
        assert await presence.audience(game_id) == {"spectators": 1, "online": {"B": True, "W": True}}
    for entry in entries:
        await presence.leave(*entry)


async def test_the_renewals_are_spread_over_the_period(alice, bob, monkeypatch):
    """Thirty sockets written at the same moment: two periods later their entries were renewed in
    slices at several moments, not all in one burst (which held the event loop while moves waited);
    every one of them was renewed."""
    monkeypatch.setattr(presence, "VIEWER_TTL_S", 10)
    monkeypatch.setattr(presence, "RENEW_EVERY_S", 0.6)
    monkeypatch.setattr(presence, "RENEW_SLICES", 3)
    game_id = await start_game(alice, bob)
    entries = [(game_id, f"spread-{i}", "S", presence.SEEN_TTL_S) for i in range(30)]
    for entry in entries:
        presence.keeper().keep(*entry)
    await asyncio.gather(*(presence.refresh(*entry) for entry in entries))
    client = presence._client()
    written = dict(await client.zrange(presence._key(game_id), 0, -1, withscores=True))
    assert len(set(written.values())) == 1          # one round trip wrote them all
    await asyncio.sleep(1.3)
    renewed = dict(await client.zrange(presence._key(game_id), 0, -1, withscores=True))
    assert set(renewed) == set(written)
    assert all(renewed[member] > written[member] for member in written)
    assert len(set(renewed.values())) >= 3, sorted(set(renewed.values()))
    assert max(sum(1 for s in renewed.values() if s == score) for score in renewed.values()) <= 10
    for entry in entries:
        await presence.leave(*entry)
