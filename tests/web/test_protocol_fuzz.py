"""Hostile input on the game socket: thousands of generated frames against the real consumer.

Every frame gets an ``error`` with a documented code or is carried out as a
valid message; the sockets stay open; and the stored game is exactly what its
legal moves made it.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game import rules
from game.models import Game
from tests.web.conftest import make_browser
from tests.web.test_game_consumer import drain, start_game

ERROR_CODES = {
    "bad_message", "too_large", "unknown_type", "not_seated", "not_started", "not_your_turn",
    "game_over", "stale", "bad_version", "malformed_move", "illegal_move", "ambiguous_move",
    "offer_pending", "too_soon", "no_offer", "too_late", "not_over", "rematch_started",
}
TYPES = ["move", "sync", "ping", "draw_offer", "draw_accept", "draw_decline", "resign", "abort",
         "rematch_offer", "rematch_accept", "rematch_decline"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=10,
)
squares = st.integers(-3, 40).map(str)
move_texts = (
    st.lists(squares, min_size=1, max_size=6).flatmap(
        lambda parts: st.sampled_from(["-", "x", "X", " ", ""]).map(lambda sep: sep.join(parts)))
    | st.sampled_from(["11-15", "9-13", "23-19", "22-18", "15x22", "25x18", "10x10", "0-0", "33-29"])
    | st.text(max_size=90)
)
move_frames = st.fixed_dictionaries(
    {"type": st.just("move"), "move": move_texts | json_values, "v": st.integers(-2, 12) | json_values})
action_frames = st.builds(lambda t, extra: {"type": t, **extra}, st.sampled_from(TYPES),
                          st.dictionaries(st.text(max_size=6), json_values, max_size=2))
junk_frames = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
frames = st.one_of(
    move_frames.map(json.dumps),
    action_frames.map(json.dumps),
    junk_frames.map(json.dumps),
    json_values.map(json.dumps),
    st.text(max_size=200),
    st.binary(max_size=100),
    st.just(json.dumps({"type": "move", "move": "11-15", "v": 0, "pad": "x" * 3000})),
)


def stored_consistent(game_id: str) -> None:
    """The stored game equals the rules' replay of its stored moves, field by field."""
    game = Game.objects.get(pk=game_id)
    rows = list(game.move_set.order_by("ply").values_list("ply", "notation", "fen_after"))
    assert [ply for ply, _, _ in rows] == list(range(1, len(rows) + 1))
    record = rules.Game(rules.Position.from_fen(game.start_fen))
    for _, notation, fen_after in rows:
        move = record.play(notation)
        assert str(move) == notation
        assert record.position.fen() == fen_after
    assert game.ply == len(rows)
    assert game.fen == record.position.fen()
    if record.outcome is not None:
        assert (game.status, game.result) == ("finished", record.outcome.result)


async def scenario(who_and_frames, browsers) -> None:
    game_id = await start_game(browsers[0], browsers[1])
    sockets = [(await b.connect(game_id))[0] for b in browsers]
    for who, frame in who_and_frames:
        comm = sockets[who]
        key = "bytes" if isinstance(frame, bytes) else "text"
        await comm.send_input({"type": "websocket.receive", key: frame})
        for message in await drain(comm, quiet_s=0.01):
            assert message["type"] in ("error", "move", "update", "snapshot", "pong"), message
            if message["type"] == "error":
                assert message["code"] in ERROR_CODES, message
                assert isinstance(message["message"], str) and message["message"]
    for comm in sockets:  # every socket is still served
        await comm.send_json_to({"type": "ping"})
        while (message := await comm.receive_json_from(timeout=5))["type"] != "pong":
            assert message["type"] in ("error", "move", "update", "snapshot", "audience"), message
        await comm.disconnect()
    await database_sync_to_async(stored_consistent)(game_id)


@pytest.fixture(scope="module")
def event_loop_for_fuzz():
    """One event loop for every generated example: the channel layer binds its locks to a loop."""
    loop = asyncio.new_event_loop()
    yield loop

    async def cancel_the_rest():
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    loop.run_until_complete(cancel_the_rest())
    loop.close()


@pytest.mark.django_db(transaction=True)
@override_settings(GAME_SOCKET_RATE_LIMIT="100000/second")
def test_generated_frames_never_break_the_game(event_loop_for_fuzz):
    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.tuples(st.integers(0, 2), frames), min_size=10, max_size=50))
    def run(who_and_frames):
        browsers = [make_browser("alice"), make_browser("bob"), make_browser("carol")]
        event_loop_for_fuzz.run_until_complete(scenario(who_and_frames, browsers))

    run()
