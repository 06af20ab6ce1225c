"""A game's next move in the process that played its last one, stored from the event loop
(game/round/actions.py play_move_on_loop, checkers_site/loopdb.py): what it stores, and each case
it leaves to the database-thread way, with nothing stored.  Real PostgreSQL; on SQLite the loop
never stores a move."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async as sync_to_async
from django.db import connection
from prometheus_client import REGISTRY

from checkers_site import loopdb
from game import rules
from game.models import Game
from game.round import actions, drawer, errors, records, turns
from tests.web.conftest import row_held

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB = "a" * 32, "b" * 32
#: Black's king on 1 and White's on 32, Black to move: 1-6 32-27 6-1 27-32 comes back to it.
KINGS = "B:WK32:BK1"
ROUND = ["1-6", "32-27", "6-1", "27-32"]

postgresql_only = pytest.mark.skipif("connection.vendor != 'postgresql'",
                                     reason="moves are stored from the event loop on PostgreSQL only")


@pytest.fixture(autouse=True)
def nothing_kept():
    records.forget()
    yield
    records.forget()
    loopdb.close_all()


def king_game() -> str:
    game = actions.create_game(ALICE, "alice", "B", start_fen=KINGS)
    actions.join_game(game.id, BOB, "bob")
    return game.id


def stored(game_id: str) -> tuple[Game, list[tuple[int, str, str]]]:
    game = Game.objects.get(pk=game_id)
    return game, list(game.move_set.order_by("ply").values_list("ply", "notation", "fen_after"))


def kept_moves() -> float:
    return REGISTRY.get_sample_value("checkers_moves_stored_total", {"row": "kept"}) or 0.0


def player_to_move(game: Game) -> str:
    return ALICE if game.turn is rules.Color.BLACK else BOB


async def play_here(game_id: str, text: str) -> actions.Progress:
    """Play ``text`` in a database thread (the first move of a game here, which keeps its row)."""
    game = await sync_to_async(Game.objects.get)(pk=game_id)
    return await sync_to_async(actions.play_move)(game_id, player_to_move(game), text, game.version)


async def play_on_loop(game_id: str, text: str, v: int | None = None) -> actions.Progress | None:
    game = await sync_to_async(Game.objects.get)(pk=game_id)
    return await actions.play_move_on_loop(game_id, player_to_move(game), text,
                                           game.version if v is None else v)


@postgresql_only
async def test_moves_from_the_loop_store_what_the_database_thread_stores_and_end_the_game():
    on_loop, in_thread = await sync_to_async(king_game)(), await sync_to_async(king_game)()
    await play_here(on_loop, ROUND[0])
    await play_here(in_thread, ROUND[0])
    before = kept_moves()
    for text in ROUND[1:] + ROUND:
        progress = await play_on_loop(on_loop, text)
        assert progress is not None, text
        [event] = progress.events
        assert event.state["ply"] == progress.game.ply
        await play_here(in_thread, text)
    assert kept_moves() == before + 14   # seven from the loop, seven from kept rows in a thread
    loop_game, loop_moves = await sync_to_async(stored)(on_loop)
    thread_game, thread_moves = await sync_to_async(stored)(in_thread)
    assert loop_moves == thread_moves and len(loop_moves) == 8
    fields = ("status", "result", "termination", "ply", "fen", "no_progress", "version", "position_version",
              "black_ms", "white_ms", "draw_offer_by")
    assert [getattr(loop_game, f) for f in fields] == [getattr(thread_game, f) for f in fields]
    # The start position a third time: drawn by repetition, from the event loop.
    assert (loop_game.status, loop_game.result) == (Game.Status.FINISHED, "1/2-1/2")
    assert loop_game.finished_at is not None and loop_game.finished_at == loop_game.updated_at
    assert progress.game.version == loop_game.version


@postgresql_only
async def test_a_rated_game_moves_from_the_loop_even_when_its_marks_must_be_read_again():
    """The state of a rated game's move shows whether each rating is provisional, which the
    process reads once per game; read again (the marks were dropped meanwhile), in a thread."""
    from game.ratings import games as rated_games
    from tests.ratings.helpers import account

    def rated() -> str:
        alice, bob = account("alice"), account("bob")
        return actions.start_game((alice, "alice"), (bob, "bob"), "5+3", rated=True).id

    game_id = await sync_to_async(rated)()
    game = await sync_to_async(Game.objects.get)(pk=game_id)
    first = await sync_to_async(actions.play_move)(game_id, game.black_player, "11-15", game.version)
    rated_games._provisional.clear()
    progress = await actions.play_move_on_loop(game_id, game.white_player, "23-19", first.game.version)
    assert progress is not None
    [event] = progress.events
    assert event.state["seats"]["B"]["provisional"] is True and event.state["seats"]["B"]["rating"] == 1500
    stored_game, moves = await sync_to_async(stored)(game_id)
    assert (stored_game.ply, [m[1] for m in moves]) == (2, ["11-15", "23-19"])


@postgresql_only
async def test_a_move_from_the_loop_declines_the_opponents_pending_draw_offer():
    game_id = await sync_to_async(king_game)()
    await sync_to_async(drawer.offer_draw)(game_id, ALICE)   # Black offers, then moves: still pending
    first = await play_here(game_id, "1-6")
    assert first.game.draw_offer_by is rules.Color.BLACK
    progress = await play_on_loop(game_id, "32-27")
    assert progress is not None
    [event] = progress.events
    assert event.state["draw_offer"] is None
    game, _ = await sync_to_async(stored)(game_id)
    assert (game.draw_offer, game.black_draw_ply) == ("", 2 + drawer.DRAW_OFFER_COOLDOWN_PLIES)


@postgresql_only
async def test_a_move_from_the_loop_is_not_charged_for_another_processs_outage():
    """Black has thought 70 s of a one-minute clock, 30 s of them while another process could not
    deliver events (a window stored in the database, which the event loop does not read itself):
    the move from the loop is in time and charges 40 s."""
    from datetime import timedelta

    from django.utils import timezone

    from game.models import DeliveryOutage
    from game.round import outages

    def timed_game() -> str:
        now = timezone.now()
        game = actions.start_game((ALICE, "alice"), (BOB, "bob"), "1+0", now=now - timedelta(seconds=74))
        actions.play_move(game.id, ALICE, "11-15", 0, now=now - timedelta(seconds=72))
        actions.play_move(game.id, BOB, "23-19", 1, now=now - timedelta(seconds=70))
        start = now - timedelta(seconds=50)
        DeliveryOutage.objects.create(instance="another-process", started_at=start,
                                      seen_at=start + timedelta(seconds=30), ended_at=start + timedelta(seconds=30))
        return game.id

    game_id = await sync_to_async(timed_game)()
    outages.tracker.reset()   # the windows are due to be read again
    progress = await actions.play_move_on_loop(game_id, ALICE, "8-11", 2)
    assert progress is not None
    assert 19_000 <= progress.game.black_ms <= 20_500
    game, _ = await sync_to_async(stored)(game_id)
    assert (game.ply, game.black_ms) == (3, progress.game.black_ms)


@postgresql_only
async def test_a_refused_move_is_left_to_the_database_thread_with_nothing_stored():
    game_id = await sync_to_async(king_game)()
    first = await play_here(game_id, "1-6")
    for player, text, code in ((BOB, "32-23", "illegal_move"), (BOB, "hello", "malformed_move"),
                               (ALICE, "6-1", "not_your_turn"), ("c" * 32, "32-27", "not_seated")):
        assert await actions.play_move_on_loop(game_id, player, text, first.game.version) is None
        # The database-thread way, which the socket takes next, refuses it with its code.
        with pytest.raises(errors.ActionError) as exc:
            await sync_to_async(actions.play_move)(game_id, player, text, first.game.version)
        assert exc.value.code == code
    game, moves = await sync_to_async(stored)(game_id)
    assert (game.ply, game.version, len(moves)) == (1, first.game.version, 1)


@postgresql_only
async def test_a_game_changed_since_its_row_was_kept_is_left_to_the_database_thread():
    game_id = await sync_to_async(king_game)()
    first = await play_here(game_id, "1-6")
    await sync_to_async(drawer.offer_draw)(game_id, BOB)   # a new version, not made by a move
    assert await play_on_loop(game_id, "32-27", first.game.version) is None
    game, moves = await sync_to_async(stored)(game_id)
    assert (game.ply, game.version, len(moves)) == (1, first.game.version + 1, 1)


@postgresql_only
async def test_no_kept_row_no_move_from_the_loop():
    game_id = await sync_to_async(king_game)()
    await play_here(game_id, "1-6")
    records.forget()
    assert await play_on_loop(game_id, "32-27") is None


@postgresql_only
async def test_a_row_held_elsewhere_is_left_to_the_database_thread_at_once():
    game_id = await sync_to_async(king_game)()
    first = await play_here(game_id, "1-6")
    with row_held(game_id):
        loop = asyncio.get_running_loop()
        started = loop.time()
        assert await play_on_loop(game_id, "32-27", first.game.version) is None
        assert loop.time() - started < 1.0
    game, moves = await sync_to_async(stored)(game_id)
    assert (game.ply, len(moves)) == (1, 1)
    # The connection is still lent after a held row: the next move from the loop is stored.
    second = await play_here(game_id, "32-27")
    assert second.game.ply == 2
    third = await play_on_loop(game_id, "6-1")
    assert third is not None and third.game.ply == 3


@postgresql_only
async def test_a_lost_connection_is_left_to_the_database_thread_and_replaced():
    game_id = await sync_to_async(king_game)()
    await play_here(game_id, "1-6")
    assert await play_on_loop(game_id, "32-27") is not None
    # The server ends the loop's connection (a restart, an administrator).
    async with loopdb.borrowed() as db:
        assert db is not None
        pid = db.info.backend_pid

    def terminate() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])

    await sync_to_async(terminate)()
    assert await play_on_loop(game_id, "6-1") is None
    game, moves = await sync_to_async(stored)(game_id)
    assert (game.ply, len(moves)) == (2, 2)
    await play_here(game_id, "6-1")
    progress = await play_on_loop(game_id, "27-32")
    assert progress is not None and progress.game.ply == 4
    async with loopdb.borrowed() as db:
        assert db is not None and db.info.backend_pid != pid


@postgresql_only
async def test_the_turn_of_a_game_tries_the_loop_first_then_the_database_thread():
    """As the game socket plays a move (game/round/socket.py): a refusal from the loop is
    decided again in a database thread and raised with its code."""
    game_id = await sync_to_async(king_game)()
    first = await play_here(game_id, "1-6")
    with pytest.raises(errors.ActionError) as exc:
        await turns.run(game_id, actions.play_move, BOB, "32-23", first.game.version,
                        on_loop=actions.play_move_on_loop)
    assert exc.value.code == "illegal_move"
    before = kept_moves()
    # The refusal took the kept row: this move is stored by the database thread, which keeps it.
    second = await turns.run(game_id, actions.play_move, BOB, "32-27", first.game.version,
                             on_loop=actions.play_move_on_loop)
    assert second.game.ply == 2 and kept_moves() == before
    third = await turns.run(game_id, actions.play_move, ALICE, "6-1", second.game.version,
                            on_loop=actions.play_move_on_loop)
    assert third.game.ply == 3 and kept_moves() == before + 1


async def test_sqlite_stores_no_move_from_the_loop():
    if connection.vendor == "postgresql":
        assert loopdb.available()
        return
    game_id = await sync_to_async(king_game)()
    await play_here(game_id, "1-6")
    assert not loopdb.available()
    assert await play_on_loop(game_id, "32-27") is None


def test_a_closed_pool_lends_nothing_it_closed():
    """close_all (tests, a changed database) closes the idle connections; one lent then is
    closed when given back, not kept."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only")

    async def lend() -> tuple[int, bool]:
        async with loopdb.borrowed() as db:
            assert db is not None
            loopdb.close_all()
            pid = db.info.backend_pid
        return pid, db.closed

    _, closed = asyncio.run(lend())
    assert closed
