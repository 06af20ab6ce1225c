"""Arena scoring against hand-worked tables: wins, draws, losses, streaks, berserk, the draw rule,
the performance rating; and the arena's pairing of free players."""

from __future__ import annotations

import pytest

from game.tournaments import pairing, scoring
from game.tournaments.pairing import Waiting
from game.tournaments.scoring import Result

W, D, L = Result.WIN, Result.DRAW, Result.LOSS

# One player's arena, game by game: (result, berserk, full moves) -> (points, streak after, total).
# Worked by hand from the rules of docs/tournaments.md, "Arena".
ONE_PLAYER = [
    ((W, False, 20), (2, 1, 2)),     # a win
    ((W, True, 12), (3, 2, 5)),      # a berserk win past move 7, not yet on fire: 2 + 1
    ((W, False, 25), (4, 3, 9)),     # on fire (two wins before): doubled
    ((D, False, 30), (2, 0, 11)),    # a draw on fire: doubled, and the fire goes out
    ((W, False, 40), (2, 1, 13)),
    ((D, False, 8), (0, 0, 13)),     # a draw within 10 moves scores nothing, and ends the streak
    ((W, True, 6), (2, 1, 15)),      # berserk win before move 7: no bonus
    ((W, False, 22), (2, 2, 17)),    # second win in a row: on fire from the next game
    ((L, True, 30), (0, 0, 17)),     # a loss, berserk or not: nothing, the fire goes out
    ((W, True, 7), (3, 1, 20)),      # berserk win at exactly move 7: the bonus
    ((W, False, 9), (2, 2, 22)),
    ((W, True, 35), (5, 3, 27)),     # on fire and berserk: 4 + 1 (the bonus is not doubled)
    ((D, False, 10), (2, 0, 29)),    # a draw of exactly 10 moves counts, doubled on fire
    ((D, False, 10), (1, 0, 30)),
]


def test_one_players_arena_matches_the_hand_worked_table():
    streak = total = 0
    for (result, berserk, moves), (points, streak_after, total_after) in ONE_PLAYER:
        scored = scoring.score(result, streak, berserk, moves)
        streak, total = scored.streak, total + scored.points
        assert (scored.points, streak, total) == (points, streak_after, total_after), (result, berserk, moves)


@pytest.mark.parametrize(("result", "streak", "berserk", "moves", "points"), [
    (W, 0, False, 0, 2),      # a win in no moves (an opponent who resigned at once) still counts
    (D, 0, False, 9, 0),      # the draw rule
    (D, 5, False, 9, 0),      # the draw rule on fire too
    (L, 4, True, 50, 0),
    (W, 1, True, 7, 3),
])
def test_single_games(result, streak, berserk, moves, points):
    assert scoring.score(result, streak, berserk, moves).points == points


@pytest.mark.parametrize(("opponents", "games", "wins", "draws", "expected"), [
    (1600 + 1400 + 1500, 3, 1, 1, 1500),    # +1 -1 =1: the mean of the opponents
    (1500 + 1700, 2, 2, 0, 2100),           # (3200 + 2 * 500) / 2
    (1500, 1, 0, 0, 1000),                  # one loss: 500 under the opponent
    (0, 0, 0, 0, 0),                        # no game yet
])
def test_performance(opponents, games, wins, draws, expected):
    assert scoring.performance(opponents, games, wins, draws) == expected


def test_neighbours_are_paired_down_the_standings():
    waiting = [Waiting(p, rank) for rank, p in enumerate("abcde")]
    assert pairing.pair(list(reversed(waiting))) == [("a", "b"), ("c", "d")]


def test_the_last_opponent_is_skipped_when_someone_else_is_free():
    waiting = [Waiting("a", 0, "b"), Waiting("b", 1, "a"), Waiting("c", 2, "d"), Waiting("d", 3, "c")]
    assert pairing.pair(waiting) == [("a", "c"), ("b", "d")]


def test_two_last_opponents_alone_wait_for_someone_else_then_meet_again():
    assert pairing.pair([Waiting("a", 0, "b", 2.0), Waiting("b", 1, "a", 2.0)]) == []
    assert pairing.pair([Waiting("a", 0, "b", 2.0), Waiting("b", 1, "a", 2.0), Waiting("c", 2)]) == [("a", "c")]
    waited = pairing.REMATCH_AFTER_S
    assert pairing.pair([Waiting("a", 0, "b", waited), Waiting("b", 1, "a", waited + 3)]) == [("a", "b")]


def test_nobody_is_paired_twice():
    waiting = [Waiting(f"p{i}", i, f"p{i ^ 1}") for i in range(11)]
    pairs = pairing.pair(waiting)
    seated = [p for pair in pairs for p in pair]
    assert len(seated) == len(set(seated)) == 10
    assert not any(int(a[1:]) ^ 1 == int(b[1:]) for a, b in pairs)  # each avoided their last opponent
