"""Blocks (docs/people.md, "Blocks"): made from the profile's form, they refuse the blocked player's
challenges, keep their chat lines from the blocker's sockets (live and in snapshots), and keep the
two apart in the pools and on the seek list.  Real sockets, channel layer, Redis and database.
"""

from __future__ import annotations

import dataclasses
import random
from unittest.mock import ANY

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.test import Client

from game.lobby.pairing import Pairing, Seek, pair_rated, pair_seeks
from game.models import Block, Game
from game.people import blocks
from game.people.models import Challenge, Follow
from game.round import actions
from tests.web.conftest import make_browser, recv
from tests.web.test_challenges import accounts, answer, people
from tests.web.test_matchmaking import (  # noqa: F401
    matchmaking_prefix,
    next_message,
    open_lobby,
    pools,
)
from tests.web.test_seek_list import refused, seeking, watch

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def client_of(browser) -> Client:
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = browser.cookie
    return client


def post(browser, path: str, data: dict) -> str:
    """POST ``data`` to ``path`` as ``browser`` (answered with a redirect); then the text of the
    browser's own profile, which shows the message saying what was done or why not."""
    client = client_of(browser)
    response = client.post(path, data)
    assert response.status_code == 302, response
    return client.get(f"/@/{browser.name}").content.decode()


async def block(blocker, name: str, action: str = "block") -> str:
    return await database_sync_to_async(post)(blocker, f"/@/{name}/block", {"action": action})


async def test_the_blocked_player_cannot_challenge_and_is_told_no_more_than_cannot():
    ann, ben = await accounts("ann", "ben")
    b, _ = await people(ben)
    await b.send_json_to({"type": "follow", "name": "ann"})
    await answer(b)
    await b.send_json_to({"type": "challenge", "to": "ann", "control": "5+0", "color": "B"})
    open_one = await answer(b)
    assert "You block ben" in await block(ann, "ben")
    page = (await database_sync_to_async(client_of(ann).get)("/@/ben")).content.decode()
    assert 'id="unblock-button"' in page and 'id="challenge-form"' not in page
    assert await database_sync_to_async(blocks.blocks)(ann.player_id, ben.player_id)
    # following ends and the open challenge is cancelled
    assert await database_sync_to_async(Follow.objects.count)() == 0
    assert (await database_sync_to_async(Challenge.objects.get)(pk=open_one["id"])).status == "cancelled"
    a, _ = await people(ann)
    await b.send_json_to({"type": "challenge", "to": "ANN", "control": "5+0", "color": "B"})
    refusal = await answer(b)
    assert refusal["type"] == "error" and refusal["code"] == "blocked"
    assert refusal["message"] == "You cannot challenge this player."
    assert await a.receive_nothing(timeout=0.1)  # the blocker's page hears nothing of it
    await a.send_json_to({"type": "challenge", "to": "ben", "control": "5+0", "color": "B"})
    assert (await answer(a))["message"] == "You block this player: unblock them first."
    await b.send_json_to({"type": "follow", "name": "ann"})
    assert (await answer(b))["code"] == "blocked"
    assert await database_sync_to_async(Challenge.objects.filter(status="open").count)() == 0
    await block(ann, "ben", "unblock")
    await b.send_json_to({"type": "challenge", "to": "ann", "control": "5+0", "color": "B"})
    assert (await answer(b))["type"] == "challenge_sent"
    for page in (a, b):
        await page.disconnect()


async def test_block_refusals_have_codes_and_store_nothing(settings):
    ann, _ben = await accounts("ann", "ben")
    for name, code in (("nobody", "no_such_player"), ("ann", "self_block")):
        assert f"code-{code}" in await block(ann, name), name
    assert await database_sync_to_async(Block.objects.count)() == 0
    guest_response = await database_sync_to_async(Client().post)("/@/ben/block", {"action": "block"})
    assert guest_response.status_code == 302 and "/accounts/login/" in guest_response["Location"]
    get = await database_sync_to_async(client_of(ann).get)("/@/ben/block")
    assert get.status_code == 405


