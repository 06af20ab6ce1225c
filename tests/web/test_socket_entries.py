"""The server keeps the entries that count a client's sockets (game/round/admission.py) itself: they
outlive a page's silence as long as the socket is open, and those of a server process that died
stop counting within seconds.  Real Redis; short lifetimes so that the test waits little."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import override_settings

from game.round import actions, admission
from tests.web.test_socket_limits import admitted, open_socket

pytestmark = pytest.mark.django_db(transaction=True)


async def start_game(black, white) -> str:
    game = await database_sync_to_async(actions.create_game)(black.player_id, black.name, "B")
    await database_sync_to_async(actions.join_game)(game.id, white.player_id, white.name)
    return game.id


@pytest.fixture
def short_lives(monkeypatch):
    """Entries that live 1 s unless renewed, renewed every 0.3 s; heartbeats every 0.1 s."""
    monkeypatch.setattr(admission, "SOCKET_TTL_S", 1)
    monkeypatch.setattr(admission, "RENEW_EVERY_S", 0.3, raising=False)
    monkeypatch.setattr(admission, "HEARTBEAT_S", 0.1, raising=False)


@override_settings(GAME_SOCKETS_PER_SESSION=2, GAME_SOCKETS_PER_ADDRESS=0)
async def test_sockets_of_a_page_that_never_pings_still_count(alice, bob, short_lives):
    """Two open sockets that send nothing, three entry lifetimes long: a third is still refused."""
    game_id = await start_game(alice, bob)
    held = [await open_socket(alice, game_id) for _ in range(2)]
    assert [await admitted(c) for c in held] == [True, True]
    await asyncio.sleep(3)
    extra = await open_socket(alice, game_id)
    assert not await admitted(extra)
    for comm in (*held, extra):
        await comm.disconnect()


def leave_entries(player_id: str, instance: str, heartbeat_s: float, count: int) -> None:
    """``count`` entries of ``player_id``'s session left by the server process ``instance`` (alive
    for ``heartbeat_s`` more seconds; negative: its heartbeat expired that long ago), as a process
    killed with SIGKILL leaves them: never released, each still within its own lifetime."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    now = time.time()
    session_key, _ = admission._keys(player_id, None, "game")
    try:
        client.zadd(session_key, {f"{instance}:socket{i}": now + 60 for i in range(count)})
        client.zadd(admission.instances_key(), {instance: now + heartbeat_s})
    finally:
        client.close()


@override_settings(GAME_SOCKETS_PER_SESSION=2, GAME_SOCKETS_PER_ADDRESS=0)
async def test_the_sockets_of_a_dead_server_process_stop_counting(alice, bob):
    """A process killed with its two sockets of Alice's open: once its heartbeat expired, Alice's
    page gets both places back at once (not a minute later); a live process's entries still count."""
    game_id = await start_game(alice, bob)
    await asyncio.to_thread(leave_entries, alice.player_id, "living", 30, 2)
    refused = await open_socket(alice, game_id)
    assert not await admitted(refused)
    await asyncio.to_thread(leave_entries, bob.player_id, "killed", -1, 2)
    back = [await open_socket(bob, game_id) for _ in range(2)]
    assert [await admitted(c) for c in back] == [True, True]
    for comm in (refused, *back):
        await comm.disconnect()


@override_settings(GAME_SOCKETS_PER_SESSION=50, GAME_SOCKETS_PER_ADDRESS=0)
async def test_the_entries_are_renewed_a_slice_with_each_heartbeat(alice, monkeypatch):
    """Thirty sockets admitted together: two renewal periods later their entries were renewed at
    several heartbeats, a slice each, not all in one pipeline; every one of them was renewed."""
    monkeypatch.setattr(admission, "SOCKET_TTL_S", 10)
    monkeypatch.setattr(admission, "RENEW_EVERY_S", 0.6)
    monkeypatch.setattr(admission, "HEARTBEAT_S", 0.2)
    tickets = []
    for i in range(30):
        ticket, refused = await admission.admit(f"slice-{i}", alice.player_id, None)
        assert refused is None and ticket is not None
        tickets.append(ticket)
    key = tickets[0].keys[0]
    client = admission._client()
    written = dict(await client.zrange(key, 0, -1, withscores=True))
    await asyncio.sleep(1.5)
    renewed = dict(await client.zrange(key, 0, -1, withscores=True))
    assert set(renewed) == set(written) and len(renewed) == 30
    assert all(renewed[member] > written[member] for member in written)
    moments = set(renewed.values())
    assert len(moments) >= 3, sorted(moments)
    assert max(sum(1 for s in renewed.values() if s == moment) for moment in moments) <= 10
    for ticket in tickets:
        await admission.release(ticket)
