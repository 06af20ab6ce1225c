"""What a ``sync`` costs: this process's snapshots by (game, version, seat) (game/round/snapshots.py)
answer it without a database read while nothing changed, follow every event (also those of other
server processes, which come through Redis), run the clocks, and never serve a page a snapshot
older than an event it was sent; and one client address's sockets share one message rate, whatever
their sessions (game/round/admission.py)."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings

from game.round import actions, fanout, reads, snapshots
from tests.web.conftest import make_browser, recv
from tests.web.test_socket_limits import an_address, open_socket, start_game

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture
def db_reads(monkeypatch):
    """Every snapshot and version read from the database, counted (the real reads still run)."""
    counted: list[str] = []
    for name in ("snapshot", "seat_snapshots", "version"):
        real = getattr(reads, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            counted.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(reads, name, spy)
    return counted


async def test_a_sync_flood_reads_the_database_once(alice, bob, carol, db_reads):
    game_id = await start_game(alice, bob)
    a, first = await alice.connect(game_id)
    c, _ = await carol.connect(game_id)
    before = list(db_reads)
    for comm, n in ((a, 10), (c, 10)):
        for _ in range(n):
            await comm.send_json_to({"type": "sync"})
    got = [await recv(a) for _ in range(10)] + [await recv(c) for _ in range(10)]
    assert {m["type"] for m in got} == {"snapshot"}
    assert {m["v"] for m in got} == {first["v"]}
    # Each its own seat's copy: alice (to move) has the legal moves, the spectator not.
    assert all("legal" in m["state"] and m["you"] == "B" for m in got[:10])
    assert all("legal" not in m["state"] and m["you"] is None for m in got[10:])
    for _ in range(10):
        await a.send_json_to({"type": "sync", "v": first["v"]})
    assert [await recv(a) for _ in range(10)] == [{"type": "synced", "v": first["v"]}] * 10
    # Twenty snapshots and ten syncs: at most the spectator's one snapshot read (alice's was kept
    # when her socket opened), nothing for the versions.
    assert db_reads[len(before):].count("seat_snapshots") <= 1
    assert "snapshot" not in db_reads[len(before):]
    assert "version" not in db_reads[len(before):]
    for comm in (a, c):
        await comm.disconnect()


async def test_a_move_of_another_process_reaches_the_kept_snapshots(alice, bob, carol):
    """A move stored and published as another server process does (the database, then Redis): the
    snapshot kept at the old version is not served after the move's event came through."""
    game_id = await start_game(alice, bob)
    c, first = await carol.connect(game_id)
    await c.send_json_to({"type": "sync"})
    assert (await recv(c))["v"] == first["v"]

    def elsewhere():
        progress = actions.play_move(game_id, alice.player_id, "11-15", first["v"])
        fanout.publish_sync(game_id, progress.events)

    await database_sync_to_async(elsewhere)()
    moved = await recv(c)
    assert moved["type"] == "move" and moved["v"] == first["v"] + 1
    await c.send_json_to({"type": "sync"})
    again = await recv(c)
    assert again["type"] == "snapshot" and again["v"] == moved["v"] and again["moves"] == ["11-15"]
    await c.send_json_to({"type": "sync", "v": first["v"]})
    assert (await recv(c))["type"] == "snapshot"  # behind: a snapshot, not "synced"
    await c.disconnect()


async def test_a_lost_publish_is_noticed_once_the_kept_version_is_stale(alice, bob, carol, monkeypatch):
    """A move stored whose publish never came (its server died): within ``FRESH_S`` the kept version
    may still answer; after it the database is read again and the page gets the move."""
    monkeypatch.setattr(snapshots, "FRESH_S", 0.3)
    game_id = await start_game(alice, bob)
    c, first = await carol.connect(game_id)
    await database_sync_to_async(actions.play_move)(game_id, alice.player_id, "11-15", first["v"])
    await asyncio.sleep(0.4)
    await c.send_json_to({"type": "sync", "v": first["v"]})
    answer = await recv(c)
    assert answer["type"] == "snapshot" and answer["v"] == first["v"] + 1 and answer["moves"] == ["11-15"]
    await c.disconnect()


async def test_a_kept_snapshot_runs_the_clock(alice, bob, carol):
    game = await database_sync_to_async(actions.start_game)(
        black=(alice.player_id, "alice"), white=(bob.player_id, "bob"), time_control="5+3")
    a, first = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    v = first["v"]
    for comm, move in ((a, "11-15"), (b, "23-19"), (a, "9-14")):  # from a side's second move the clock runs
        await comm.send_json_to({"type": "move", "move": move, "v": v})
        v = (await recv(comm))["v"]
        await recv(b if comm is a else a)
    c, shot = await carol.connect(game.id)
    assert shot["state"]["clock"]["running"] == "W"
    await asyncio.sleep(0.5)
    await c.send_json_to({"type": "sync"})
    later = await recv(c)
    assert later["v"] == shot["v"]
    ran = shot["state"]["clock"]["W"] - later["state"]["clock"]["W"]
    assert 450 <= ran <= 1500, ran
    assert later["state"]["clock"]["B"] == shot["state"]["clock"]["B"]  # the side not to move stands
    # As the database says now (a socket of a fresh process would read it).
    fresh = await database_sync_to_async(reads.snapshot)(game.id, None)
    assert abs(fresh.state["clock"]["W"] - later["state"]["clock"]["W"]) <= 300
    for comm in (a, b, c):
        await comm.disconnect()


@override_settings(GAME_SOCKET_RATE_LIMIT="100/second", GAME_SESSION_RATE_LIMIT="100/second",
                   GAME_ADDRESS_RATE_LIMIT="10 per 3 seconds", GAME_SOCKETS_PER_ADDRESS=0)
async def test_an_addresss_sessions_share_one_rate_limit(alice, bob):
    """Five throwaway sessions of one address, two sockets each: together they may send what one
    address may (10 per 3 s here); the refused are answered ``rate_limited``; another address's
    player plays on."""
    game_id = await start_game(alice, bob)
    address = an_address()
    throwaway = [make_browser(f"x{i}") for i in range(5)]
    comms = [await open_socket(browser, game_id, address) for browser in throwaway for _ in range(2)]
    for comm in comms:
        assert (await recv(comm))["type"] == "snapshot"
    for comm in comms:
        for _ in range(3):
            await comm.send_json_to({"type": "ping"})
    answers = []
    for comm in comms:
        while not await comm.receive_nothing(timeout=0.3):
            answers.append(await comm.receive_json_from(timeout=1))
    kinds = [m.get("code", m["type"]) for m in answers if m["type"] != "audience"]
    assert kinds.count("pong") == 10, kinds
    assert kinds.count("rate_limited") >= 5
    b = await open_socket(bob, game_id, an_address())
    assert (await recv(b))["type"] == "snapshot"
    await b.send_json_to({"type": "ping"})
    assert (await recv(b))["type"] == "pong"
    for comm in (*comms, b):
        await comm.disconnect()
