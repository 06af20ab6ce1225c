"""Draw offers, resignation, abort and rematch through the game socket, and their races."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from game import errors
from game.models import Game
from game.round import actions, drawer, fanout, store
from game.round.events import read_publication
from tests.web.conftest import Published, make_browser, mark, public, recv
from tests.web.test_game_consumer import expect_refusal, start_game, stored

pytestmark = pytest.mark.django_db(transaction=True)


async def seated(alice, bob, carol):
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    return game_id, a, b, c, snap["v"]


async def everyone_gets(comms, **expected) -> dict:
    """Each socket receives the same next game event, matching ``expected`` (keys of the event or its
    state), the side to move's seat with the legal moves (``legal``; ``[]``: nobody gets any)."""
    events = [await recv(comm) for comm in comms]
    assert all(public(e) == public(events[0]) for e in events), events
    event = events[0]
    for key, value in expected.items():
        if key == "legal":
            assert [e["state"]["legal"] for e in events if "legal" in e["state"]] == \
                ([value] if value else []), (key, events, value)
            continue
        actual = event[key] if key in event else event["state"][key]
        assert actual == value, (key, actual, value)
    return event


async def play(comm, comms, move, v):
    await comm.send_json_to({"type": "move", "move": move, "v": v})
    event = await everyone_gets(comms, type="move", move=move)
    return event["v"]


