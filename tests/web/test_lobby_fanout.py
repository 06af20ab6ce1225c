"""The lobby's news of a change: published once, read once by the process, written as one same text to
each watching page (a blocked player's page gets a copy of its own); a closed page is sent nothing
more; a burst within the window is one frame a page.  Real sockets, Redis and database."""

from __future__ import annotations

import asyncio
import json

import pytest

from game.lobby import fanout as lobby_fanout
from game.lobby.fanout import CHANNEL_KEY, fanout
from game.lobby.pairing import POOLS
from game.round.fanout import hub
from tests.web.conftest import make_browser
from tests.web.test_blocks import block
from tests.web.test_challenges import accounts
from tests.web.test_fanout import kill_subscriptions
from tests.web.test_matchmaking import matchmaking_prefix, open_lobby  # noqa: F401
from tests.web.test_seek_list import seeking, watch

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def news_text(comm, pool: str, seek_id: str | None) -> str:
    """The text of the next ``seeks`` frame of ``comm`` that lists ``pool`` with ``seek_id`` in it
    (None: with nobody in it), as the socket wrote it."""
    while True:
        text = await comm.receive_from(timeout=5)
        message = json.loads(text)
        if message["type"] != "seeks" or pool not in message["pools"]:
            continue
        ids = [s["id"] for s in message["pools"][pool]]
        if (seek_id in ids) if seek_id is not None else not ids:
            return text


def lobby_publications(published) -> list[str]:
    return [text for key, text in published.items if key == CHANNEL_KEY]


async def test_two_watchers_are_written_the_same_frame_of_a_third_sockets_seek(published):
    w1, w2 = await open_lobby(make_browser("ann")), await open_lobby(make_browser("ben"))
    for comm in (w1, w2):
        await watch(comm)
    seeker = await open_lobby(make_browser("cat"))
    assert len(fanout().pages) == 3
    mine = (await seeking(seeker, pool="5+3", name="cat"))["seek"]
    first, second = await news_text(w1, "5+3", mine), await news_text(w2, "5+3", mine)
    assert first == second
    news = json.loads(first)
    assert news["pools"] == {"5+3": [{"id": mine, "name": "cat", "rating": None,
                                      "waited_ms": news["pools"]["5+3"][0]["waited_ms"]}]}
    assert news["waiting"] == {"5+3": 1}
    assert lobby_publications(published) == ["5+3"]      # one message for every process
    for comm in (w1, w2, seeker):
        await comm.disconnect()
    assert fanout().pages == set()


async def test_a_page_blocked_by_the_seeker_gets_its_own_copy_without_the_seek():
    ann, ben = await accounts("ann", "ben")
    await block(ann, "ben")
    ann_page, gus_page = await open_lobby(ann), await open_lobby(make_browser("gus"))
    for comm in (ann_page, gus_page):
        await watch(comm)
    seeker = await open_lobby(ben)
    theirs = (await seeking(seeker, pool="5+0"))["seek"]
    shown = json.loads(await news_text(gus_page, "5+0", theirs))
    hidden = json.loads(await news_text(ann_page, "5+0", None))
    assert shown["waiting"] == hidden["waiting"] == {"5+0": 1}
    assert hidden == {"type": "seeks", "pools": {"5+0": []}, "waiting": {"5+0": 1}}   # no owners
    assert set(shown) == {"type", "pools", "waiting"}
    for comm in (ann_page, gus_page, seeker):
        await comm.disconnect()


async def test_a_page_that_closes_is_dropped_from_the_fanout():
    leaving, staying = await open_lobby(make_browser("ann")), await open_lobby(make_browser("ben"))
    for comm in (leaving, staying):
        await watch(comm)
    assert len(fanout().pages) == 2
    await leaving.disconnect()
    assert len(fanout().pages) == 1
    seeker = await open_lobby(make_browser("cat"))
    mine = (await seeking(seeker, pool="10+0", name="cat"))["seek"]
    assert json.loads(await news_text(staying, "10+0", mine))["waiting"] == {"10+0": 1}
    for comm in (staying, seeker):
        await comm.disconnect()
    assert fanout().pages == set()


async def test_a_burst_within_the_window_is_one_frame_a_page_with_every_change(monkeypatch, published):
    monkeypatch.setattr(lobby_fanout, "WINDOW_S", 1.0)
    watchers = [await open_lobby(make_browser(name)) for name in ("ann", "ben")]
    for comm in watchers:
        await watch(comm)
    burst = ["1+0", "3+0", "5+0", "10+5", "15+10"]
    seekers = [await open_lobby(make_browser(f"dan{i}")) for i in range(len(burst))]
    made = {pool: (await seeking(comm, pool=pool))["seek"] for pool, comm in zip(burst, seekers, strict=True)}
    assert 1 <= len(lobby_publications(published)) <= len(burst)
    texts = [await news_text(comm, burst[-1], made[burst[-1]]) for comm in watchers]
    assert texts[0] == texts[1]
    news = json.loads(texts[0])
    assert {pool: [s["id"] for s in seeks] for pool, seeks in news["pools"].items()} == {
        pool: [seek_id] for pool, seek_id in made.items()}
    assert news["waiting"] == dict.fromkeys(burst, 1)
    # The next frame each page is written is the news of the next change: none came in between.
    await seekers[0].send_json_to({"type": "cancel"})
    for comm in watchers:
        assert json.loads(await comm.receive_from(timeout=5)) == {
            "type": "seeks", "pools": {burst[0]: []}, "waiting": {burst[0]: 0}}
    for comm in (*watchers, *seekers):
        await comm.disconnect()


@pytest.mark.alone
async def test_a_lost_subscription_sends_every_pools_news_when_it_is_back():
    """A change published while the process's subscription is down never reaches it: once it is
    subscribed again, every page is sent every pool's news (read then, so with that change)."""
    watcher = await open_lobby(make_browser("ann"))
    await watch(watcher)
    assert hub().subscriptions == 1
    assert await asyncio.to_thread(kill_subscriptions) >= 1
    seeker = await open_lobby(make_browser("cat"))
    mine = (await seeking(seeker, pool="3+2", name="cat"))["seek"]
    while True:   # the fan-out's frames (compact JSON, encoded once), passing over any sent before
        text = await watcher.receive_from(timeout=10)
        news = json.loads(text)
        if text.startswith('{"type":"seeks"') and len(news["pools"]) == len(POOLS):
            break
    assert [s["id"] for s in news["pools"]["3+2"]] == [mine]
    assert news["waiting"] == {**dict.fromkeys(POOLS, 0), "3+2": 1}
    assert hub().subscriptions == 2
    for comm in (watcher, seeker):
        await comm.disconnect()
