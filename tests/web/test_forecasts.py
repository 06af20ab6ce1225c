"""Conditional moves (forecasts) through the game socket, real Redis and real database: stored and
seen by their owner only, played as ordinary moves when the opponent's move matches, kept as the
tails of the matching lines, cleared on a mismatch, and every refusal to its sender only."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from game.models import Forecast, Game
from game.round import actions, forecasts, watch
from tests.web.conftest import hears_nothing, mark, recv, sent_since
from tests.web.test_game_actions import everyone_gets
from tests.web.test_takebacks import close, consistent, play, refused, snapshot_of

pytestmark = pytest.mark.django_db(transaction=True)

LINES = [["22-18", "15x22", "25x18", "8-11"], ["23-19", "8-11"]]


@pytest.fixture(autouse=True)
def _patient_sockets(monkeypatch):
    """No page pings these sockets: the server must not take them for a dropped network."""
    monkeypatch.setattr(watch, "SILENT_AFTER_S", 300.0)


async def correspondence(alice, bob, carol, control="3d"):
    """Alice (Black) and Bob (White) in a game of ``control``, Carol watching, after Black's 11-15:
    White to move, so Black may store a forecast.  Returns ``(game_id, a, b, c, v)``."""
    game = await database_sync_to_async(actions.start_game)((alice.player_id, "alice"), (bob.player_id, "bob"),
                                                            time_control=control)
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    c, _ = await carol.connect(game.id)
    v = await play(a, [a, b, c], "11-15", snap["v"])
    return game.id, a, b, c, v


def stored_forecast(game_id: str, player_id: str) -> tuple[int, list] | None:
    row = Forecast.objects.filter(game_id=game_id, player_id=player_id).values_list("ply", "lines").first()
    return (row[0], row[1]) if row else None


@pytest.mark.asyncio
async def test_a_forecast_is_stored_and_seen_by_its_owner_only(alice, bob, carol):
    game_id, a, b, c, v = await correspondence(alice, bob, carol)
    since = mark()
    await a.send_json_to({"type": "forecast", "lines": [["22 - 18", "15x22", "25x18", "8-11"], ["23-19", "8-11"]]})
    event = await recv(a)
    assert event == {"type": "forecast", "lines": LINES, "ply": 1}
    assert sent_since(since, b) == sent_since(since, c) == []
    assert await database_sync_to_async(stored_forecast)(game_id, alice.player_id) == (1, LINES)
    assert (await snapshot_of(a))["forecast"] == LINES
    assert (await snapshot_of(b))["forecast"] == []
    assert "forecast" not in await snapshot_of(c)
    # Saving again replaces; no lines clear it.
    await a.send_json_to({"type": "forecast", "lines": [["23-19", "8-11"]]})
    assert (await recv(a))["lines"] == [["23-19", "8-11"]]
    await a.send_json_to({"type": "forecast", "lines": []})
    assert (await recv(a))["lines"] == []
    assert await database_sync_to_async(stored_forecast)(game_id, alice.player_id) is None
    assert (await database_sync_to_async(Game.objects.get)(pk=game_id)).version == v
    await close(a, b, c)


@pytest.mark.asyncio
async def test_a_matching_move_is_answered_at_once_as_a_normal_move_and_the_tail_kept(alice, bob, carol):
    game_id, a, b, c, v = await correspondence(alice, bob, carol)
    await a.send_json_to({"type": "forecast", "lines": LINES})
    await recv(a)
    since = mark()
    v = await play(b, [a, b, c], "22-18", v)
    reply = await everyone_gets([a, b, c], type="move", move="15x22", ply=3, v=v + 1, turn="W",
                                legal=["25x18", "26x17"])
    assert reply["state"]["clock"]["running"] == "W"
    assert await recv(a) == {"type": "forecast", "lines": [["25x18", "8-11"]], "ply": 3}
    # The forecast's news is Alice's alone: Bob and Carol were sent the two moves, nothing else.
    for other in (b, c):
        assert [(m["type"], m["move"]) for m in sent_since(since, other)] == [("move", "22-18"), ("move", "15x22")]
    assert await database_sync_to_async(stored_forecast)(game_id, alice.player_id) == (3, [["25x18", "8-11"]])
    assert (await snapshot_of(a))["forecast"] == [["25x18", "8-11"]]
    # The tail is played too, and then nothing is left.
    v = await play(b, [a, b, c], "25x18", v + 1)
    await everyone_gets([a, b, c], type="move", move="8-11", ply=5, v=v + 1, turn="W")
    assert await recv(a) == {"type": "forecast", "lines": [], "ply": 5}
    assert await database_sync_to_async(stored_forecast)(game_id, alice.player_id) is None
    game = await database_sync_to_async(consistent)(game_id)
    moves = await database_sync_to_async(
        lambda: list(game.move_set.order_by("ply").values_list("notation", flat=True)))()
    assert moves == ["11-15", "22-18", "15x22", "25x18", "8-11"]
    await close(a, b, c)


@pytest.mark.asyncio
async def test_a_move_no_line_foresaw_clears_the_forecast(alice, bob, carol):
    game_id, a, b, c, v = await correspondence(alice, bob, carol)
    await a.send_json_to({"type": "forecast", "lines": [["22-18", "15x22"]]})
    await recv(a)
    since = mark()
    await play(b, [a, b, c], "24-20", v)
    assert await recv(a) == {"type": "forecast", "lines": [], "ply": 2}
    for other in (b, c):
        assert [(m["type"], m["move"]) for m in sent_since(since, other)] == [("move", "24-20")]
    assert await database_sync_to_async(stored_forecast)(game_id, alice.player_id) is None
    game = await database_sync_to_async(Game.objects.get)(pk=game_id)
    assert (game.ply, game.turn.value) == (2, "B")
    await close(a, b, c)


@pytest.mark.asyncio
async def test_a_reply_a_server_lost_is_played_when_a_player_opens_the_game(alice, bob, carol):
    game_id, a, b, c, v = await correspondence(alice, bob, carol)
    await a.send_json_to({"type": "forecast", "lines": [["22-18", "15x22"]]})
    await recv(a)
    await close(a, b, c)
    # Bob's move lands through no socket (as if its server died before the reply): nobody answered.
    await database_sync_to_async(actions.play_move)(game_id, bob.player_id, "22-18", v)
    b, snap = await bob.connect(game_id)
    assert snap["state"]["ply"] in (2, 3)
    if snap["state"]["ply"] == 2:
        event = await recv(b)
        assert (event["type"], event["move"], event["ply"]) == ("move", "15x22", 3)
    assert await database_sync_to_async(stored_forecast)(game_id, alice.player_id) is None
    a, snap = await alice.connect(game_id)
    assert snap["state"]["ply"] == 3 and snap["forecast"] == []
    assert await hears_nothing(a)
    await close(a, b)


@pytest.mark.asyncio
@pytest.mark.parametrize(("lines", "code"), [
    ([["22-18", "16-19"]], "forecast_illegal"),            # no such reply
    ([["11-15", "8-11"]], "forecast_illegal"),             # Black's move on White's turn
    ([["22-18"]], "forecast_illegal"),                     # no reply
    ([["22-18", "15x22"], ["22-18", "15x22"], ["23-19", "8-11"], ["23-19", "9-14"]], "forecast_illegal"),
    ([["e3-f4", "15x22"]], "forecast_illegal"),
    ([["22-18", "15x22"]] * 11, "forecast_too_long"),
    ([["22-18", "15x22", "25x18", "8-11"] * 4], "forecast_too_long"),
])
async def test_bad_lines_are_refused_to_the_sender_only(alice, bob, carol, lines, code):
    game_id, a, b, c, _ = await correspondence(alice, bob, carol)
    error = await refused(a, [b, c], {"type": "forecast", "lines": lines}, code, game_id)
    assert error["message"]
    assert await database_sync_to_async(stored_forecast)(game_id, alice.player_id) is None
    await close(a, b, c)


@pytest.mark.asyncio
async def test_forecasts_are_refused_on_ones_turn_to_spectators_and_outside_correspondence(alice, bob, carol):
    game_id, a, b, c, _ = await correspondence(alice, bob, carol)
    await refused(b, [a, c], {"type": "forecast", "lines": [["15-19", "24x15"]]}, "forecast_your_turn", game_id)
    await refused(c, [a, b], {"type": "forecast", "lines": LINES}, "not_seated", game_id)
    await close(a, b, c)
    game_id, a, b, c, _ = await correspondence(alice, bob, carol, control="5+3")
    await refused(a, [b, c], {"type": "forecast", "lines": LINES}, "forecast_not_correspondence", game_id)
    await close(a, b, c)


@pytest.mark.asyncio
@pytest.mark.parametrize("frame", [
    {"type": "forecast"},
    {"type": "forecast", "lines": "22-18 15x22"},
    {"type": "forecast", "lines": ["22-18", "15x22"]},
    {"type": "forecast", "lines": [[22, 18]]},
    {"type": "forecast", "lines": [["9" * 200]]},
    {"type": "forecast", "lines": [[None]]},
    {"type": "forecast", "lines": {"a": 1}},
])
async def test_malformed_forecasts_do_not_crash_the_socket(alice, bob, carol, frame):
    game_id, a, b, c, v = await correspondence(alice, bob, carol)
    await refused(a, [b, c], frame, "bad_message", game_id)
    await a.send_json_to({"type": "ping"})
    assert (await recv(a))["type"] == "pong"
    await play(b, [a, b, c], "22-18", v)
    await close(a, b, c)


def test_check_lines_agrees_with_the_rules():
    from game import rules
    record = rules.Game()
    record.play("11-15")
    assert forecasts.check_lines(record, [["22-18", "15x22"], ["22-18", "15x22"]]) == [["22-18", "15x22"]]
    assert forecasts.check_lines(record, [["22-18", "15-22"]]) == [["22-18", "15x22"]]
    assert forecasts.check_lines(record, []) == []


def test_two_processes_answering_the_same_move_play_the_reply_once(alice, bob):
    """Two servers' sockets both run the reply after the opponent's move (on threads, each with
    its own database connection): the row lock lets one play it; the other finds nothing to do."""
    import threading

    from django.db import connection

    played = actions.start_game((alice.player_id, "alice"), (bob.player_id, "bob"), time_control="1d")
    actions.play_move(played.id, alice.player_id, "11-15", Game.objects.get(pk=played.id).version)
    forecasts.save(played.id, alice.player_id, [["22-18", "15x22", "25x18", "8-11"]])
    actions.play_move(played.id, bob.player_id, "22-18", Game.objects.get(pk=played.id).version)
    results, errors = [], []
    start = threading.Barrier(2)

    def answer():
        try:
            start.wait()
            results.append(forecasts.reply(played.id))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=answer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    moves = [event for progress in results for event in progress.events if event.type == "move"]
    assert [event["move"] for event in moves] == ["15x22"]
    game = consistent(played.id)
    assert game.ply == 3
    assert stored_forecast(played.id, alice.player_id) == (3, [["25x18", "8-11"]])


def _version(game_id: str) -> int:
    return Game.objects.get(pk=game_id).version


def test_a_forecast_is_not_played_after_a_takeback_changed_the_position(alice, bob):
    """White stores 9-13 → 17-14 after 21-17, takes 21-17 back and plays 22-17 instead: when Black
    plays 9-13, no reply is played for White (17-14 would be legal, from another position)."""
    from game.round import takebacks

    game = actions.start_game((alice.player_id, "alice"), (bob.player_id, "bob"), time_control="3d")
    actions.play_move(game.id, alice.player_id, "11-15", _version(game.id))
    actions.play_move(game.id, bob.player_id, "21-17", _version(game.id))
    forecasts.save(game.id, bob.player_id, [["9-13", "17-14"]])
    assert stored_forecast(game.id, bob.player_id) == (2, [["9-13", "17-14"]])
    takebacks.propose(game.id, bob.player_id)
    takebacks.accept(game.id, alice.player_id)
    assert stored_forecast(game.id, bob.player_id) is None     # a takeback clears the game's forecasts
    actions.play_move(game.id, bob.player_id, "22-17", _version(game.id))
    actions.play_move(game.id, alice.player_id, "9-13", _version(game.id))
    assert forecasts.reply(game.id).events == []
    stored = consistent(game.id)
    assert (stored.ply, stored.turn.value) == (3, "W")
    assert list(stored.move_set.order_by("ply").values_list("notation", flat=True)) == ["11-15", "22-17", "9-13"]


def test_a_forecast_written_for_another_position_at_the_same_ply_is_never_played(alice, bob):
    """A forecast row whose position is not the one the opponent moved from (however it came to
    be there) is dropped, not played."""
    game = actions.start_game((alice.player_id, "alice"), (bob.player_id, "bob"), time_control="3d")
    actions.play_move(game.id, alice.player_id, "11-15", _version(game.id))
    actions.play_move(game.id, bob.player_id, "22-17", _version(game.id))
    other = "W:W17,21,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,12,15"
    Forecast.objects.create(game_id=game.id, player_id=bob.player_id, ply=2, fen=other, lines=[["9-13", "17-14"]])
    actions.play_move(game.id, alice.player_id, "9-13", _version(game.id))
    assert forecasts.reply(game.id).events == []
    assert stored_forecast(game.id, bob.player_id) is None
    assert consistent(game.id).ply == 3


def test_a_seats_own_move_clears_its_forecast(alice, bob):
    game = actions.start_game((alice.player_id, "alice"), (bob.player_id, "bob"), time_control="3d")
    actions.play_move(game.id, alice.player_id, "11-15", _version(game.id))
    stale = Game.objects.get(pk=game.id)
    Forecast.objects.create(game_id=game.id, player_id=bob.player_id, ply=stale.ply, fen=stale.fen,
                            lines=[["9-13", "17-14"]])
    actions.play_move(game.id, bob.player_id, "22-17", _version(game.id))
    assert stored_forecast(game.id, bob.player_id) is None
