"""Premoves through the game socket: the page sends a queued move the moment the opponent's move
arrives, and the server judges it like any move (static/js/premove.js decides only when to send).

A premove is an ordinary ``move`` frame carrying the version of the opponent's move event: a legal
one is played for everyone; one that the opponent's move made illegal is refused to its sender
only and changes nothing; one sent before the opponent's move arrives is refused as out of turn.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from game.round import actions
from tests.web.test_game_actions import everyone_gets
from tests.web.test_game_consumer import expect_refusal

pytestmark = pytest.mark.django_db(transaction=True)


async def live_game(alice, bob, carol, control="5+3"):
    """A live timed game: alice Black, bob White, carol watching; their sockets and the version."""
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B",
                                                            time_control=control)
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    c, _ = await carol.connect(game.id)
    assert snap["state"]["clock"]["control"] == control
    return game.id, a, b, c, snap["v"]


@pytest.mark.asyncio
async def test_premove_sent_on_the_opponents_move_is_played_like_any_move(alice, bob, carol):
    game_id, a, b, c, v = await live_game(alice, bob, carol)
    await a.send_json_to({"type": "move", "move": "11-15", "v": v})
    v = (await everyone_gets([a, b, c], type="move", move="11-15", turn="W"))["v"]
    # Alice queued 9-13 while bob thinks; a premove sent too early is out of turn, nothing changes.
    await expect_refusal(a, [b, c], {"type": "move", "move": "9-13", "v": v}, "not_your_turn", game_id)
    await b.send_json_to({"type": "move", "move": "24-20", "v": v})
    event = await everyone_gets([a, b, c], type="move", move="24-20", turn="B")
    assert "9-13" in event["state"]["legal"]
    # The page sends the premove at once, with the version of the move event it just applied.
    await a.send_json_to({"type": "move", "move": "9-13", "v": event["v"]})
    played = await everyone_gets([a, b, c], type="move", move="9-13", ply=3, turn="W", v=event["v"] + 1)
    assert played["state"]["clock"]["running"] == "W"
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_premove_made_illegal_by_the_opponents_move_is_refused_to_its_sender_only(alice, bob, carol):
    game_id, a, b, c, v = await live_game(alice, bob, carol)
    await a.send_json_to({"type": "move", "move": "11-15", "v": v})
    v = (await everyone_gets([a, b, c], type="move", move="11-15"))["v"]
    # Alice queued 9-13; bob offers a man on 18, so the capture 15x22 is compulsory for Black.
    await b.send_json_to({"type": "move", "move": "22-18", "v": v})
    event = await everyone_gets([a, b, c], type="move", move="22-18", turn="B", legal=["15x22"])
    await expect_refusal(a, [b, c], {"type": "move", "move": "9-13", "v": event["v"]},
                         "illegal_move", game_id)
    # The game goes on from where it was: alice may still play the capture.
    await a.send_json_to({"type": "move", "move": "15x22", "v": event["v"]})
    await everyone_gets([a, b, c], type="move", move="15x22", ply=3, v=event["v"] + 1)
    for comm in (a, b, c):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_premove_prefix_or_ambiguous_short_form_is_refused_to_its_sender_only(alice, bob, carol):
    # White to move; after 32-28 Black's man on 10 must take twice, over 14 and 22 or over 15 and
    # 23, both ending on 26: 10x17x26 or 10x19x26.
    fen = "W:W14,15,22,23,32:B6,7,10"
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B", fen,
                                                            time_control="5+3")
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    c, _ = await carol.connect(game.id)
    assert snap["state"]["turn"] == "W"
    await b.send_json_to({"type": "move", "move": "32-28", "v": snap["v"]})
    event = await everyone_gets([a, b, c], type="move", move="32-28", turn="B",
                                legal=["10x17x26", "10x19x26"])
    v = event["v"]
    # The first hop alone is no move at all (the page completes a queued hop from state.legal
    # before sending, or drops it when it continues two ways).
    await expect_refusal(a, [b, c], {"type": "move", "move": "10x17", "v": v}, "illegal_move", game.id)
    # From 10 to 26 fits both routes: refused with the candidates.
    error = await expect_refusal(a, [b, c], {"type": "move", "move": "10x26", "v": v},
                                 "ambiguous_move", game.id)
    assert sorted(error["candidates"]) == ["10x17x26", "10x19x26"]
    await a.send_json_to({"type": "move", "move": "10x19x26", "v": v})
    await everyone_gets([a, b, c], type="move", move="10x19x26", ply=2, v=v + 1)
    for comm in (a, b, c):
        await comm.disconnect()
