"""The game socket with the real channel layer (Redis) and the real database."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from checkers_site.asgi import application
from game import rules
from game.models import Game
from game.round import actions
from tests.web.conftest import mark, public, recv, sent_since

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def stored(game_id: str) -> tuple:
    """Everything stored about a game, to compare before and after a refused message."""
    game = Game.objects.get(pk=game_id)
    moves = list(game.move_set.order_by("ply").values_list("ply", "notation", "fen_after"))
    return (game.fen, game.ply, game.version, game.position_version, game.status, game.result,
            game.termination, game.black_player, game.white_player, moves)


async def start_game(alice, bob, start_fen=None) -> str:
    """Alice creates a game as Black, Bob joins as White; return its id."""
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B", start_fen)
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    return game.id


async def test_first_oca_game_reaches_all_sockets_identically(alice, bob, carol, data_dir):
    with open(data_dir / "OCA_2.0.pdn", encoding="utf-8") as handle:
        record = next(rules.read_games(handle))
    expected = rules.Game()
    for text in record.moves:
        expected.play(text)
    game_id = await start_game(alice, bob)
    a, snap_a = await alice.connect(game_id)
    b, snap_b = await bob.connect(game_id)
    c, snap_c = await carol.connect(game_id)
    assert (snap_a["you"], snap_b["you"], snap_c["you"]) == ("B", "W", None)
    assert snap_a["state"]["status"] == "active"
    sockets = {"B": a, "W": b}
    seen = {"a": [], "b": [], "c": []}
    last = {}
    v = snap_a["v"]
    for ply, move in enumerate(expected.moves, start=1):
        mover = sockets["B" if ply % 2 else "W"]
        await mover.send_json_to({"type": "move", "move": str(move), "v": v})
        for key, comm in (("a", a), ("b", b), ("c", c)):
            event = await recv(comm)
            assert event["type"] == "move", event
            assert event["ply"] == ply
            assert event["v"] == v + 1
            seen[key].append(event["move"])
            last[key] = event
        v += 1
    assert seen["a"] == seen["b"] == seen["c"] == [str(m) for m in expected.moves]
    assert last["c"]["state"]["fen"] == expected.position.fen()
    to_move = "a" if expected.position.turn.value == "B" else "b"
    assert last[to_move]["state"]["legal"] == [str(m) for m in expected.position.legal_moves()]
    assert public(last["a"]) == public(last["b"]) == last["c"]
    for comm in (a, b, c):
        await comm.send_json_to({"type": "sync"})
        snap = await recv(comm)
        assert snap["moves"] == [str(m) for m in expected.moves]
        assert snap["state"]["fen"] == expected.position.fen()
        await comm.disconnect()
    game = await database_sync_to_async(Game.objects.get)(pk=game_id)
    assert game.ply == len(expected.moves) == 44
    assert game.fen == expected.position.fen()


async def expect_refusal(comm, others, frame, code, game_id):
    """Send ``frame``; the sender gets ``error`` with ``code``, nobody else hears anything (nothing
    was published for them by the time the sender's refusal came), nothing is stored."""
    before = await database_sync_to_async(stored)(game_id)
    since = mark()
    if isinstance(frame, bytes):
        await comm.send_to(bytes_data=frame)
    elif isinstance(frame, str):
        await comm.send_to(text_data=frame)
    else:
        await comm.send_json_to(frame)
    error = await recv(comm)
    assert error["type"] == "error"
    assert error["code"] == code, error
    assert error["message"]
    if code in ("stale", "bad_version"):
        snap = await recv(comm)
        assert snap["type"] == "snapshot"
    for other in others:
        assert sent_since(since, other) == []
    assert await database_sync_to_async(stored)(game_id) == before
    return error


async def test_bad_input_gets_error_to_sender_only_and_changes_nothing(alice, bob, carol):
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    v = snap["v"]
    cases = [
        (c, [a, b], {"type": "move", "move": "11-15", "v": v}, "not_seated"),
        (b, [a, c], {"type": "move", "move": "22-18", "v": v}, "not_your_turn"),
        (a, [b, c], {"type": "move", "move": "11-16-20", "v": v}, "illegal_move"),
        (a, [b, c], {"type": "move", "move": "hello", "v": v}, "malformed_move"),
        (a, [b, c], {"type": "move", "move": "11-15", "v": v + 5}, "bad_version"),
        (a, [b, c], {"type": "move", "move": "11-15"}, "bad_message"),
        (a, [b, c], {"type": "move", "move": 1115, "v": v}, "bad_message"),
        (a, [b, c], {"type": "move", "move": "11-15", "v": True}, "bad_message"),
        (a, [b, c], {"type": "move", "move": "11-15", "v": -1}, "bad_message"),
        (a, [b, c], {"type": "move", "move": "1" * 200, "v": v}, "bad_message"),
        (a, [b, c], {"type": "resign!"}, "unknown_type"),
        (a, [b, c], {"move": "11-15"}, "unknown_type"),
        (a, [b, c], "not json", "bad_message"),
        (a, [b, c], "[1, 2]", "bad_message"),
        (a, [b, c], b"\x00\x01binary", "bad_message"),
        (a, [b, c], json.dumps({"type": "move", "move": "11-15", "v": v, "pad": "x" * 5000}), "too_large"),
    ]
    for sender, others, frame, code in cases:
        await expect_refusal(sender, others, frame, code, game_id)
    # The game still goes on normally afterwards.
    await a.send_json_to({"type": "move", "move": "11-15", "v": v})
    for comm in (a, b, c):
        assert (await recv(comm))["move"] == "11-15"
    # A move sent from a position that is no longer current is stale.
    await expect_refusal(a, [b, c], {"type": "move", "move": "15-19", "v": v + 1}, "not_your_turn", game_id)
    await expect_refusal(b, [a, c], {"type": "move", "move": "22-18", "v": v}, "stale", game_id)
    await b.send_json_to({"type": "move", "move": "22-18", "v": v + 1})
    for comm in (a, b, c):
        assert (await recv(comm))["move"] == "22-18"
    for comm in (a, b, c):
        await comm.disconnect()


async def test_ambiguous_short_form_lists_candidates(alice, bob):
    # The black king on 10 can take the four men round it clockwise or anticlockwise: "10x10" fits both.
    fen = "B:W14,15,22,23:BK10"
    position = rules.Position.from_fen(fen)
    by_ends = {}
    for move in position.legal_moves():
        by_ends.setdefault((move.path[0], move.path[-1]), []).append(str(move))
    ambiguous = [moves for moves in by_ends.values() if len(moves) > 1]
    assert ambiguous, "the position must have two routes with the same start and end"
    candidates = sorted(ambiguous[0])
    start, end = candidates[0].split("x")[0], candidates[0].split("x")[-1]
    game_id = await start_game(alice, bob, start_fen=fen)
    a, snap = await alice.connect(game_id)
    error = await expect_refusal(a, [], {"type": "move", "move": f"{start}x{end}", "v": snap["v"]},
                                 "ambiguous_move", game_id)
    assert sorted(error["candidates"]) == candidates
    await a.disconnect()


async def test_game_over_when_side_to_move_has_no_legal_move(alice, bob, carol):
    # Black's 21-25 leaves White's man on 29 with no legal move.
    fen = "B:W29:B21,K22"
    game_id = await start_game(alice, bob, start_fen=fen)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    position = rules.Position.from_fen(fen)
    winning = None
    for move in position.legal_moves():
        after = position.play(move)
        if not after.legal_moves():
            winning = str(move)
            break
    assert winning, "the set-up position must have a move that leaves White without a legal move"
    await a.send_json_to({"type": "move", "move": winning, "v": snap["v"]})
    for comm in (a, b, c):
        event = await recv(comm)
        assert event["state"]["status"] == "finished"
        assert event["state"]["winner"] == "B"
        assert event["state"]["result"] == "1-0"
        assert event["state"]["termination"] in ("no_moves", "no_pieces")
        assert event["state"]["reason"]
        assert "legal" not in event["state"]
    await expect_refusal(b, [a, c], {"type": "move", "move": "30-26", "v": event["v"]}, "game_over", game_id)
    for comm in (a, b, c):
        await comm.disconnect()


async def test_move_before_opponent_joins_is_refused(alice):
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    a, snap = await alice.connect(game.id)
    assert snap["state"]["status"] == "waiting"
    assert "legal" not in snap["state"]
    await expect_refusal(a, [], {"type": "move", "move": "11-15", "v": snap["v"]}, "not_started", game.id)
    await a.disconnect()


async def test_join_is_published_to_waiting_creator(alice, bob):
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "W")
    a, snap = await alice.connect(game.id)
    outcome = await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    from game.round.fanout import publish
    await publish(game.id, outcome.events)
    event = await recv(a)
    assert event["type"] == "seats"
    assert event["v"] == snap["v"] + 1
    assert event["state"]["seats"] == {"B": {"name": "bob"}, "W": {"name": "alice"}}
    assert event["state"]["status"] == "active"
    await a.disconnect()


