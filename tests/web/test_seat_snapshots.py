"""One read of a game gives every viewer's snapshot (game/round/reads.py, ``seat_snapshots``): each
seat's copy is the one :func:`game.round.reads.snapshot` reads for that viewer alone (chat rooms,
legal moves, forecast), and a game's sockets opening in one process read the game once."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from game.models import ChatLine, Game
from game.round import actions, forecasts, reads
from tests.web.test_socket_limits import start_game
from tests.web.test_sync_cache import db_reads  # noqa: F401 - a fixture

ALICE, BOB, CAROL = "p-alice", "p-bob", "p-carol"


def chat_in_both_rooms(game_id: str) -> None:
    ChatLine.objects.create(game_id=game_id, room="players", seat="B", name="alice", text="good luck")
    ChatLine.objects.create(game_id=game_id, room="spectators", seat="", name="carol", text="nice opening")


def each_alone(game_id: str) -> dict[str | None, dict]:
    return {seat: reads.snapshot(game_id, player).payload()
            for seat, player in (("B", ALICE), ("W", BOB), (None, CAROL))}


def same(these: dict[str | None, dict], those: dict[str | None, dict]) -> bool:
    """The same snapshots, but for a running clock, which may have run on between two reads (1 s at most)."""
    def without_clock(payload: dict) -> tuple[dict, dict | None]:
        clock = payload["state"].get("clock")
        return {**payload, "state": {**payload["state"], "clock": None}}, clock

    assert set(these) == set(those)
    for seat in these:
        (this, this_clock), (that, that_clock) = without_clock(these[seat]), without_clock(those[seat])
        assert this == that, seat
        if this_clock is None or that_clock is None:
            assert this_clock == that_clock
        else:
            assert {k: v for k, v in this_clock.items() if k not in "BW"} == \
                {k: v for k, v in that_clock.items() if k not in "BW"}
            assert all(abs(this_clock[side] - that_clock[side]) <= 1000 for side in "BW")
    return True


def together(game_id: str) -> dict[str | None, dict]:
    found, seats = reads.seat_snapshots(game_id)
    game = Game.objects.get(pk=game_id)
    assert seats == (game.black_player, game.white_player, game.version)
    return {seat: snapshot.payload() for seat, snapshot in found.items()}


@pytest.mark.django_db
def test_every_seats_copy_is_the_one_read_for_it_alone():
    game = actions.start_game((ALICE, "alice"), (BOB, "bob"))
    actions.play_move(game.id, ALICE, "11-15", Game.objects.get(pk=game.id).version)
    chat_in_both_rooms(game.id)
    alone, both = each_alone(game.id), together(game.id)
    assert same(both, alone)
    assert both["W"]["you"] == "W" and "legal" in both["W"]["state"]          # white to move
    assert "legal" not in both["B"]["state"] and "legal" not in both[None]["state"]
    assert set(both["B"]["chat"]) == {"players"} and set(both[None]["chat"]) == {"spectators"}
    assert both[None]["chat"]["spectators"][0]["text"] == "nice opening"


@pytest.mark.django_db
def test_a_finished_games_players_read_both_rooms():
    game = actions.start_game((ALICE, "alice"), (BOB, "bob"))
    chat_in_both_rooms(game.id)
    actions.resign(game.id, BOB)
    both = together(game.id)
    assert same(both, each_alone(game.id))
    assert set(both["B"]["chat"]) == set(both["W"]["chat"]) == {"players", "spectators"}


@pytest.mark.django_db
def test_each_seat_has_its_own_forecast():
    game = actions.start_game((ALICE, "alice"), (BOB, "bob"), time_control="1d")
    actions.play_move(game.id, ALICE, "11-15", Game.objects.get(pk=game.id).version)
    forecasts.save(game.id, ALICE, [["22-18", "15x22"]])
    both = together(game.id)
    assert same(both, each_alone(game.id))
    assert both["B"]["forecast"] == [["22-18", "15x22"]] and both["W"]["forecast"] == []
    assert "forecast" not in both[None]


@pytest.mark.django_db
def test_a_waiting_game_has_only_its_holders_seat():
    game = actions.create_game(ALICE, "alice", "W")
    found, seats = reads.seat_snapshots(game.id)
    assert set(found) == {"W", None} and seats[0] in (None, "") and seats[1] == ALICE
    assert found["W"].payload() == reads.snapshot(game.id, ALICE).payload()


@pytest.mark.django_db
def test_no_such_game_is_refused():
    with pytest.raises(actions.ActionError) as refused:
        reads.seat_snapshots("nosuchgame")
    assert refused.value.code == "no_such_game"


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_games_three_sockets_read_it_once(alice, bob, carol, db_reads):  # noqa: F811
    game_id = await start_game(alice, bob)
    await database_sync_to_async(chat_in_both_rooms)(game_id)
    comms = []
    for browser, seat in ((alice, "B"), (bob, "W"), (carol, None)):
        comm, shot = await browser.connect(game_id)
        comms.append(comm)
        assert shot["you"] == seat
        assert set(shot["chat"]) == ({"spectators"} if seat is None else {"players"})
    assert db_reads.count("seat_snapshots") == 1
    assert "snapshot" not in db_reads
    for comm in comms:
        await comm.disconnect()
