"""The server's clocks: charging, increments, flags (once), first-move aborts, restarts, the live timer.

Service calls take the time as ``now`` so no test waits for minutes.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from game import clock, errors
from game.models import Game
from game.round import actions, claims, drawer, outages
from tests.web.conftest import recv
from tests.web.test_game_consumer import stored

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB = "a" * 32, "b" * 32
T0 = timezone.now().replace(microsecond=0)


def at(seconds: float):
    return T0 + timedelta(seconds=seconds)


def play(game, player, move, seconds):
    return actions.play_move(game.id, player, move, game.version, now=at(seconds)).game


def test_time_control_parse_and_refusals():
    assert str(clock.TimeControl.parse(" 10+5 ")) == "10+5"
    assert clock.TimeControl.parse("untimed").timed is False
    assert clock.TimeControl.parse("3d").start_ms() == 3 * 86_400_000
    for bad in ("0+0", "181+0", "5+61", "2d", "5", "five", None, "+"):
        with pytest.raises(clock.TimeControlError):
            clock.TimeControl.parse(bad)
    with pytest.raises(errors.ActionError) as exc:
        actions.create_game(ALICE, "alice", "B", time_control="5+99")
    assert exc.value.code == "bad_time_control"
    assert Game.objects.count() == 0


def test_moves_charge_the_mover_and_add_the_increment():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="5+3", now=at(0))
    assert (game.black_ms, game.white_ms) == (300_000, 300_000)
    game = play(game, ALICE, "11-15", 10)   # each side's first move: no clock, no increment
    game = play(game, BOB, "23-19", 20)
    assert (game.black_ms, game.white_ms) == (300_000, 300_000)
    game = play(game, ALICE, "8-11", 25)    # 5 s spent, 3 s back
    assert (game.black_ms, game.white_ms) == (298_000, 300_000)
    game = play(game, BOB, "22-17", 45.5)   # 20.5 s spent, 3 s back
    assert (game.black_ms, game.white_ms) == (298_000, 282_500)
    state = outages.clock(game).state(at(50))
    assert state == {"control": "5+3", "label": "5+3", "B": 293_500, "W": 282_500, "running": "B",
                     "first_move_ms": None}


def test_flag_ends_game_once_with_the_right_winner():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="1+0", now=at(0))
    game = play(game, ALICE, "11-15", 1)
    game = play(game, BOB, "23-19", 2)
    assert actions.check_clock(game.id, now=at(61.9)).events == []
    outcome = actions.check_clock(game.id, now=at(62))
    [event] = outcome.events
    assert (event["what"], event["state"]["result"], event["state"]["termination"]) == \
        ("flagged", "0-1", "time_forfeit")
    assert event["state"]["winner"] == "W"
    assert event["state"]["clock"]["B"] == 0
    assert "time" in event["state"]["reason"].lower()
    before = stored(game.id)
    assert actions.check_clock(game.id, now=at(90)).events == []
    assert stored(game.id) == before


def test_move_after_the_flag_is_not_played():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="1+0", now=at(0))
    game = play(game, ALICE, "11-15", 1)
    game = play(game, BOB, "23-19", 2)
    outcome = actions.play_move(game.id, ALICE, "8-11", game.version, now=at(70))
    assert [e["what"] for e in outcome.events] == ["flagged"]
    game.refresh_from_db()
    assert (game.ply, game.status, game.result) == (2, "finished", "0-1")
    with pytest.raises(errors.ActionError) as exc:
        actions.play_move(game.id, ALICE, "8-11", game.version, now=at(71))
    assert exc.value.code == "game_over"


@pytest.mark.parametrize("repeat", range(3))
def test_racing_flag_checks_end_the_game_once(repeat):
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="1+0", now=at(0))
    game = play(game, ALICE, "11-15", 1)
    game = play(game, BOB, "23-19", 2)
    barrier = threading.Barrier(4)
    found = []

    def check():
        try:
            barrier.wait()
            found.append(len(actions.check_clock(game.id, now=at(100)).events))
        finally:
            connection.close()

    threads = [threading.Thread(target=check) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(found) == [0, 0, 0, 1]
    game.refresh_from_db()
    assert (game.version, game.termination) == (3, "time_forfeit")


def test_first_move_not_made_in_time_aborts_live_game():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="3+2", now=at(0))
    assert actions.check_clock(game.id, now=at(29)).events == []
    state = outages.clock(game).state(at(29))
    assert (state["running"], state["first_move_ms"]) == (None, 1000)
    [event] = actions.check_clock(game.id, now=at(30)).events
    assert (event["what"], event["state"]["status"], event["state"]["result"]) == ("aborted", "aborted", "*")


def test_untimed_game_never_flags():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), now=at(0))
    assert actions.check_clock(game.id, now=at(10**7)).events == []
    assert outages.clock(game).state(at(0)) is None


def test_correspondence_gives_each_move_its_days():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="1d", now=at(0))
    day = 86_400
    game = play(game, ALICE, "11-15", day - 10)
    assert (game.black_ms, game.white_ms) == (day * 1000, day * 1000)
    assert outages.clock(game).state(at(day))["W"] == day * 1000 - 10_000
    assert actions.check_clock(game.id, now=at(2 * day - 11)).events == []
    [event] = actions.check_clock(game.id, now=at(2 * day - 10)).events
    assert (event["what"], event["state"]["winner"]) == ("flagged", "B")


def test_clocks_survive_a_server_restart():
    """Everything a clock needs is stored: a game loaded afresh, as by a restarted server, goes on exactly."""
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="5+0", now=at(0))
    game = play(game, ALICE, "11-15", 1)
    game = play(game, BOB, "23-19", 2)
    game = play(game, ALICE, "8-11", 12)     # Black: 290 s left; White's turn from t=12
    fresh = Game.objects.get(pk=game.id)
    assert outages.clock(fresh).state(at(112)) == {
        "control": "5+0", "label": "5+0", "B": 290_000, "W": 200_000, "running": "W", "first_move_ms": None}
    fresh = play(fresh, BOB, "22-17", 112)
    assert (fresh.black_ms, fresh.white_ms) == (290_000, 200_000)


def test_pdn_has_time_control_tag():
    from django.test import Client

    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="10+5")
    assert '[TimeControl "600+5"]' in Client().get(f"/g/{game.id}.pdn").content.decode()


@pytest.mark.asyncio
async def test_server_flags_without_any_message(alice, bob, carol):
    """Nobody moves and nobody asks: the players' sockets' timers end the game on time."""
    now = timezone.now()
    game = await database_sync_to_async(actions.start_game)(
        black=(alice.player_id, "alice"), white=(bob.player_id, "bob"), time_control="1+0",
        now=now - timedelta(seconds=70))
    game = await database_sync_to_async(actions.play_move)(
        game.id, alice.player_id, "11-15", game.version, now=now - timedelta(seconds=60))
    game = game.game
    await database_sync_to_async(actions.play_move)(
        game.id, bob.player_id, "23-19", game.version, now=now - timedelta(seconds=59.3))
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    c, _ = await carol.connect(game.id)
    assert snap["state"]["clock"]["running"] == "B"
    assert 0 < snap["state"]["clock"]["B"] <= 700
    for comm in (a, b, c):
        event = await recv(comm, timeout=5)
        assert (event["type"], event["what"], event["state"]["result"]) == ("update", "flagged", "0-1")
        await comm.disconnect()


@pytest.mark.asyncio
async def test_claim_refused_while_opponent_present_and_after_absence_accepted(alice, bob, carol):
    game = await database_sync_to_async(actions.start_game)(
        black=(alice.player_id, "alice"), white=(bob.player_id, "bob"), time_control="5+0")
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    c, _ = await carol.connect(game.id)
    assert snap["state"]["claim_after_s"] == 60
    # Black (alice) is to move and present: bob's claim is refused; alice cannot claim on her turn.
    await b.send_json_to({"type": "claim_win"})
    assert (await recv(b))["code"] == "opponent_present"
    await a.send_json_to({"type": "claim_win"})
    assert (await recv(a))["code"] == "not_claimable"
    await c.send_json_to({"type": "claim_draw"})
    assert (await recv(c))["code"] == "not_seated"
    await a.disconnect()
    # Gone for less than the limit: refused with the time left.
    await b.send_json_to({"type": "claim_win"})
    error = await recv(b)
    assert error["code"] == "opponent_present" and "claim in" in error["message"]
    before = await database_sync_to_async(stored)(game.id)
    assert before[4] == "active"
    # Past the limit (the limit made short for the test): accepted, once.
    with override_settings(CLAIM_AFTER_LIVE_S=0):
        await b.send_json_to({"type": "claim_win"})
        for comm in (b, c):
            event = await recv(comm)
            assert (event["what"], event["state"]["result"], event["state"]["termination"]) == \
                ("claimed_win", "0-1", "abandoned")
            assert event["state"]["reason"] == "Black left the game"
        await b.send_json_to({"type": "claim_draw"})
        assert (await recv(b))["code"] == "game_over"
    for comm in (b, c):
        await comm.disconnect()


def test_correspondence_games_are_not_claimable():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="3d")
    with pytest.raises(errors.ActionError) as exc:
        claims.claim(game.id, BOB, draw=True)
    assert exc.value.code == "not_claimable"


def test_claim_against_the_computer_is_refused():
    from game.computer import seat as computer

    game = actions.start_game(black=(computer.player_id(5), "Computer"), white=(BOB, "bob"),
                               time_control="5+0")
    with override_settings(CLAIM_AFTER_LIVE_S=0), pytest.raises(errors.ActionError) as exc:
        claims.claim(game.id, BOB, draw=False)
    assert exc.value.code == "not_claimable"


def test_ending_a_game_other_than_by_a_move_charges_the_side_to_move():
    """Resigning, agreeing a draw, claiming or aborting charges the side to move for its turn so far
    (the final clocks were shown as at the turn's start); out of time, the flag wins instead."""
    def ready(control="5+0"):
        game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control=control,
                                   now=at(0))
        game = play(game, ALICE, "11-15", 1)
        game = play(game, BOB, "23-19", 2)
        return play(game, ALICE, "8-11", 3)   # Black spent 1 s; White to move from at(3)

    def ended(outcome, what):
        [event] = outcome.events
        assert event["what"] == what
        game = Game.objects.get(pk=event["state"]["id"])
        clocks = event["state"]["clock"]
        assert (clocks["B"], clocks["W"], clocks["running"]) == (game.black_ms, game.white_ms, None)
        return game

    game = ended(actions.resign(ready().id, BOB, now=at(7.5)), "resigned")      # Bob's clock read 4:55.5
    assert (game.black_ms, game.white_ms, game.result) == (299_000, 295_500, "1-0")
    game = ended(actions.resign(ready().id, ALICE, now=at(8)), "resigned")      # on Bob's turn
    assert (game.black_ms, game.white_ms, game.result) == (299_000, 295_000, "0-1")
    game = ready()
    drawer.offer_draw(game.id, ALICE, now=at(4))
    game = ended(drawer.answer_draw(game.id, BOB, accept=True, now=at(10)), "draw_accepted")
    assert (game.black_ms, game.white_ms) == (299_000, 293_000)
    game = ready()
    drawer.offer_draw(game.id, ALICE, now=at(4))
    game = ended(drawer.offer_draw(game.id, BOB, now=at(11)), "draw_accepted")
    assert game.white_ms == 292_000
    with override_settings(CLAIM_AFTER_LIVE_S=0):
        game = ended(claims.claim(ready().id, ALICE, draw=False, now=at(20)), "claimed_win")
    assert (game.black_ms, game.white_ms, game.termination) == (299_000, 283_000, "abandoned")
    # Still in time at the last ms: 1 ms left, not a flag.
    game = ended(actions.resign(ready().id, BOB, now=at(302.999)), "resigned")
    assert (game.white_ms, game.termination) == (1, "resignation")
    # Out of time: the flag wins over a resignation or a draw offer, whoever sends it.
    game = ended(actions.resign(ready().id, BOB, now=at(303)), "flagged")
    assert (game.black_ms, game.white_ms, game.termination, game.result) == (299_000, 0, "time_forfeit", "1-0")
    game = ended(drawer.offer_draw(ready().id, ALICE, now=at(400)), "flagged")
    assert (game.white_ms, game.result) == (0, "1-0")
    # A live game's first move runs no clock: an abort charges nothing.
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="5+0", now=at(0))
    game = play(game, ALICE, "11-15", 1)
    game = ended(actions.abort(game.id, BOB, now=at(20)), "aborted")
    assert (game.black_ms, game.white_ms) == (300_000, 300_000)
    # A correspondence move's allowance runs from the first move on.
    day = 86_400_000
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="1d", now=at(0))
    game = play(game, ALICE, "11-15", 10)
    game = ended(actions.abort(game.id, BOB, now=at(70)), "aborted")
    assert (game.black_ms, game.white_ms) == (day, day - 60_000)