async def test_foreign_origin_is_refused(alice, bob):
    game_id = await start_game(alice, bob)
    comm = WebsocketCommunicator(application, f"/ws/game/{game_id}/",
                                 headers=alice.headers(origin="https://evil.example"))
    connected, _ = await comm.connect(timeout=5)
    assert not connected
    await comm.disconnect()


async def test_refused_origin_opens_no_channel_layer_channel(alice, bob, monkeypatch):
    game_id = await start_game(alice, bob)
    layer = get_channel_layer()
    opened = []
    real_new_channel = layer.new_channel

    async def new_channel(*args, **kwargs):
        opened.append(args)
        return await real_new_channel(*args, **kwargs)

    monkeypatch.setattr(layer, "new_channel", new_channel)
    comm = WebsocketCommunicator(application, f"/ws/game/{game_id}/",
                                 headers=alice.headers(origin="https://evil.example"))
    connected, _ = await comm.connect(timeout=5)
    assert not connected
    await comm.disconnect()
    assert opened == []  # no channel, so no receive loop on Redis to outlive the refused socket


async def test_unknown_game_is_closed(alice):
    comm = WebsocketCommunicator(application, "/ws/game/nosuchgame/", headers=alice.headers())
    connected, _ = await comm.connect(timeout=5)
    assert connected  # accepted, then closed with the code the page knows to stop on
    closing = await comm.receive_output(timeout=5)
    assert closing == {"type": "websocket.close", "code": 4404}
    await comm.disconnect()


