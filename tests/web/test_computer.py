"""The computer in a seat: games played through the game socket, draw offers, rematches, resuming, stale moves."""

from __future__ import annotations

import random

import pytest
from channels.db import database_sync_to_async

from game import errors, rules
from game.computer import player as computer_play
from game.computer import seat as computer
from game.models import Game
from game.round import actions, fanout
from tests.web.conftest import recv

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture(autouse=True)
def _quick_computer(settings):
    """The computer replies without its usual pause, and the test answers at once: more than the
    30 messages a second a person's socket may send, so the socket's limit is raised."""
    settings.COMPUTER_MIN_THINK_MS = 0
    settings.GAME_SOCKET_RATE_LIMIT = "1000/second"
    settings.GAME_SESSION_RATE_LIMIT = "1000/second"


async def computer_game(person, color: str, level: int) -> str:
    black, white = computer.seats(person.player_id, person.name, color, level)
    game = await database_sync_to_async(actions.start_game)(black=black, white=white)
    return game.id


async def until_turn(comm, seat: str, state: dict, v: int) -> tuple[dict, int]:
    """Read events until the game is over or ``seat`` is to move; return the last state and version."""
    while state["status"] == "active" and state["turn"] != seat:
        event = await recv(comm, timeout=20)
        assert event["type"] in ("move", "update"), event
        state, v = event["state"], event["v"]
    return state, v


async def test_computer_game_played_to_the_end_has_a_legal_result(alice):
    game_id = await computer_game(alice, "W", level=2)
    comm, snapshot = await alice.connect(game_id)
    assert snapshot["state"]["seats"]["B"] == {"name": "Computer (level 2)", "computer": 2}
    assert snapshot["state"]["seats"]["W"] == {"name": "alice"}
    rng = random.Random(7)
    state = snapshot["state"]
    v = snapshot["v"]
    while True:
        state, v = await until_turn(comm, "W", state, v)
        if state["status"] != "active":
            break
        await comm.send_json_to({"type": "move", "move": rng.choice(state["legal"]), "v": v})
        event = await recv(comm, timeout=10)
        assert event["type"] == "move", event
        state, v = event["state"], event["v"]
    await comm.disconnect()
    game = await database_sync_to_async(Game.objects.get)(pk=game_id)
    moves = await database_sync_to_async(
        lambda: list(game.move_set.order_by("ply").values_list("notation", flat=True)))()
    record = rules.Game.from_moves(moves)
    assert record.outcome is not None
    assert game.status == "finished"
    assert game.result == record.outcome.result
    assert game.termination == record.outcome.termination.value
    assert game.result in ("1-0", "1/2-1/2")  # the computer (Black) does not lose to random moves


async def test_computer_as_black_moves_first_when_the_player_connects(alice):
    game_id = await computer_game(alice, "W", level=1)
    comm, snapshot = await alice.connect(game_id)
    assert snapshot["state"]["ply"] == 0
    event = await recv(comm, timeout=20)
    assert event["type"] == "move" and event["ply"] == 1
    assert event["move"] in [str(m) for m in rules.Position.initial().legal_moves()]
    await comm.disconnect()


async def test_computer_turn_resumes_on_reconnect_after_a_lost_reply(alice):
    game_id = await computer_game(alice, "B", level=1)
    # Alice's move lands while no socket (and so no computer task) is there, as after a crash.
    await database_sync_to_async(actions.play_move)(game_id, alice.player_id, "11-15", 0)
    comm, snapshot = await alice.connect(game_id)
    assert snapshot["state"]["turn"] == "W"
    event = await recv(comm, timeout=20)
    assert event["type"] == "move" and event["ply"] == 2
    await comm.disconnect()


async def test_computer_move_for_a_changed_position_is_refused(alice):
    game_id = await computer_game(alice, "W", level=1)
    job = await database_sync_to_async(computer_play.next_job)(game_id)
    assert job.kind == "move" and job.seat is rules.Color.BLACK and job.v == 0
    # Meanwhile the computer's move was played (by another server process, say).
    await database_sync_to_async(actions.play_move)(game_id, computer.player_id(1), "9-13", 0)
    with pytest.raises(errors.ActionError) as refused:
        await computer_play._carry_out(fanout.hub().round(game_id), job)
    assert refused.value.code in ("stale", "not_your_turn")
    game = await database_sync_to_async(Game.objects.get)(pk=game_id)
    assert game.ply == 1


async def start_from(person, fen: str, level: int) -> str:
    """A game from ``fen`` with ``person`` as White and the computer as Black."""
    game = await database_sync_to_async(actions.create_game)(person.player_id, person.name, "W", fen)
    await database_sync_to_async(actions.join_game)(game.id, computer.player_id(level),
                                                     computer.level(level).player_name)
    return game.id


@pytest.mark.parametrize(("fen", "answer"), [
    # White (the person, to move) is two kings up: the computer, worse, takes the draw.
    ("W:WK18,K19,K26:B1", "draw_accepted"),
    # The computer (Black) is a king and two men up: it plays on.
    ("W:W30:BK10,1,2,3", "draw_declined"),
])
async def test_computer_answers_a_draw_offer_by_its_evaluation(alice, fen, answer):
    game_id = await start_from(alice, fen, level=3)
    comm, snapshot = await alice.connect(game_id)
    assert snapshot["state"]["turn"] == "W"
    await comm.send_json_to({"type": "draw_offer"})
    offered = await recv(comm)
    assert offered["what"] == "draw_offered"
    answered = await recv(comm, timeout=20)
    assert answered["type"] == "update" and answered["what"] == answer and answered["by"] == "B"
    await comm.disconnect()


async def test_computer_accepts_a_rematch_with_colours_swapped(alice):
    game_id = await computer_game(alice, "B", level=1)
    comm, _ = await alice.connect(game_id)
    await comm.send_json_to({"type": "resign"})
    assert (await recv(comm))["what"] == "resigned"
    farewell = await recv(comm, timeout=10)  # the computer says it once, in the players' room
    assert farewell == {"type": "chat", "line": {**farewell["line"], "room": "players", "seat": "W",
                                                 "name": "Computer (level 1)", "text": "Good game"}}
    await comm.send_json_to({"type": "rematch_offer"})
    assert (await recv(comm))["what"] == "rematch_offered"
    started = await recv(comm, timeout=20)
    assert started["what"] == "rematch_started"
    await comm.disconnect()
    rematch = await database_sync_to_async(Game.objects.get)(pk=started["state"]["next_game"])
    assert (rematch.black_player, rematch.white_player) == (computer.player_id(1), alice.player_id)
