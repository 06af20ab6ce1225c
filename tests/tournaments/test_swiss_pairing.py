"""The Swiss and round-robin pairing (``caissify-pairings`` through our adapter) against worked
examples: FIDE's round 1 (top half against bottom half), FIDE's Berger tables, and the rules every
round of simulated events must keep (no opponent twice, one bye at most and to the lowest, the
colour differences the Dutch rules allow)."""

from __future__ import annotations

import random

import pytest

from game.tournaments.swiss_pairing import Board, Standing, berger_round, floats, swiss_round


def _fresh(count: int) -> list[Standing]:
    return [Standing(number=n, rating=2000 - 10 * n) for n in range(1, count + 1)]


def test_round_one_of_eight_pairs_top_half_against_bottom_half_colours_alternating():
    assert swiss_round(_fresh(8), 1, 5) == [Board(1, 5), Board(6, 2), Board(3, 7), Board(8, 4)]


def test_round_one_of_nine_gives_the_bye_to_the_lowest():
    assert swiss_round(_fresh(9), 1, 5) == [Board(1, 5), Board(6, 2), Board(3, 7), Board(8, 4), Board(9, None)]


def test_round_two_worked_by_hand():
    # Round 1 of four: 1-3 won by 1, 4-2 won by 2 (Black moves first, so 1 and 4 had Black).
    history = [Standing(1, 2000, 2, ("black",), ("none",), 0, frozenset({3})),
               Standing(2, 1990, 2, ("white",), ("none",), 0, frozenset({4})),
               Standing(3, 1980, 0, ("white",), ("none",), 0, frozenset({1})),
               Standing(4, 1970, 0, ("black",), ("none",), 0, frozenset({2}))]
    # Winners meet, 2 (who had White) now Black; losers meet, 3 (who had White) now Black.
    assert swiss_round(history, 2, 3) == [Board(2, 1), Board(3, 4)]


def test_the_bye_never_goes_twice_to_one_player():
    # 5 players, 3 had the bye in round 1: round 2's bye goes to another lowest.
    history = [Standing(1, 2000, 2, ("black",), ("none",), 0, frozenset({4})),
               Standing(2, 1990, 2, ("white",), ("none",), 0, frozenset({5})),
               Standing(3, 1980, 2, (), ("down",), 1, frozenset()),
               Standing(4, 1970, 0, ("white",), ("none",), 0, frozenset({1})),
               Standing(5, 1960, 0, ("black",), ("none",), 0, frozenset({2}))]
    boards = swiss_round(history, 2, 3)
    bye = [b.black for b in boards if b.white is None]
    assert bye == [5]
    assert all({b.black, b.white} != {1, 4} and {b.black, b.white} != {2, 5} for b in boards)


def test_a_round_without_a_legal_pairing_is_refused_not_padded_with_byes():
    # Two players who met: the library's fallback would give both a bye; the adapter refuses.
    met = [Standing(1, 2000, 2, ("black",), ("none",), 0, frozenset({2})),
           Standing(2, 1990, 0, ("white",), ("none",), 0, frozenset({1}))]
    with pytest.raises(ValueError):
        swiss_round(met, 2, 3)


def test_berger_tables_are_fides():
    assert [berger_round(4, r) for r in (1, 2, 3)] == [
        [Board(1, 4), Board(2, 3)], [Board(1, 2), Board(4, 3)], [Board(3, 1), Board(2, 4)]]
    # 5 players play FIDE's table of 6, number 6 being the bye.
    assert berger_round(5, 1) == [Board(2, 5), Board(3, 4), Board(1, None)]
    assert berger_round(5, 3) == [Board(3, 1), Board(4, 5), Board(2, None)]
    with pytest.raises(ValueError):
        berger_round(4, 4)


def test_a_berger_table_meets_everyone_once():
    for players in (3, 4, 5, 6, 7, 8):
        met = [frozenset((b.black, b.white)) for r in range(1, players + players % 2)
               for b in berger_round(players, r) if b.white is not None]
        assert len(met) == len(set(met)) == players * (players - 1) // 2


def _play(count: int, rounds: int, rng: random.Random) -> list[list[Board]]:
    """A simulated event: each round paired from the histories, each game's result drawn."""
    players = {s.number: s for s in _fresh(count)}
    played = []
    for round_number in range(1, rounds + 1):
        boards = swiss_round(list(players.values()), round_number, rounds)
        played.append(boards)
        before = {n: s.points for n, s in players.items()}
        for board in boards:
            if board.white is None:
                s = players[board.black]
                players[board.black] = Standing(s.number, s.rating, s.points + 2, s.colours,
                                                s.floats + ("down",), s.byes + 1, s.opponents)
                continue
            black_points = rng.choice((0, 1, 2))
            for me, other, colour, points in ((board.black, board.white, "black", black_points),
                                              (board.white, board.black, "white", 2 - black_points)):
                s = players[me]
                players[me] = Standing(s.number, s.rating, s.points + points, s.colours + (colour,),
                                       s.floats + (floats(before[me], before[other]),), s.byes,
                                       s.opponents | {other})
    return played


@pytest.mark.parametrize("seed", range(20))
def test_simulated_nine_player_five_round_events_keep_the_rules(seed):
    played = _play(9, 5, random.Random(seed))
    met, byes, colours = set(), [], {n: [] for n in range(1, 10)}
    for boards in played:
        seated = [p for b in boards for p in (b.black, b.white) if p is not None]
        assert sorted(seated) == list(range(1, 10))       # everyone every round
        for board in boards:
            if board.white is None:
                byes.append(board.black)
                continue
            pair = frozenset((board.black, board.white))
            assert pair not in met                          # nobody met twice
            met.add(pair)
            colours[board.black].append("b")
            colours[board.white].append("w")
    assert len(byes) == 5 and len(set(byes)) == 5           # one bye a round, never twice
    for history in colours.values():
        assert abs(history.count("b") - history.count("w")) <= 2
        for end in range(3, len(history)):                  # three alike only in the last round
            assert len(set(history[end - 3:end])) > 1