@pytest.mark.parametrize("path", ["/ws/game//", "/ws/game/a/b/", "/ws/nothing/", "/ws/", "/ws/game/%00/",
                                  "/ws/game/abcdefghij%00/", "/ws/game/ABCDEFGHIJ/", "/ws/game/abcdefghij/extra/",
                                  "/ws/lobby/x/"])
async def test_paths_no_route_matches_are_closed_like_an_unknown_game(alice, path, caplog):
    comm = WebsocketCommunicator(application, path, headers=alice.headers())
    connected, _ = await comm.connect(timeout=5)
    assert connected
    closing = await comm.receive_output(timeout=5)
    assert closing == {"type": "websocket.close", "code": 4404}
    await comm.disconnect()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def drain(comm, quiet_s: float = 0.3) -> list[dict]:
    """Every message the socket receives until it has been quiet for ``quiet_s`` seconds."""
    out = []
    while not await comm.receive_nothing(timeout=quiet_s):
        message = await comm.receive_json_from(timeout=1)
        if message["type"] != "audience":
            out.append(message)
    return out


async def test_two_tabs_racing_for_one_ply_land_once(alice, bob):
    game_id = await start_game(alice, bob)
    a1, snap = await alice.connect(game_id)
    a2, _ = await alice.connect(game_id)  # the same player in a second tab
    v = snap["v"]
    await asyncio.gather(
        a1.send_json_to({"type": "move", "move": "11-15", "v": v}),
        a2.send_json_to({"type": "move", "move": "9-13", "v": v}),
    )
    received = await drain(a1) + await drain(a2)
    moves = [m for m in received if m["type"] == "move"]
    errors = [m for m in received if m["type"] == "error"]
    assert len(moves) == 2 and moves[0]["move"] == moves[1]["move"]
    assert len(errors) == 1 and errors[0]["code"] in ("stale", "not_your_turn")
    game = await database_sync_to_async(Game.objects.get)(pk=game_id)
    assert game.ply == 1
    assert await database_sync_to_async(game.move_set.count)() == 1
    for comm in (a1, a2):
        await comm.disconnect()


@override_settings(GAME_SOCKET_RATE_LIMIT="10 per 3 seconds")
async def test_flood_is_rate_limited_then_recovers(alice, bob):
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    before = await database_sync_to_async(stored)(game_id)
    for _ in range(25):
        await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"] + 99})
    received = await drain(a, quiet_s=0.5)
    codes = [m.get("code") for m in received if m["type"] == "error"]
    assert codes.count("bad_version") == 10
    assert 1 <= codes.count("rate_limited") <= 3
    assert await database_sync_to_async(stored)(game_id) == before
    await asyncio.sleep(3.1)
    await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
    assert (await recv(a))["move"] == "11-15"
    await a.disconnect()


@pytest.mark.parametrize("origin", [
    "http://127.0.0.1:9999",      # another port of the same host: another site
    "https://127.0.0.1",
    "http://localhost:8000",      # an allowed host, but not this request's
    "null",
    "",
])
async def test_other_origins_than_the_sites_own_are_refused(alice, bob, origin):
    game_id = await start_game(alice, bob)
    headers = [h for h in alice.headers() if h[0] != b"origin"]
    if origin:
        headers.append((b"origin", origin.encode()))
    comm = WebsocketCommunicator(application, f"/ws/game/{game_id}/", headers=headers)
    connected, _ = await comm.connect(timeout=5)
    assert not connected
    await comm.disconnect()
