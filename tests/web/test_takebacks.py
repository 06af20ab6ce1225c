"""Takebacks through the game socket (real Redis, real database): proposals, answers, every refusal,
the computer's answer, the clocks, the PDN afterwards, and a takeback racing a move."""

from __future__ import annotations

import asyncio
import io
import random
import threading
import time
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test import Client
from django.utils import timezone

from game import errors, rules
from game.computer import seat as computer
from game.models import Game
from game.round import actions, drawer, fanout, reads, takebacks, watch
from tests.web.conftest import make_browser, mark, recv, sent_since
from tests.web.test_game_actions import everyone_gets, seated
from tests.web.test_game_consumer import start_game
from tests.web.test_views import config_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _patient_sockets(monkeypatch):
    """These tests' sockets send nothing for long stretches (no page pings them): the server
    must not take them for a dropped network (game.round.watch.SILENT_AFTER_S)."""
    monkeypatch.setattr(watch, "SILENT_AFTER_S", 300.0)

START = rules.Position.initial().fen()


def stored(game_id: str) -> tuple:
    """Everything stored about a game, takeback and draw fields included, to compare before and
    after a refused message."""
    game = Game.objects.get(pk=game_id)
    moves = list(game.move_set.order_by("ply").values_list("ply", "notation", "fen_after"))
    return (game.fen, game.ply, game.no_progress, game.version, game.position_version, game.status,
            game.result, game.termination, game.takeback_offer, game.black_takeback_ply,
            game.white_takeback_ply, game.draw_offer, game.black_ms, game.white_ms,
            game.turn_started_at, moves)


def consistent(game_id: str) -> Game:
    """The stored game agrees with a replay of its stored moves (nothing half-applied): fen, ply,
    no_progress, each move's fen_after; returns the game."""
    game = Game.objects.get(pk=game_id)
    rows = list(game.move_set.order_by("ply").values_list("ply", "notation", "fen_after"))
    assert [ply for ply, _, _ in rows] == list(range(1, game.ply + 1))
    record = rules.Game(rules.Position.from_fen(game.start_fen))
    for _, notation, fen_after in rows:
        record.play(notation)
        assert record.position.fen() == fen_after
    assert (game.fen, game.no_progress) == (record.position.fen(), record.no_progress_plies)
    return game


async def refused(comm, others, frame, code, game_id) -> dict:
    """Send ``frame``: the sender gets ``error`` ``code`` with a message, nobody else hears
    anything (nothing was published for them by the time the sender's refusal came), nothing
    stored changes."""
    before = await database_sync_to_async(stored)(game_id)
    since = mark()
    await comm.send_json_to(frame)
    error = await recv(comm)
    assert (error["type"], error["code"]) == ("error", code), error
    assert error["message"]
    for other in others:
        assert sent_since(since, other) == []
    assert await database_sync_to_async(stored)(game_id) == before
    return error


async def play(comm, comms, move, v) -> int:
    await comm.send_json_to({"type": "move", "move": move, "v": v})
    event = await everyone_gets(comms, type="move", move=move)
    return event["v"]


async def snapshot_of(comm) -> dict:
    await comm.send_json_to({"type": "sync"})
    snap = await recv(comm)
    assert snap["type"] == "snapshot"
    return snap


async def close(*comms):
    for comm in comms:
        await comm.disconnect()


