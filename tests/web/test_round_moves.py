"""A game's moves through its Round (game/round/round.py), the one way a move is stored: decided on
the row and record the Round kept after the game's last move and written by one conditional
statement, or, when that cannot settle it, decided again on the row locked and read.  Real
database (SQLite by default, PostgreSQL with DATABASE_URL) and Redis."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async as sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client import REGISTRY

from game import errors, rules
from game.models import DeliveryOutage, Game
from game.round import actions, drawer, events, fanout, outages, store
from tests.web.conftest import row_held

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB = "a" * 32, "b" * 32
#: Black's king on 1 and White's on 32, Black to move: 1-6 32-27 6-1 27-32 comes back to it.
KINGS = "B:WK32:BK1"
ROUND = ["1-6", "32-27", "6-1", "27-32"]


def king_game() -> str:
    game = actions.create_game(ALICE, "alice", "B", start_fen=KINGS)
    actions.join_game(game.id, BOB, "bob")
    return game.id


def stored(game_id: str) -> tuple[Game, list[tuple[int, str, str]]]:
    game = Game.objects.get(pk=game_id)
    return game, list(game.move_set.order_by("ply").values_list("ply", "notation", "fen_after"))


def by_row() -> tuple[float, float]:
    """``checkers_moves_stored_total`` so far: moves decided on a kept row, on a locked row."""
    return tuple(REGISTRY.get_sample_value("checkers_moves_stored_total", {"row": row}) or 0.0
                 for row in ("kept", "locked"))


def player_to_move(game: Game) -> str:
    return game.player(game.turn)


async def move(game_id: str, text: str, v: int | None = None) -> actions.Progress:
    """Play ``text`` for the side to move through the game's Round in this process."""
    game = await sync_to_async(Game.objects.get)(pk=game_id)
    return await fanout.hub().round(game_id).move(player_to_move(game), text, game.version if v is None else v)


async def test_moves_through_a_round_store_what_the_plain_action_stores_and_end_the_game():
    through_round, plain = await sync_to_async(king_game)(), await sync_to_async(king_game)()
    kept, locked = by_row()
    for text in ROUND * 2:
        progress = await move(through_round, text)
        [event] = progress.events
        assert event.state["ply"] == progress.game.ply
        game = await sync_to_async(Game.objects.get)(pk=plain)
        await sync_to_async(actions.play_move)(plain, player_to_move(game), text, game.version)
    # The first move of the game here locks and reads its row; each next one is written on the
    # row the Round kept (the last one ends the game, and keeps nothing).
    assert by_row() == (kept + 7, locked + 1 + 8)
    assert fanout.hub().round(through_round).kept is None
    round_game, round_moves = await sync_to_async(stored)(through_round)
    plain_game, plain_moves = await sync_to_async(stored)(plain)
    assert round_moves == plain_moves and len(round_moves) == 8
    fields = ("status", "result", "termination", "ply", "fen", "no_progress", "version", "position_version",
              "black_ms", "white_ms", "draw_offer")
    assert [getattr(round_game, f) for f in fields] == [getattr(plain_game, f) for f in fields]
    # The start position a third time: drawn by repetition.
    assert (round_game.status, round_game.result) == (Game.Status.FINISHED, "1/2-1/2")
    assert round_game.finished_at is not None and round_game.finished_at == round_game.updated_at


async def test_the_round_keeps_the_row_of_its_last_move_for_the_next():
    game_id = await sync_to_async(king_game)()
    first = await move(game_id, "1-6")
    the_round = fanout.hub().round(game_id)
    assert the_round.kept is not None and the_round.kept.game.version == first.game.version
    assert the_round.kept.game is not first.game      # a copy of its own
    kept, locked = by_row()
    second = await move(game_id, "32-27")
    assert by_row() == (kept + 1, locked)
    assert the_round.kept is not None and the_round.kept.game.version == second.game.version


async def test_a_rated_games_move_shows_the_provisional_marks_kept_on_its_row_and_reads_nothing_for_them():
    from tests.ratings.helpers import account

    def rated() -> str:
        alice, bob = account("alice"), account("bob")
        return actions.start_game((alice, "alice"), (bob, "bob"), "5+3", rated=True).id

    game_id = await sync_to_async(rated)()
    game = await sync_to_async(Game.objects.get)(pk=game_id)
    assert (game.black_provisional, game.white_provisional, game.black_rating) == (True, True, 1500)
    progress = await move(game_id, "11-15")
    [event] = progress.events
    assert event.state["seats"]["B"] == {"name": "alice", "rating": 1500, "provisional": True}

    def state_queries() -> int:
        record = store.current_record(progress.game)
        with CaptureQueriesContext(connection) as queries:
            events.state(progress.game, record)
        return len(queries.captured_queries)

    assert await sync_to_async(state_queries)() == 0


