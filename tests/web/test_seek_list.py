"""The seeks everyone can see on the home page, played with one click through the pools' atomic claim,
and the counters (players online, games in play): real sockets, Redis and database.

Every refusal goes to its sender only and leaves nothing in the pool.
"""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from game.lobby import seeklist
from game.models import Game
from tests.web.conftest import make_browser
from tests.web.test_matchmaking import (  # noqa: F401
    matchmaking_prefix,
    next_message,
    open_lobby,
    pools,
    quiet,
)
from tests.web.test_rated_pools import account_browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def watch(comm) -> tuple[dict, dict]:
    """Send ``watch``; return the first ``seeks`` (every pool) and ``counters`` messages."""
    await comm.send_json_to({"type": "watch"})
    seeks = await next_message(comm)
    counters = await next_message(comm)
    assert seeks["type"] == "seeks" and counters["type"] == "counters", (seeks, counters)
    return seeks, counters


async def seeks_of(comm, pool: str, count: int) -> list[dict]:
    """The next ``seeks`` news of ``comm`` that lists ``count`` seeks in ``pool``."""
    while True:
        message = await next_message(comm, skip=("pool", "counters"))
        assert message["type"] == "seeks", message
        if pool in message["pools"] and len(message["pools"][pool]) == count:
            return message["pools"][pool]


async def seeking(comm, **fields) -> dict:
    await comm.send_json_to({"type": "seek", **fields})
    answer = await next_message(comm, skip=("pool", "seeks", "counters"))
    assert answer["type"] == "seeking", answer
    return answer


async def refused(comm, code: str, **fields) -> dict:
    await comm.send_json_to({"type": "seek", **fields})
    answer = await next_message(comm, skip=("pool", "seeks", "counters"))
    assert answer["type"] == "error" and answer["code"] == code, answer
    return answer


async def test_a_watching_page_sees_each_seek_without_its_player_id_and_sees_it_go():
    alice, bob = make_browser("alice"), make_browser("bob")
    watcher, seeker = await open_lobby(bob), await open_lobby(alice)
    first, counters = await watch(watcher)
    assert first["pools"]["5+3"] == [] and len(first["pools"]) == 50
    assert counters["online"] >= 1 and counters["playing"] >= 0
    mine = await seeking(seeker, pool="5+3", name="alice")
    [shown] = await seeks_of(watcher, "5+3", 1)
    assert shown["id"] == mine["seek"] and shown["name"] == "alice" and shown["rating"] is None
    assert set(shown) == {"id", "name", "rating", "waited_ms"}  # no player id, no channel
    await seeker.send_json_to({"type": "cancel"})
    assert await seeks_of(watcher, "5+3", 0) == []
    for comm in (watcher, seeker):
        await comm.disconnect()


async def test_a_page_that_starts_watching_just_after_a_seek_was_pushed_is_sent_that_seek():
    """The seek lists read for one page are reused by the next pages of the process for a while, but a
    page that joined after a seek was pushed must not be sent a list read before that seek."""
    alice, bob, carol = make_browser("alice"), make_browser("bob"), make_browser("carol")
    first, seeker = await open_lobby(bob), await open_lobby(alice)
    seeks, _counters = await watch(first)       # the process reads every list now
    assert seeks["pools"]["5+3"] == []
    mine = await seeking(seeker, pool="5+3", name="alice")
    await seeks_of(first, "5+3", 1)              # the seek has been pushed to the watching pages
    late = await open_lobby(carol)
    seeks, _counters = await watch(late)         # within LISTS_TTL_S of the first read
    assert [s["id"] for s in seeks["pools"]["5+3"]] == [mine["seek"]]
    for comm in (first, seeker, late):
        await comm.disconnect()


async def test_clicking_a_seek_plays_it_at_once_and_both_pages_go_to_one_game(pools):  # noqa: F811
    alice, bob = make_browser("alice"), make_browser("bob")
    a, b = await open_lobby(alice), await open_lobby(bob)
    await watch(b)
    mine = await seeking(a, pool="3+0-ballot", name="alice")
    await seeks_of(b, "3+0-ballot", 1)
    await b.send_json_to({"type": "seek", "pool": "3+0-ballot", "accept": mine["seek"], "name": "bob"})
    paired = [await next_message(a, skip=("pool", "seeks", "counters")),
              await next_message(b, skip=("pool", "seeks", "counters"))]
    assert [m["type"] for m in paired] == ["paired", "paired"], paired
    assert paired[0]["game"] == paired[1]["game"] and {paired[0]["color"], paired[1]["color"]} == {"B", "W"}
    game = await database_sync_to_async(Game.objects.get)(pk=paired[0]["game"])
    assert game.time_control == "3+0" and game.ballot is not None and not game.rated
    assert {game.black_name, game.white_name} == {"alice", "bob"}
    assert await pools.waiting("3+0-ballot") == 0
    for comm in (a, b):
        await comm.disconnect()