async def test_blocks_are_limited(monkeypatch):
    ann, _ben, cat = await accounts("ann", "ben", "cat")
    monkeypatch.setattr(blocks, "MAX_BLOCKS", 1)
    await block(ann, "ben")
    assert "code-too_many_blocks" in await block(ann, "cat")
    assert await database_sync_to_async(Block.objects.filter(blocker=ann.player_id).count)() == 1
    assert cat.player_id not in {b.blocked for b in await database_sync_to_async(list)(Block.objects.all())}


async def test_the_blockers_sockets_do_not_receive_the_blocked_players_chat():
    ann, ben = await accounts("ann", "ben")
    game = await database_sync_to_async(actions.start_game)(black=(ann.player_id, "ann"),
                                                            white=(ben.player_id, "ben"))
    b, _ = await ben.connect(game.id)
    await b.send_json_to({"type": "chat", "room": "players", "text": "before the block"})
    assert (await recv(b))["line"]["text"] == "before the block"
    await block(ann, "ben")
    a, snapshot = await ann.connect(game.id)
    assert snapshot["chat"] == {"players": []}  # the line written before is not in the snapshot
    await b.send_json_to({"type": "chat", "room": "players", "text": "you cannot read this"})
    assert (await recv(b))["line"]["text"] == "you cannot read this"  # the writer sees its own line
    await a.send_json_to({"type": "chat", "room": "players", "text": "quiet now"})
    assert (await recv(a))["line"]["text"] == "quiet now"  # the next line ann gets is her own
    assert (await recv(b))["line"]["text"] == "quiet now"
    for comm in (a, b):
        await comm.disconnect()


def seek(n: int, player: str, avoid: tuple[str, ...] = (), pool: str = "untimed", rating=None) -> Seek:
    return Seek(id=f"s{n}", player=player, name=player, pool=pool, channel=f"c{n}", since=n, rating=rating,
                avoid=avoid)


async def test_the_pairing_decision_passes_over_a_blocked_pair():
    seeks = [seek(1, "ann", ("ben",)), seek(2, "ben"), seek(3, "cat")]
    assert [{p.black.id, p.white.id} for p in pair_seeks(seeks, random.Random(0))] == [{"s1", "s3"}]
    rated = [seek(1, "ann", ("ben",), "5+0-rated", 1500), seek(2, "ben", (), "5+0-rated", 1500),
             seek(3, "cat", (), "5+0-rated", 1600)]
    assert [{p.black.id, p.white.id} for p in pair_rated(rated, 0, random.Random(0))] == [{"s1", "s3"}]
    assert Seek.from_json(seeks[0].to_json()) == seeks[0].__class__(**{**seeks[0].__dict__, "since": 0})


async def test_the_claim_script_refuses_a_blocked_pair_either_way(pools):  # noqa: F811
    ann, ben = seek(1, "ann", ("ben",)), seek(2, "ben")
    for s in (ann, ben):
        await pools.add(s)
    taken, _ = await pools.claim("untimed", [Pairing(ann, ben)])
    assert taken == [] and await pools.waiting("untimed") == 2
    cat, dan = seek(3, "cat"), seek(4, "dan", ("cat",))
    for s in (cat, dan):
        await pools.add(s)
    taken, _ = await pools.claim("untimed", [Pairing(cat, dan)])  # the blocked player's seek first
    assert taken == [] and await pools.waiting("untimed") == 4


async def test_the_pool_never_pairs_the_two_and_a_click_on_the_seek_is_refused(pools):  # noqa: F811
    ann, ben, cat = await accounts("ann", "ben", "cat")
    await block(ann, "ben")
    a, b, b2, c = [await open_lobby(x) for x in (ann, ben, ben, cat)]
    mine = await seeking(a, pool="untimed")
    await seeking(b, pool="untimed")
    assert await pools.waiting("untimed") == 2  # not paired together
    refusal = await refused(b2, "blocked", pool="untimed", accept=mine["seek"])
    assert refusal["message"] == "You cannot play this seek."
    assert await pools.waiting("untimed") == 2  # ben's click left nothing in the pool
    await seeking(c, pool="untimed")  # cat meets ann, who waited longest
    paired = await next_message(c, skip=("pool", "seeks", "counters"))
    assert paired["type"] == "paired", paired
    game = await database_sync_to_async(Game.objects.get)(pk=paired["game"])
    assert {game.black_player, game.white_player} == {ann.player_id, cat.player_id}
    assert await pools.waiting("untimed") == 1  # ben still waits
    for comm in (a, b, b2, c):
        await comm.disconnect()