@pytest.mark.asyncio
async def test_takeback_before_the_reply_is_seen_by_both_players_and_a_spectator(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    v = await play(a, [a, b, c], "11-15", v)
    await a.send_json_to({"type": "takeback_propose"})
    await everyone_gets([a, b, c], type="update", what="takeback_offered", by="B", takeback_offer="B",
                        v=v + 1, ply=1)
    await b.send_json_to({"type": "takeback_accept"})
    event = await everyone_gets([a, b, c], type="takeback", by="B", plies=1, v=v + 2, ply=0, fen=START,
                                turn="B", takeback_offer=None, no_progress=0,
                                legal=[str(m) for m in rules.Position.initial().legal_moves()])
    assert event["state"]["status"] == "active"
    for comm in (a, b, c):
        snap = await snapshot_of(comm)
        assert (snap["v"], snap["moves"], snap["fens"], snap["state"]["fen"]) == (v + 2, [], [], START)
    game = await database_sync_to_async(consistent)(game_id)
    assert (game.ply, game.version, game.position_version, game.takeback_offer) == (0, v + 2, v + 2, "")
    # Black plays another first move and the game goes on from there.
    v = await play(a, [a, b, c], "9-13", v + 2)
    v = await play(b, [a, b, c], "22-18", v)
    await close(a, b, c)


@pytest.mark.asyncio
async def test_takeback_after_the_reply_removes_both_plies(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    v = await play(a, [a, b, c], "11-15", v)
    v = await play(b, [a, b, c], "23-19", v)
    v = await play(a, [a, b, c], "8-11", v)
    v = await play(b, [a, b, c], "22-17", v)
    await a.send_json_to({"type": "takeback_propose"})
    await everyone_gets([a, b, c], what="takeback_offered", by="B", v=v + 1)
    await b.send_json_to({"type": "takeback_accept"})
    after_two = rules.Game.from_moves(["11-15", "23-19"])
    event = await everyone_gets([a, b, c], type="takeback", by="B", plies=2, v=v + 2, ply=2,
                                fen=after_two.position.fen(), turn="B",
                                legal=[str(m) for m in after_two.legal_moves()])
    assert event["state"]["takeback_allowed_at"] == {"B": 0, "W": 0}
    for comm in (a, b, c):
        snap = await snapshot_of(comm)
        assert snap["moves"] == ["11-15", "23-19"]
        assert snap["fens"] == [p.fen() for p in after_two.positions[1:]]
    # Bob's move for the position before the takeback is stale now; Alice plays on.
    before = await database_sync_to_async(stored)(game_id)
    since = mark()
    await b.send_json_to({"type": "move", "move": "26-22", "v": v})
    assert (await recv(b))["code"] == "stale"
    assert (await recv(b))["type"] == "snapshot"
    assert sent_since(since, a) == sent_since(since, c) == []
    assert await database_sync_to_async(stored)(game_id) == before
    v = await play(a, [a, b, c], "9-14", v + 2)
    game = await database_sync_to_async(consistent)(game_id)
    assert game.ply == 3
    await close(a, b, c)


@pytest.mark.asyncio
async def test_pdn_after_a_takeback_has_only_the_remaining_moves(alice, bob, carol, client):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    for comm, move in ((a, "11-15"), (b, "23-19"), (a, "8-11"), (b, "22-17")):
        v = await play(comm, [a, b, c], move, v)
    await b.send_json_to({"type": "takeback_propose"})  # Black is to move: only White's 22-17 goes
    await everyone_gets([a, b, c], what="takeback_offered", by="W")
    await a.send_json_to({"type": "takeback_accept"})
    await everyone_gets([a, b, c], type="takeback", by="W", plies=1, ply=3, turn="W")
    pdn = await database_sync_to_async(reads.game_pdn)(game_id, "testserver")
    record = next(rules.read_games(io.StringIO(pdn)))
    assert [str(m) for m in rules.Game.from_moves(record.moves).moves] == ["11-15", "23-19", "8-11"]
    assert "22-17" not in pdn
    response = await database_sync_to_async(client.get)(f"/g/{game_id}.pdn")
    assert response.status_code == 200 and response.content.decode() == pdn
    await close(a, b, c)


@pytest.mark.asyncio
async def test_every_refusal_goes_to_its_sender_only_and_changes_nothing(alice, bob, carol):
    # A game nobody has joined yet.
    waiting = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    w, _ = await alice.connect(waiting.id)
    await refused(w, [], {"type": "takeback_propose"}, "not_started", waiting.id)
    await w.disconnect()

    game_id, a, b, c, v = await seated(alice, bob, carol)
    # Nothing to take back: Black has not moved; then White has not.
    error = await refused(a, [b, c], {"type": "takeback_propose"}, "nothing_to_take_back", game_id)
    assert "no move" in error["message"]
    v = await play(a, [a, b, c], "11-15", v)
    await refused(b, [a, c], {"type": "takeback_propose"}, "nothing_to_take_back", game_id)
    # A spectator can neither propose nor answer.
    for kind in ("takeback_propose", "takeback_accept", "takeback_decline"):
        await refused(c, [a, b], {"type": kind}, "not_seated", game_id)
    # Answering when nothing is proposed.
    await refused(b, [a, c], {"type": "takeback_accept"}, "no_offer", game_id)
    await refused(b, [a, c], {"type": "takeback_decline"}, "no_offer", game_id)
    # One's own proposal: pending, not to be answered by oneself; the opponent can't propose over it.
    await a.send_json_to({"type": "takeback_propose"})
    await everyone_gets([a, b, c], what="takeback_offered", by="B")
    await refused(a, [b, c], {"type": "takeback_propose"}, "offer_pending", game_id)
    await refused(a, [b, c], {"type": "takeback_accept"}, "no_offer", game_id)
    await refused(a, [b, c], {"type": "takeback_decline"}, "no_offer", game_id)
    await refused(b, [a, c], {"type": "takeback_propose"}, "takeback_pending", game_id)
    # Declined: Alice may propose again only after two more moves of hers (4 plies).
    await b.send_json_to({"type": "takeback_decline"})
    event = await everyone_gets([a, b, c], what="takeback_declined", by="W", takeback_offer=None, ply=1)
    assert event["state"]["takeback_allowed_at"] == {"B": 5, "W": 0}
    v = event["v"]
    v = await play(b, [a, b, c], "23-19", v)
    error = await refused(a, [b, c], {"type": "takeback_propose"}, "too_soon", game_id)
    assert "2" in error["message"]
    v = await play(a, [a, b, c], "8-11", v)
    v = await play(b, [a, b, c], "22-17", v)
    await refused(a, [b, c], {"type": "takeback_propose"}, "too_soon", game_id)
    v = await play(a, [a, b, c], "9-13", v)  # ply 5: allowed again
    await a.send_json_to({"type": "takeback_propose"})
    await everyone_gets([a, b, c], what="takeback_offered", by="B", ply=5)
    # Over: a finished game has nothing to take back, and a pending proposal can't revive it.
    await b.send_json_to({"type": "resign"})
    event = await everyone_gets([a, b, c], what="resigned", status="finished")
    assert event["state"]["takeback_offer"] == "B"  # lapsed with the game: no answer is possible
    for comm, kind in ((b, "takeback_accept"), (a, "takeback_propose"), (b, "takeback_propose"),
                       (b, "takeback_decline")):
        await refused(comm, [x for x in (a, b, c) if x is not comm], {"type": kind}, "game_over", game_id)
    game = await database_sync_to_async(consistent)(game_id)
    assert (game.status, game.ply, game.result) == ("finished", 5, "1-0")
    await close(a, b, c)


@pytest.mark.asyncio
async def test_the_opponents_move_declines_and_ones_own_move_withdraws(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    v = await play(a, [a, b, c], "11-15", v)
    await a.send_json_to({"type": "takeback_propose"})
    v = (await everyone_gets([a, b, c], what="takeback_offered"))["v"]
    await b.send_json_to({"type": "move", "move": "23-19", "v": v})
    event = await everyone_gets([a, b, c], type="move", ply=2, takeback_offer=None)
    assert event["state"]["takeback_allowed_at"] == {"B": 6, "W": 0}
    v = await play(a, [a, b, c], "8-11", event["v"])
    # Bob proposes on his own turn (Alice replied), then plays on instead: withdrawn, no penalty.
    await b.send_json_to({"type": "takeback_propose"})
    v = (await everyone_gets([a, b, c], what="takeback_offered", by="W", turn="W"))["v"]
    await b.send_json_to({"type": "move", "move": "22-18", "v": v})
    event = await everyone_gets([a, b, c], type="move", ply=4, takeback_offer=None)
    assert event["state"]["takeback_allowed_at"] == {"B": 6, "W": 0}
    # So he may propose again at once: now only his 22-18 goes (Alice has not replied).
    await b.send_json_to({"type": "takeback_propose"})
    await everyone_gets([a, b, c], what="takeback_offered", by="W", turn="B")
    await a.send_json_to({"type": "takeback_accept"})
    await everyone_gets([a, b, c], type="takeback", by="W", plies=1, ply=3, turn="W")
    # Alice's own proposal is still too soon (declined at ply 2: allowed from ply 6).
    await refused(a, [b, c], {"type": "takeback_propose"}, "too_soon", game_id)
    game = await database_sync_to_async(consistent)(game_id)
    assert await database_sync_to_async(
        lambda: list(game.move_set.order_by("ply").values_list("notation", flat=True)))() == \
        ["11-15", "23-19", "8-11"]
    await close(a, b, c)


@pytest.mark.asyncio
async def test_takeback_clears_a_pending_draw_offer(alice, bob, carol):
    game_id, a, b, c, v = await seated(alice, bob, carol)
    v = await play(a, [a, b, c], "11-15", v)
    await b.send_json_to({"type": "draw_offer"})
    await everyone_gets([a, b, c], what="draw_offered", by="W")
    await a.send_json_to({"type": "takeback_propose"})
    await everyone_gets([a, b, c], what="takeback_offered", by="B", draw_offer="W")
    await b.send_json_to({"type": "takeback_accept"})
    await everyone_gets([a, b, c], type="takeback", draw_offer=None, takeback_offer=None, ply=0)
    await refused(a, [b, c], {"type": "draw_accept"}, "no_offer", game_id)
    await close(a, b, c)


def _ballot_game(alice: str, bob: str) -> Game:
    """A game opened with a 3-move ballot: its three plies played for the site, White to move."""
    game = actions.start_game(black=(alice, "alice"), white=(bob, "bob"))
    Game.objects.filter(pk=game.pk).update(ballot=1)
    for player, move in ((alice, "9-14"), (bob, "23-18"), (alice, "14x23")):
        game = actions.play_move(game.id, player, move, game.version).game
    return game


def test_the_ballots_opening_plies_cannot_be_taken_back(alice, bob):
    game = _ballot_game(alice.player_id, bob.player_id)
    before = stored(game.id)
    for player in (alice.player_id, bob.player_id):
        with pytest.raises(errors.ActionError) as refusal:
            takebacks.propose(game.id, player)
        assert refusal.value.code == "nothing_to_take_back"
        assert "ballot" in str(refusal.value.message)
    assert stored(game.id) == before
    game = actions.play_move(game.id, bob.player_id, "27x18", game.version).game  # ply 4, White's own
    with pytest.raises(errors.ActionError) as refusal:
        takebacks.propose(game.id, alice.player_id)  # would take back the ballot's 14x23 too
    assert refusal.value.code == "nothing_to_take_back"
    takebacks.propose(game.id, bob.player_id)
    event = takebacks.accept(game.id, alice.player_id).events[0]
    assert (event["type"], event["plies"], event["state"]["ply"]) == ("takeback", 1, 3)
    game = consistent(game.id)
    assert list(game.move_set.values_list("notation", flat=True)) == ["9-14", "23-18", "14x23"]


def test_clocks_keep_each_sides_time_and_the_turn_starts_again(alice, bob):
    t0 = timezone.now() - timedelta(minutes=5)
    a_id, b_id = alice.player_id, bob.player_id
    game = actions.start_game(black=(a_id, "alice"), white=(b_id, "bob"), time_control="5+3", now=t0)
    at = t0
    for seconds, player, move in ((1, a_id, "11-15"), (1, b_id, "23-19"), (10, a_id, "8-11"),
                                  (20, b_id, "22-17")):
        at += timedelta(seconds=seconds)
        game = actions.play_move(game.id, player, move, game.version, now=at).game
    # Black used 10 s (+3 s increment), White 20 s (+3 s): 293 s and 283 s at the start of Black's turn.
    assert (game.black_ms, game.white_ms) == (293_000, 283_000)
    takebacks.propose(game.id, b_id, now=at + timedelta(seconds=4))  # White's 22-17 only
    progress = takebacks.accept(game.id, a_id, now=at + timedelta(seconds=7))
    game = progress.game
    # Black, to move, was charged its 7 s; White keeps its time and its turn starts again now.
    assert (game.black_ms, game.white_ms) == (286_000, 283_000)
    assert game.turn_started_at == at + timedelta(seconds=7)
    assert (game.ply, game.turn) == (3, rules.Color.WHITE)
    clock = progress.events[0]["state"]["clock"]
    assert (clock["running"], clock["B"]) == ("W", 286_000)
    # Out of time when the answer comes: the game ends on time, nothing is taken back.
    takebacks.propose(game.id, a_id, now=at + timedelta(seconds=8))
    progress = takebacks.accept(game.id, b_id, now=at + timedelta(seconds=7 + 284))
    assert progress.events[0]["what"] == "flagged"
    game = consistent(game.id)
    assert (game.status, game.result, game.ply) == ("finished", "1-0", 3)
    with pytest.raises(errors.ActionError) as refusal:
        takebacks.accept(game.id, b_id)
    assert refusal.value.code == "game_over"


def test_a_live_games_first_move_window_starts_again(alice, bob):
    t0 = timezone.now() - timedelta(seconds=40)
    a_id, b_id = alice.player_id, bob.player_id
    game = actions.start_game(black=(a_id, "alice"), white=(b_id, "bob"), time_control="3+2", now=t0)
    game = actions.play_move(game.id, a_id, "11-15", game.version, now=t0 + timedelta(seconds=5)).game
    takebacks.propose(game.id, a_id, now=t0 + timedelta(seconds=10))
    game = takebacks.accept(game.id, b_id, now=t0 + timedelta(seconds=20)).game
    assert (game.ply, game.black_ms, game.white_ms) == (0, 180_000, 180_000)
    state = reads.snapshot(game.id, a_id).state["clock"]
    assert state["running"] is None and 0 < state["first_move_ms"] <= 10_000  # 30 s from t0 + 20 s


@pytest.mark.asyncio
@pytest.mark.parametrize("level", [1, 2, 3, 4])
async def test_the_computer_grants_a_takeback_at_levels_1_to_4(alice, settings, level):
    settings.COMPUTER_MIN_THINK_MS = 0
    black, white = computer.seats(alice.player_id, "alice", "B", level)
    game = await database_sync_to_async(actions.start_game)(black=black, white=white)
    a, snap = await alice.connect(game.id)
    await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
    assert (await recv(a))["ply"] == 1
    reply = await recv(a, timeout=20)
    assert (reply["type"], reply["ply"]) == ("move", 2)
    since = mark()
    await a.send_json_to({"type": "takeback_propose"})
    event = await recv(a)
    assert (event["type"], event["by"], event["plies"], event["v"]) == ("takeback", "B", 2, reply["v"] + 1)
    assert (event["state"]["ply"], event["state"]["fen"], event["state"]["takeback_offer"]) == (0, START, None)
    # The socket has woken the computer after the takeback (a ping answered after it says so):
    # once the computer's work is done, the takeback is all it published; it does not move, as it
    # is Alice's turn.
    await a.send_json_to({"type": "ping"})
    assert (await recv(a))["type"] == "pong"
    working = fanout.hub().round(game.id).computer
    if working is not None:
        await working
    assert sent_since(since, a) == [event]
    assert (await database_sync_to_async(consistent)(game.id)).ply == 0
    await a.disconnect()


@pytest.mark.asyncio
@pytest.mark.parametrize("level", [5, 9])
async def test_the_computer_refuses_takebacks_above_level_4(alice, settings, level):
    settings.COMPUTER_MIN_THINK_MS = 0
    black, white = computer.seats(alice.player_id, "alice", "W", level)
    game = await database_sync_to_async(actions.start_game)(black=black, white=white)
    a, _ = await alice.connect(game.id)
    first = await recv(a, timeout=20)  # the computer, Black, opens
    await a.send_json_to({"type": "move", "move": "23-19" if "23-19" in first["state"]["legal"]
                          else first["state"]["legal"][0], "v": first["v"]})
    assert (await recv(a))["ply"] == 2
    reply = await recv(a, timeout=30)
    assert reply["ply"] == 3
    error = await refused(a, [], {"type": "takeback_propose"}, "no_takebacks", game.id)
    assert str(level) in error["message"]
    await a.disconnect()


# --- Races: a takeback accepted while a move is played ---------------------------------------------

def race(first, second, head_start_s: float = 0.0):
    """Run ``first`` and ``second`` in threads of their own (each its own database connection),
    released together, ``first`` ``head_start_s`` seconds ahead (negative: behind); returns each
    one's ``"ok"`` or refusal code."""
    barrier = threading.Barrier(2)
    results: list[str | None] = [None, None]

    def run(i, call, delay):
        try:
            barrier.wait()
            if delay > 0:
                time.sleep(delay)
            try:
                call()
                results[i] = "ok"
            except errors.ActionError as exc:
                results[i] = exc.code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(0, first, max(0.0, -head_start_s))),
               threading.Thread(target=run, args=(1, second, max(0.0, head_start_s)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _head_starts(n: int) -> list[float]:
    """Head starts for ``n`` runs: both ways round (so both orders happen) and none at all."""
    return [(0.02, -0.02, 0.0)[i % 3] for i in range(n)]


def test_accept_racing_the_acceptors_own_move_settles_once():
    """Black proposed after 11-15; White accepts in one tab while playing 23-19 in another."""
    alice, bob = "a" * 32, "b" * 32
    orders = set()
    for head_start in _head_starts(15):
        game = actions.start_game(black=(alice, "alice"), white=(bob, "bob"))
        game = actions.play_move(game.id, alice, "11-15", game.version).game
        game = takebacks.propose(game.id, alice).game
        results = race(lambda g=game: takebacks.accept(g.id, bob),
                       lambda g=game: actions.play_move(g.id, bob, "23-19", g.version), head_start)
        game = consistent(game.id)
        if results[0] == "ok":
            assert results[1] == "stale", results
            assert (game.ply, game.fen, game.takeback_offer, game.position_version) == (0, START, "", game.version)
        else:
            assert results == ["no_offer", "ok"]
            assert (game.ply, game.takeback_offer, game.black_takeback_ply) == (2, "", 2 + 4)
        orders.add(tuple(results))
    assert orders == {("ok", "stale"), ("no_offer", "ok")}, orders


def test_accept_racing_the_proposers_move_settles_once():
    """Black proposed on its own turn (after White's reply); White accepts while Black plays on."""
    alice, bob = "a" * 32, "b" * 32
    orders = set()
    for head_start in _head_starts(15):
        game = actions.start_game(black=(alice, "alice"), white=(bob, "bob"))
        game = actions.play_move(game.id, alice, "11-15", game.version).game
        game = actions.play_move(game.id, bob, "23-19", game.version).game
        game = takebacks.propose(game.id, alice).game
        results = race(lambda g=game: takebacks.accept(g.id, bob),
                       lambda g=game: actions.play_move(g.id, alice, "8-11", g.version), head_start)
        game = consistent(game.id)
        if results[0] == "ok":
            assert results[1] == "stale", results
            assert (game.ply, game.fen, game.turn) == (0, START, rules.Color.BLACK)
        else:
            assert results == ["no_offer", "ok"]
            assert (game.ply, game.takeback_offer, game.black_takeback_ply) == (3, "", 0)
        orders.add(tuple(results))
    assert orders == {("ok", "stale"), ("no_offer", "ok")}, orders


@pytest.mark.asyncio
async def test_accept_and_move_sent_at_once_from_two_sockets_settle_once(bob, carol):
    """The same race through the game socket: White's two tabs send the accept and a move in the
    same instant; every socket sees one outcome and the other tab is refused with a code."""
    seen = set()
    for _ in range(6):
        alice_ = make_browser("alice")
        game_id = await start_game(alice_, bob)
        a, snap = await alice_.connect(game_id)
        b1, _ = await bob.connect(game_id)
        b2, _ = await bob.connect(game_id)
        v = await play(a, [a, b1, b2], "11-15", snap["v"])
        await a.send_json_to({"type": "takeback_propose"})
        v = (await everyone_gets([a, b1, b2], what="takeback_offered"))["v"]
        order = random.random() < 0.5
        frames = [(b1, {"type": "takeback_accept"}), (b2, {"type": "move", "move": "23-19", "v": v})]
        since = mark()
        await asyncio.gather(*(comm.send_json_to(frame) for comm, frame in (frames if order else frames[::-1])))
        # Alice sees exactly one game event: the takeback or the move.
        event = await recv(a)
        assert event["type"] in ("takeback", "move") and event["v"] == v + 1
        if event["type"] == "takeback":
            assert (await recv(b1))["type"] == "takeback"
            got = [await recv(b2) for _ in range(3)]
            # The refusal goes to this socket at once, the event through Redis: either may come first.
            assert sorted(m.get("code", m["type"]) for m in got) == ["snapshot", "stale", "takeback"], got
        else:
            assert (await recv(b2))["type"] == "move"
            got = [await recv(b1) for _ in range(2)]
            assert sorted(m.get("code", m["type"]) for m in got) == ["move", "no_offer"], got
        # Both tabs' frames are answered: that one event is all that was published for Alice.
        assert sent_since(since, a) == [event]
        game = await database_sync_to_async(consistent)(game_id)
        assert game.version == v + 1 and game.takeback_offer == ""
        seen.add(event["type"])
        await close(a, b1, b2)
    assert seen  # which order won is up to the database; both are checked above


def test_draw_and_takeback_fields_are_independent(alice, bob):
    """A declined draw offer's cooldown and a declined takeback's are kept apart."""
    game = actions.start_game(black=(alice.player_id, "alice"), white=(bob.player_id, "bob"))
    game = actions.play_move(game.id, alice.player_id, "11-15", game.version).game
    drawer.offer_draw(game.id, alice.player_id)
    drawer.decline_draw(game.id, bob.player_id)
    takebacks.propose(game.id, alice.player_id)
    game = takebacks.decline(game.id, bob.player_id).game
    assert (game.black_draw_ply, game.black_takeback_ply, game.draw_offer, game.takeback_offer) == (7, 5, "", "")


def test_the_game_page_tells_its_script_how_many_plies_can_never_be_taken_back(alice, bob, client):
    plain = actions.start_game(black=(alice.player_id, "alice"), white=(bob.player_id, "bob"))
    ballot = _ballot_game(alice.player_id, bob.player_id)
    assert config_of(client.get(f"/g/{plain.id}/"))["fixedPlies"] == 0
    assert config_of(client.get(f"/g/{ballot.id}/"))["fixedPlies"] == 3


@pytest.mark.asyncio
async def test_the_ballots_plies_are_refused_through_the_socket_to_the_sender_only(alice, bob, carol):
    game = await database_sync_to_async(_ballot_game)(alice.player_id, bob.player_id)
    a, _ = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    c, _ = await carol.connect(game.id)
    for comm, others in ((a, [b, c]), (b, [a, c])):
        error = await refused(comm, others, {"type": "takeback_propose"}, "nothing_to_take_back", game.id)
        assert "ballot" in error["message"]
    await close(a, b, c)


def test_the_page_gets_the_computers_takeback_rule_from_the_server():
    """The game page decides whether to offer "Propose takeback" against the computer by the rule
    its config carries (it had a copy of its own, which still said "levels 1 to 3" after the
    server's became 1 to 4)."""
    client = Client()
    client.post("/computer", {"name": "alice", "level": "5", "color": "B"})
    game = Game.objects.get()
    config = config_of(client.get(f"/g/{game.id}/"))
    assert config["computerGrantsUpTo"] == takebacks.COMPUTER_GRANTS_UP_TO == 4