async def test_a_move_declines_the_opponents_pending_draw_offer():
    game_id = await sync_to_async(king_game)()
    await sync_to_async(drawer.offer_draw)(game_id, ALICE)   # Black offers, then moves: still pending
    first = await move(game_id, "1-6")
    assert first.game.draw_offer_by is rules.Color.BLACK
    progress = await move(game_id, "32-27")
    [event] = progress.events
    assert event.state["draw_offer"] is None
    game, _ = await sync_to_async(stored)(game_id)
    assert (game.draw_offer, game.black_draw_ply) == ("", 2 + drawer.DRAW_OFFER_COOLDOWN_PLIES)


async def test_a_move_on_a_kept_row_is_not_charged_for_another_processs_outage():
    """Black has thought 70 s of a one-minute clock, 30 s of them while another process could not
    deliver events (a window stored in the database): the move is in time and charges 40 s."""

    def timed_game() -> str:
        return actions.start_game((ALICE, "alice"), (BOB, "bob"), "1+0").id

    game_id = await sync_to_async(timed_game)()
    await move(game_id, "11-15")
    await move(game_id, "23-19")      # each side's first move; White's row is kept
    start = timezone.now() - timedelta(seconds=50)

    def backdate_and_record_the_outage() -> None:
        Game.objects.filter(pk=game_id).update(turn_started_at=timezone.now() - timedelta(seconds=70))
        DeliveryOutage.objects.create(instance="another-process", started_at=start,
                                      seen_at=start + timedelta(seconds=30), ended_at=start + timedelta(seconds=30))

    await sync_to_async(backdate_and_record_the_outage)()
    the_round = fanout.hub().round(game_id)
    assert the_round.kept is not None
    the_round.kept.game.turn_started_at = timezone.now() - timedelta(seconds=70)   # as stored now
    outages.tracker.reset()   # the windows are due to be read again
    progress = await move(game_id, "8-11", 2)
    assert 19_000 <= progress.game.black_ms <= 20_500
    game, _ = await sync_to_async(stored)(game_id)
    assert (game.ply, game.black_ms) == (3, progress.game.black_ms)


async def test_a_refused_move_stores_nothing_and_the_next_one_plays():
    game_id = await sync_to_async(king_game)()
    first = await move(game_id, "1-6")
    for player, text, code in ((BOB, "32-23", "illegal_move"), (BOB, "hello", "malformed_move"),
                               (ALICE, "6-1", "not_your_turn"), ("c" * 32, "32-27", "not_seated")):
        with pytest.raises(errors.ActionError) as exc:
            await fanout.hub().round(game_id).move(player, text, first.game.version)
        assert exc.value.code == code
    game, moves = await sync_to_async(stored)(game_id)
    assert (game.ply, game.version, len(moves)) == (1, first.game.version, 1)
    second = await move(game_id, "32-27")
    assert (second.game.ply, second.game.fen) == (2, "B:WK27:BK6")


async def test_a_game_changed_since_its_row_was_kept_is_decided_on_the_locked_row():
    game_id = await sync_to_async(king_game)()
    first = await move(game_id, "1-6")
    await sync_to_async(drawer.offer_draw)(game_id, BOB)   # a new version, not made by a move
    kept, locked = by_row()
    second = await move(game_id, "32-27")
    assert by_row() == (kept, locked + 1)
    assert (second.game.ply, second.game.version) == (2, first.game.version + 2)
    # The row of that move is kept in turn: the next one is written on it.
    await move(game_id, "6-1")
    assert by_row() == (kept + 1, locked + 1)


async def test_a_round_dropped_leaves_its_kept_row_to_the_next_round_of_the_game():
    game_id = await sync_to_async(king_game)()
    await move(game_id, "1-6")
    hub = fanout.hub()
    assert game_id not in hub.rounds            # nothing of the game is left here: dropped
    assert game_id in hub.kept
    kept, locked = by_row()
    await move(game_id, "32-27")
    assert by_row() == (kept + 1, locked)


@pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL's row locks")
async def test_a_move_whose_row_is_held_elsewhere_waits_its_turn_and_is_stored_once():
    game_id = await sync_to_async(king_game)()
    await move(game_id, "1-6")
    with row_held(game_id, for_s=0.3):
        started = asyncio.get_running_loop().time()
        second = await move(game_id, "32-27")
        assert asyncio.get_running_loop().time() - started >= 0.1
    game, moves = await sync_to_async(stored)(game_id)
    assert (game.ply, len(moves), second.game.ply) == (2, 2, 2)


def test_a_games_end_is_told_once_it_has_committed_and_not_before():
    from django.db import transaction

    from game.round import signals

    heard: list[tuple[str, str]] = []

    def receiver(sender, game, **kwargs):
        heard.append((game.id, game.status))

    signals.game_ended.connect(receiver)
    try:
        game_id = king_game()
        with transaction.atomic():
            actions.resign(game_id, ALICE)
            assert heard == []                 # not before the end has committed
        assert heard == [(game_id, Game.Status.FINISHED)]
        with pytest.raises(RuntimeError), transaction.atomic():
            other = king_game()
            actions.resign(other, BOB)
            raise RuntimeError("rolled back")
        assert heard == [(game_id, Game.Status.FINISHED)]
    finally:
        signals.game_ended.disconnect(receiver)