async def test_refused_clicks_go_to_their_sender_only_and_store_nothing(pools):  # noqa: F811
    alice, bob = make_browser("alice"), make_browser("bob")
    a, b = await open_lobby(alice), await open_lobby(bob)
    mine = await seeking(a, pool="10+0", name="alice")
    await refused(a, "already_seeking", pool="10+0", accept=mine["seek"])
    await refused(b, "seek_gone", pool="10+0", accept="ab" * 16)
    await refused(b, "seek_gone", pool="10+5", accept=mine["seek"])  # not a seek of that pool
    await refused(b, "bad_message", pool="10+0", accept="not a seek id")
    await refused(b, "bad_message", pool="10+0", accept=12)
    assert await pools.waiting("10+0") == 1 and await pools.waiting("10+5") == 0
    assert await quiet(a, 0.2) == []
    for comm in (a, b):
        await comm.disconnect()


async def test_ones_own_seek_cannot_be_played_from_another_tab(pools):  # noqa: F811
    alice = make_browser("alice")
    tab1, tab2 = await open_lobby(alice), await open_lobby(alice)
    mine = await seeking(tab1, pool="2+1", name="alice")
    await refused(tab2, "own_seek", pool="2+1", accept=mine["seek"])
    assert await pools.waiting("2+1") == 1
    for comm in (tab1, tab2):
        await comm.disconnect()


async def test_a_rated_seek_out_of_range_is_refused_with_when_the_range_reaches(pools):  # noqa: F811
    ann = await database_sync_to_async(account_browser)("ann", 1500.0)
    ben = await database_sync_to_async(account_browser)("ben", 1800.0)
    cat = await database_sync_to_async(account_browser)("cat", 1550.0)
    guest = make_browser("gus")
    a, b, c, g = [await open_lobby(x) for x in (ann, ben, cat, guest)]
    mine = await seeking(a, pool="5+0", rated=True)
    answer = await refused(b, "out_of_range", pool="5+0", rated=True, accept=mine["seek"])
    assert "ann (1500)" in answer["message"] and "1800" in answer["message"] and "about 20 s" in answer["message"]
    await refused(g, "rated_needs_account", pool="5+0", rated=True, accept=mine["seek"])
    assert await pools.waiting("5+0-rated") == 1
    await c.send_json_to({"type": "seek", "pool": "5+0", "rated": True, "accept": mine["seek"]})
    paired = await next_message(c, skip=("pool", "seeks", "counters"))
    assert paired["type"] == "paired", paired
    game = await database_sync_to_async(Game.objects.get)(pk=paired["game"])
    assert game.rated and {game.black_rating, game.white_rating} == {1500, 1550}
    for comm in (a, b, c, g):
        await comm.disconnect()


async def test_two_clicks_on_one_seek_at_once_make_one_game(pools):  # noqa: F811
    alice, bob, carol = make_browser("alice"), make_browser("bob"), make_browser("carol")
    a, b, c = await open_lobby(alice), await open_lobby(bob), await open_lobby(carol)
    mine = await seeking(a, pool="30+0", name="alice")
    await asyncio.gather(*(comm.send_json_to({"type": "seek", "pool": "30+0", "accept": mine["seek"]})
                           for comm in (b, c)))
    answers = [await next_message(comm, skip=("pool", "seeks", "counters")) for comm in (b, c)]
    kinds = sorted(answer["type"] for answer in answers)
    assert kinds == ["error", "paired"], answers
    assert [answer["code"] for answer in answers if answer["type"] == "error"] == ["seek_gone"]
    assert (await next_message(a, skip=("pool", "seeks", "counters")))["type"] == "paired"
    assert await pools.waiting("30+0") == 0
    games = await database_sync_to_async(lambda: Game.objects.filter(time_control="30+0").count())()
    assert games == 1
    for comm in (a, b, c):
        await comm.disconnect()


async def test_the_counters_count_a_watching_page_and_a_game_in_play():
    alice, bob = make_browser("alice"), make_browser("bob")
    a, b = await open_lobby(alice), await open_lobby(bob)
    _seeks, before = await watch(a)
    mine = await seeking(b, pool="1d", name="bob")
    await a.send_json_to({"type": "seek", "pool": "1d", "accept": mine["seek"]})
    assert (await next_message(a, skip=("pool", "seeks", "counters")))["type"] == "paired"
    after = await seeklist.read_counters()
    assert after["playing"] == before["playing"] + 1
    assert after["online"] == 2  # alice's watching page, and both seats of the game
    for comm in (a, b):
        await comm.disconnect()