async def listed(comm, pool: str, seek_id: str) -> list[str]:
    """The ids of the seeks of ``pool`` in the next ``seeks`` news of ``comm`` that lists ``seek_id``
    (no page is ever sent whose player a seek is)."""
    while True:
        message = await next_message(comm, skip=("pool", "counters"))
        assert set(message) - {"waiting"} == {"type", "pools"}, message   # no owners
        ids = [s["id"] for s in message["pools"].get(pool, [])]
        if seek_id in ids:
            return ids


async def test_the_seek_list_hides_each_ones_seeks_from_the_other_both_ways(pools):  # noqa: F811
    ann, ben, cat = await accounts("ann", "ben", "cat")
    gus = make_browser("gus")
    await block(ann, "ben")
    watchers = {name: await open_lobby(b) for name, b in (("ann", ann), ("ben", ben), ("cat", cat), ("gus", gus))}
    for comm in watchers.values():
        await watch(comm)
    a1, b1, a2 = await open_lobby(ann), await open_lobby(ben), await open_lobby(ann)
    first = (await seeking(a1, pool="5+0"))["seek"]
    theirs = (await seeking(b1, pool="5+0"))["seek"]   # the two never meet: both wait
    second = (await seeking(a2, pool="5+0"))["seek"]
    # Live: each page's news leaves out the seeks of the other, after them as before them.
    assert await listed(watchers["cat"], "5+0", second) == [first, theirs, second]
    assert await listed(watchers["gus"], "5+0", second) == [first, theirs, second]
    assert await listed(watchers["ann"], "5+0", second) == [first, second]
    assert await listed(watchers["ben"], "5+0", theirs) == [theirs]
    # The first list of a page opened now.
    for browser, shown in ((ben, [theirs]), (ann, [first, second]), (cat, [first, theirs, second])):
        late = await open_lobby(browser)
        seeks, _counters = await watch(late)
        assert set(seeks) == {"type", "pools", "waiting"}
        assert [s["id"] for s in seeks["pools"]["5+0"]] == shown, browser.name
        await late.disconnect()
    assert await pools.waiting("5+0") == 3
    for comm in (*watchers.values(), a1, b1, a2):
        await comm.disconnect()


def named(browser, name: str):
    """``browser`` with ``name`` as its session's display name, as a log-in leaves it."""
    store = SessionStore(session_key=browser.cookie)
    store.load()
    store["name"] = name
    store.save()
    return dataclasses.replace(browser, cookie=store.session_key)


async def test_a_blocked_spectators_lines_do_not_reach_the_blocker_either():
    ann, ben = await accounts("ann", "ben")
    ann, ben = named(ann, "ann"), named(ben, "ben")
    cat, dan = make_browser("cat"), make_browser("dan")
    game = await database_sync_to_async(actions.start_game)(black=(cat.player_id, "cat"),
                                                            white=(dan.player_id, "dan"))
    await block(ann, "ben")
    a, _ = await ann.connect(game.id)
    b, _ = await ben.connect(game.id)
    await b.send_json_to({"type": "chat", "room": "spectators", "text": "hello from ben"})
    assert (await recv(b))["line"] == {"id": ANY, "room": "spectators", "seat": None, "name": "ben",
                                       "text": "hello from ben"}
    await a.send_json_to({"type": "chat", "room": "spectators", "text": "ann here"})
    assert (await recv(a))["line"]["text"] == "ann here"  # ben's line never reached ann
    assert (await recv(b))["line"]["text"] == "ann here"
    for comm in (a, b):
        await comm.disconnect()
