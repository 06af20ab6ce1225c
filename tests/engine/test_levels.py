"""Playing levels and the worker pool."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import threading

import pytest

from game import players
from game.engine import LEVELS, EngineBusy, EnginePool, choose_move, level
from game.engine import levels as worker
from game.rules import INITIAL_FEN, InvalidFenError, Position


@pytest.mark.parametrize("chosen", LEVELS, ids=lambda lv: f"level-{lv.number}")
def test_every_level_plays_a_legal_move(chosen):
    quick = dataclasses.replace(chosen, time_ms=min(chosen.time_ms, 60))
    position = Position.from_fen("B:W20,21,23,24,25,27,30,31,32:B2,3,6,7,8,11,12,13,14")
    rng = random.Random(3)
    for _ in range(3):
        choice = choose_move(position, quick, rng=rng)
        assert position.parse_move(choice["move"]) in position.legal_moves()


def test_beginner_blunders_now_and_then_and_master_never_does():
    position = Position.initial()
    rng = random.Random(1)
    beginner = [choose_move(position, LEVELS[0], rng=rng)["random"] for _ in range(60)]
    assert 3 <= sum(beginner) <= 25
    master = dataclasses.replace(LEVELS[-1], time_ms=30)
    assert not any(choose_move(position, master, rng=rng)["random"] for _ in range(5))


def test_choose_move_without_legal_move_raises():
    with pytest.raises(ValueError, match="no legal move"):
        choose_move(Position.from_fen("B:W9,14:B5"), LEVELS[0])


@pytest.mark.parametrize("number", [0, 10, "3", True, None])
def test_unknown_level_raises(number):
    with pytest.raises(ValueError):
        level(number)


def test_worker_functions_take_and_return_plain_data():
    played = worker.play(INITIAL_FEN, 1, [], 0, seed=5)
    assert played["move"] in [str(m) for m in Position.initial().legal_moves()]
    analysed = worker.analyse("B:W18,27:B14,K22", 50)
    assert analysed["move"] == "14x23x32" and analysed["mate"] == 1
    assert worker.draw_score("W:WK18,K19,K26:B1", 50) > 0  # White, to move, is far ahead
    with pytest.raises(InvalidFenError):
        worker.analyse("B:W1:B5", 50)


def test_process_pool_runs_searches_off_the_event_loop():
    pool = EnginePool(workers=1, kind="process", max_waiting=1)
    try:
        async def both():
            ticks = 0

            async def tick():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticker = asyncio.get_running_loop().create_task(tick())
            result = await pool.run(worker.analyse, INITIAL_FEN, 300)
            ticker.cancel()
            return result, ticks

        result, ticks = asyncio.run(both())
        assert result["move"] in [str(m) for m in Position.initial().legal_moves()]
        assert ticks >= 5  # the loop kept running while the worker searched
        assert pool.call(worker.analyse, INITIAL_FEN, 20, timeout=30)["move"]
    finally:
        pool.shutdown()


def test_full_pool_refuses_at_once():
    pool = EnginePool(workers=1, kind="thread", max_waiting=0)
    release = threading.Event()
    try:
        async def scenario():
            first = asyncio.get_running_loop().create_task(pool.run(release.wait, 5))
            await asyncio.sleep(0.05)
            with pytest.raises(EngineBusy):
                await pool.run(release.wait, 5)
            release.set()
            assert await first is True

        asyncio.run(scenario())
        assert pool.in_flight == 0
    finally:
        pool.shutdown()


def test_pool_with_bad_settings_raises():
    with pytest.raises(ValueError):
        EnginePool(kind="fibre")
    with pytest.raises(ValueError):
        EnginePool(workers=0)


def test_noisy_level_out_of_time_still_plays_a_legal_move():
    position = Position.from_fen("W:WK3,K12,K28,20:BK10,K19,K23,5")
    hurried = dataclasses.replace(LEVELS[1], time_ms=1, blunder=0.0, depth=8)
    choice = choose_move(position, hurried, rng=random.Random(2))
    assert position.parse_move(choice["move"]) in position.legal_moves()


def test_the_players_ids_know_every_level():
    """A seat's id names levels 1 to COMPUTER_LEVELS (game/players.py): as many as the engine has."""
    assert len(LEVELS) == players.COMPUTER_LEVELS
    numbers = list(range(1, len(LEVELS) + 1))
    assert [players.computer_level(players.computer_id(n)) for n in numbers] == numbers