@pytest.mark.asyncio
async def test_draw_offer_accepted_ends_game_drawn_for_everyone(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    await a.send_json_to({"type": "draw_offer"})
    await everyone_gets([a, b, c], type="update", what="draw_offered", by="B", draw_offer="B", v=v + 1)
    await b.send_json_to({"type": "draw_accept"})
    await everyone_gets([a, b, c], type="update", what="draw_accepted", by="W", status="finished",
                        result="1/2-1/2", termination="agreement", winner=None, draw_offer=None, legal=[])
    await expect_refusal(a, [b, c], {"type": "move", "move": "11-15", "v": v + 2}, "game_over", game_id)
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_draw_declined_then_offerer_must_wait_three_moves(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    await a.send_json_to({"type": "draw_offer"})
    await everyone_gets([a, b, c], what="draw_offered")
    await b.send_json_to({"type": "draw_decline"})
    event = await everyone_gets([a, b, c], what="draw_declined", by="W", draw_offer=None)
    assert event["state"]["draw_allowed_at"] == {"B": 6, "W": 0}
    v = event["v"]
    await expect_refusal(a, [b, c], {"type": "draw_offer"}, "too_soon", game_id)
    for mover, move in ((a, "11-15"), (b, "23-19"), (a, "8-11"), (b, "22-17"), (a, "9-13"), (b, "17-14")):
        await expect_refusal(a, [b, c], {"type": "draw_offer"}, "too_soon", game_id)
        v = await play(mover, [a, b, c], move, v)
    await a.send_json_to({"type": "draw_offer"})
    await everyone_gets([a, b, c], what="draw_offered", by="B")
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_opponent_moving_declines_pending_offer(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    v = await play(a, [a, b, c], "11-15", v)
    await a.send_json_to({"type": "draw_offer"})
    v = (await everyone_gets([a, b, c], what="draw_offered", draw_offer="B"))["v"]
    event = await (play(b, [a, b, c], "23-19", v))
    game = await database_sync_to_async(Game.objects.get)(pk=game_id)
    assert game.draw_offer == "" and game.black_draw_ply == 2 + 6
    await expect_refusal(b, [a, c], {"type": "draw_accept"}, "no_offer", game_id)
    assert event == v + 1
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_offer_while_opponent_offer_pending_accepts_it(alice, bob, carol):
    _game_id, a, b, c, _v = await seated(alice, bob, carol)
    await b.send_json_to({"type": "draw_offer"})
    await everyone_gets([a, b, c], what="draw_offered", by="W")
    await a.send_json_to({"type": "draw_offer"})
    await everyone_gets([a, b, c], what="draw_accepted", result="1/2-1/2", termination="agreement")
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_draw_refusals_change_nothing(alice, bob, carol):
    game_id, a, b, c, _v = await seated(alice, bob, carol)
    await expect_refusal(c, [a, b], {"type": "draw_offer"}, "not_seated", game_id)
    await expect_refusal(c, [a, b], {"type": "draw_accept"}, "not_seated", game_id)
    await expect_refusal(a, [b, c], {"type": "draw_accept"}, "no_offer", game_id)
    await a.send_json_to({"type": "draw_offer"})
    await everyone_gets([a, b, c], what="draw_offered")
    await expect_refusal(a, [b, c], {"type": "draw_accept"}, "no_offer", game_id)  # one's own offer
    await expect_refusal(a, [b, c], {"type": "draw_offer"}, "offer_pending", game_id)
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_resign_gives_opponent_the_win(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    v = await play(a, [a, b, c], "11-15", v)
    await expect_refusal(c, [a, b], {"type": "resign"}, "not_seated", game_id)
    await b.send_json_to({"type": "resign"})
    event = await everyone_gets([a, b, c], what="resigned", by="W", status="finished", result="1-0",
                                termination="resignation", winner="B")
    assert "resign" in event["state"]["reason"].lower()
    await expect_refusal(b, [a, c], {"type": "resign"}, "game_over", game_id)
    await expect_refusal(a, [b, c], {"type": "draw_offer"}, "game_over", game_id)
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_abort_allowed_until_both_sides_moved(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    v = await play(a, [a, b, c], "11-15", v)
    await expect_refusal(c, [a, b], {"type": "abort"}, "not_seated", game_id)
    await b.send_json_to({"type": "abort"})
    await everyone_gets([a, b, c], what="aborted", status="aborted", result="*", termination="aborted",
                        winner=None)
    await expect_refusal(a, [b, c], {"type": "abort"}, "game_over", game_id)
    for comm in (a, b, c):
        await comm.disconnect()

    game_id, a, b, c, v = await seated(alice, bob, carol)
    v = await play(a, [a, b, c], "11-15", v)
    v = await play(b, [a, b, c], "23-19", v)
    await expect_refusal(a, [b, c], {"type": "abort"}, "too_late", game_id)
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_rematch_swaps_colours_and_reaches_spectators(alice, bob, carol):
    game_id, a, b, c, _v = await seated(alice, bob, carol)
    await expect_refusal(a, [b, c], {"type": "rematch_offer"}, "not_over", game_id)
    await a.send_json_to({"type": "resign"})
    await everyone_gets([a, b, c], what="resigned")
    await expect_refusal(c, [a, b], {"type": "rematch_offer"}, "not_seated", game_id)
    await b.send_json_to({"type": "rematch_offer"})
    await everyone_gets([a, b, c], what="rematch_offered", by="W", rematch_offer="W")
    await expect_refusal(b, [a, c], {"type": "rematch_offer"}, "offer_pending", game_id)
    await a.send_json_to({"type": "rematch_accept"})
    event = await everyone_gets([a, b, c], what="rematch_started", rematch_offer=None)
    new_id = event["state"]["next_game"]
    assert new_id and new_id != game_id
    rematch = await database_sync_to_async(Game.objects.get)(pk=new_id)
    assert (rematch.black_player, rematch.white_player) == (bob.player_id, alice.player_id)
    assert rematch.status == "active"
    await expect_refusal(a, [b, c], {"type": "rematch_offer"}, "rematch_started", game_id)
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_rematch_declined_clears_proposal(alice, bob, carol):
    game_id, a, b, c, _v = await seated(alice, bob, carol)
    await a.send_json_to({"type": "abort"})
    await everyone_gets([a, b, c], what="aborted")
    await a.send_json_to({"type": "rematch_offer"})
    await everyone_gets([a, b, c], what="rematch_offered", by="B")
    await expect_refusal(a, [b, c], {"type": "rematch_decline"}, "no_offer", game_id)
    await b.send_json_to({"type": "rematch_decline"})
    await everyone_gets([a, b, c], what="rematch_declined", rematch_offer=None, next_game=None)
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_spectators_are_counted_live(alice, bob, carol, data_dir):
    game_id = await start_game(alice, bob)
    a, _ = await alice.connect(game_id)
    assert await a.receive_json_from(timeout=5) == \
        {"type": "audience", "spectators": 0, "online": {"B": True, "W": False}, "game_v": 1}
    since = mark()
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    d, _ = await make_browser("dave").connect(game_id)
    round_ = fanout.hub().round(game_id)
    announcing = round_.audience
    # Three sockets joined within a second: one notice with them all, not three.
    notice = await a.receive_json_from(timeout=5)
    assert notice == {"type": "audience", "spectators": 2, "online": {"B": True, "W": True}, "game_v": 1}
    assert announcing is not None
    await announcing
    assert round_.audience is None    # no other notice on its way
    assert Published.current is not None
    published = [read_publication(text)[1] for _, text in Published.current.items[since:]]
    assert [[json.loads(text) for _, text in copies] for copies in published] == [[notice]]
    await c.disconnect()
    await d.disconnect()
    assert (await a.receive_json_from(timeout=5))["spectators"] == 0
    for comm in (a, b):
        await comm.disconnect()


def race(*calls):
    """Run each call in its own thread and database connection, all released at once; return results."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(i, call):
        try:
            barrier.wait()
            try:
                call()
                results[i] = "ok"
            except errors.ActionError as exc:
                results[i] = exc.code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("repeat", range(5))
def test_accept_racing_the_acceptors_move_settles_once(repeat):
    alice, bob = "a" * 32, "b" * 32
    game = actions.start_game(black=(alice, "alice"), white=(bob, "bob"))
    game = actions.play_move(game.id, alice, "11-15", game.version).game
    game = drawer.offer_draw(game.id, alice).game
    results = race(lambda: drawer.answer_draw(game.id, bob, accept=True),
                   lambda: actions.play_move(game.id, bob, "23-19", game.version))
    game.refresh_from_db()
    if results[0] == "ok":
        assert results[1] in ("game_over", "stale")
        assert (game.status, game.result, game.ply) == ("finished", "1/2-1/2", 1)
    else:
        assert results == ["no_offer", "ok"]
        assert (game.status, game.draw_offer, game.ply) == ("active", "", 2)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("repeat", range(5))
def test_resign_racing_accept_settles_once(repeat):
    alice, bob = "a" * 32, "b" * 32
    game = actions.start_game(black=(alice, "alice"), white=(bob, "bob"))
    game = drawer.offer_draw(game.id, alice).game
    results = race(lambda: drawer.answer_draw(game.id, bob, accept=True),
                   lambda: actions.resign(game.id, alice))
    game.refresh_from_db()
    assert sorted(results) == ["game_over", "ok"]
    expected = ("1/2-1/2", "agreement") if results[0] == "ok" else ("0-1", "resignation")
    assert (game.result, game.termination) == expected
    before = stored(game.id)
    for call in (lambda: actions.resign(game.id, bob), lambda: actions.abort(game.id, alice),
                 lambda: drawer.offer_draw(game.id, alice)):
        with pytest.raises(errors.ActionError):
            call()
    assert stored(game.id) == before


@pytest.mark.asyncio
async def test_spectator_actions_are_refused_without_waiting_for_the_game_lock(alice, bob, carol):
    """While a transaction holds the game's row lock, a spectator's move and resignation are refused
    `not_seated` at once: spectators never queue on the lock (nor take the sockets' database
    threads while they wait)."""
    game_id, a, b, c, v = await seated(alice, bob, carol)
    locked, release = threading.Event(), threading.Event()

    def hold_lock():
        from django.db import connection, transaction
        with transaction.atomic():
            store.load_for_update(game_id)
            locked.set()
            release.wait(10)
        connection.close()

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert await asyncio.to_thread(locked.wait, 5)
        started = time.monotonic()
        await c.send_json_to({"type": "resign"})
        assert (await recv(c, timeout=2))["code"] == "not_seated"
        await c.send_json_to({"type": "move", "move": "11-15", "v": v})
        assert (await recv(c, timeout=2))["code"] == "not_seated"
        assert time.monotonic() - started < 1.5
    finally:
        release.set()
        await asyncio.to_thread(holder.join)
    for comm in (a, b, c):
        await comm.disconnect()
