"""The pairing decision (game.pairing.pair_seeks), a pure function: no Redis, no database."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from game.lobby.pairing import POOLS, Pairing, Seek, draw_colours, is_pool_id, pair_seeks


def seek(n: int, player: str, since: int | None = None) -> Seek:
    return Seek(id=f"s{n}", player=player, name=player, pool="untimed", channel=f"chan-{n}",
                since=n if since is None else since)


def ids(pairings: list[Pairing]) -> list[set[str]]:
    return [{p.black.id, p.white.id} for p in pairings]


def test_empty_or_single_pool_pairs_nobody():
    rng = random.Random(0)
    assert pair_seeks([], rng) == []
    assert pair_seeks([seek(1, "alice")], rng) == []


def test_two_players_are_paired_once():
    pairings = pair_seeks([seek(1, "alice"), seek(2, "bob")], random.Random(0))
    assert ids(pairings) == [{"s1", "s2"}]
    assert {pairings[0].black.player, pairings[0].white.player} == {"alice", "bob"}


def test_two_tabs_of_one_player_are_not_paired():
    assert pair_seeks([seek(1, "alice"), seek(2, "alice")], random.Random(0)) == []


def test_oldest_seeks_are_paired_first_whatever_the_input_order():
    seeks = [seek(3, "carol"), seek(1, "alice"), seek(2, "bob")]
    assert ids(pair_seeks(seeks, random.Random(0))) == [{"s1", "s2"}]


def test_newcomer_meets_oldest_seek_of_another_player_not_the_second_tab():
    seeks = [seek(1, "alice"), seek(2, "alice"), seek(3, "bob")]
    assert ids(pair_seeks(seeks, random.Random(0))) == [{"s1", "s3"}]


def test_odd_one_is_left_waiting():
    seeks = [seek(n, f"p{n}") for n in range(7)]
    pairings = pair_seeks(seeks, random.Random(0))
    assert len(pairings) == 3
    paired = {s.id for p in pairings for s in p}
    assert {s.id for s in seeks} - paired == {"s6"}


def test_ties_in_arrival_are_broken_by_id():
    seeks = [seek(2, "bob", since=5), seek(1, "alice", since=5), seek(3, "carol", since=5)]
    assert ids(pair_seeks(seeks, random.Random(0))) == [{"s1", "s2"}]


def test_duplicate_seek_is_counted_once():
    once = seek(1, "alice")
    assert pair_seeks([once, once], random.Random(0)) == []


def test_colours_are_drawn_at_random_both_ways():
    a, b = seek(1, "alice"), seek(2, "bob")
    blacks = Counter(pair_seeks([a, b], random.Random(n))[0].black.player for n in range(400))
    assert set(blacks) == {"alice", "bob"}
    assert 140 < blacks["alice"] < 260


def test_same_seed_gives_same_colours():
    seeks = [seek(n, f"p{n}") for n in range(10)]
    assert pair_seeks(seeks, random.Random(7)) == pair_seeks(list(reversed(seeks)), random.Random(7))


def test_draw_colours_refuses_one_player_twice():
    try:
        draw_colours(seek(1, "alice"), seek(2, "alice"), random.Random(0))
    except ValueError:
        pass
    else:
        raise AssertionError("two seeks of one player were paired")


def test_pool_ids_are_checked_by_shape():
    assert all(is_pool_id(pool) for pool in POOLS)
    assert not is_pool_id("x" * 33)
    assert not is_pool_id("un timed")
    assert not is_pool_id("{untimed}")


def test_seek_json_reads_back():
    original = Seek(id="abc", player="p", name="Zoë \"Z\"", pool="untimed", channel="specific.x!y", since=42)
    assert Seek.from_json(original.to_json(), since=42) == original


@settings(max_examples=300, deadline=None)
@given(
    players=st.lists(st.integers(min_value=0, max_value=6), max_size=40),
    arrivals=st.lists(st.integers(min_value=0, max_value=20), max_size=40),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_any_pool_pairs_each_seek_at_most_once_never_with_itself_and_leaves_one_player(players, arrivals, seed):
    seeks = [seek(n, f"p{player}", since=arrivals[n] if n < len(arrivals) else n)
             for n, player in enumerate(players)]
    pairings = pair_seeks(seeks, random.Random(seed))
    used = Counter(s.id for p in pairings for s in p)
    assert all(count == 1 for count in used.values())
    assert all(p.black.player != p.white.player for p in pairings)
    left = [s for s in seeks if s.id not in used]
    # Nobody waits who could play now: whatever is left belongs to one player.
    assert len({s.player for s in left}) <= 1
    # With as many players as seeks, only the odd one waits.
    if len(set(players)) == len(players):
        assert len(left) == len(seeks) % 2


def test_every_pool_starts_games_in_a_valid_time_control():
    from game.clock import TimeControl

    for pool_id, pool in POOLS.items():
        assert pool.id == pool_id and is_pool_id(pool_id)
        assert str(TimeControl.parse(pool.time_control)) == pool.time_control
