"""The 3-move ballots (game/rules/ballots.py, docs/rules.md "3-move ballots"): every entry is
three legal plies from the start, Black first; the numbering, the barred flags and the counts
are the source's; choices of a ballot are read or refused with their reason."""

import random

import pytest

from game.rules import Color, Game, Position, game_to_pdn, read_games
from game.rules.ballots import (
    BALLOT_PLIES,
    BALLOTS,
    BallotError,
    approved,
    ballot,
    choose,
    opening_plies,
    random_ballot,
)

#: The barred openings of the source list (CheckerBoard's ACF table), by number.
BARRED = [3, 13, 26, 35, 44, 45, 48, 52, 77, 88, 94, 109, 114, 137, 145, 156, 168, 171]


def squares(move_text):
    return tuple(int(s) for s in move_text.replace("x", "-").split("-"))


def test_174_openings_numbered_1_to_174_in_order():
    assert len(BALLOTS) == 174
    assert [b.number for b in BALLOTS] == list(range(1, 175))
    assert all(ballot(n) is BALLOTS[n - 1] for n in range(1, 175))


def test_barred_flags_and_counts():
    assert [b.number for b in BALLOTS if b.barred] == BARRED
    assert len(approved()) == 156
    assert all(b.approved for b in approved()) and not any(ballot(n).approved for n in BARRED)


@pytest.mark.parametrize("entry", BALLOTS, ids=lambda b: str(b.number))
def test_every_ballot_is_three_legal_plies_from_the_start_black_first(entry):
    position = Position.initial()
    assert position.turn is Color.BLACK
    for index, text in enumerate(entry.moves):
        assert position.turn is (Color.BLACK if index % 2 == 0 else Color.WHITE)
        move = position.parse_move(text)
        assert str(move) == text                     # written in full form, as the site writes it
        assert position.piece_at(move.start).upper() == position.turn.value   # the side to move's own piece
        position = position.play(move)
    assert position.turn is Color.WHITE
    record = entry.record()
    assert record.ply == BALLOT_PLIES and record.position == position and record.outcome is None
    assert record.no_progress_plies == 0             # three man moves: the forty-move count starts at 0


def test_no_two_ballots_alike():
    assert len({b.moves for b in BALLOTS}) == 174
    assert len({b.record().position for b in BALLOTS}) == 174   # nor two that lead to one position


def test_numbering_follows_the_acf_order():
    """The ACF numbers its openings by Black's first move, White's reply, Black's second move,
    each by its squares: the list read in that order is the list by number."""
    assert sorted(BALLOTS, key=lambda b: [squares(m) for m in b.moves]) == list(BALLOTS)
    assert ballot(1).text == "9-13 21-17 5-9" and ballot(174).text == "12-16 24-20 10-15"
    assert ballot(68).text == "10-14 22-18 12-16"    # the "White Doctor" of Chinook v Tinsley, 1992


@pytest.mark.parametrize("entry", BALLOTS[::29], ids=lambda b: str(b.number))
def test_ballot_recorded_in_pdn_reads_back(entry):
    record = entry.record()
    text = game_to_pdn(record, {"Ballot": entry.pdn_tag()})
    assert f'[Ballot "ACF {entry.number}: {entry.text}"]' in text
    assert f"1. {entry.moves[0]} {entry.moves[1]} 2. {entry.moves[2]} *" in text
    back = next(read_games(__import__("io").StringIO(text)))
    assert back.moves == list(entry.moves) and back.tags["Ballot"] == entry.pdn_tag()
    assert Game.from_moves(back.moves).position == record.position


def test_random_ballot_draws_only_approved_ones_and_all_of_them():
    rng = random.Random(7)
    drawn = {random_ballot(rng).number for _ in range(5000)}
    assert drawn == {b.number for b in approved()}
    assert choose("random", random.Random(1)).approved


def test_choose_reads_numbers_and_free_start():
    assert choose(None) is None and choose("free") is None
    assert choose(68) is ballot(68) and choose("68") is ballot(68) and choose(" 068 ") is ballot(68)
    assert choose("1").number == 1 and choose(174).number == 174


@pytest.mark.parametrize("choice, code, words", [
    (0, "unknown", "numbered 1 to 174"), (175, "unknown", "numbered 1 to 174"), ("999", "unknown", "numbered"),
    (-3, "unknown", "numbered"), ("3", "barred", "barred"), (171, "barred", "12-16 23-19 16x23"),
    ("abc", "malformed", "not a ballot number"), ("", "malformed", "not a ballot number"),
    ("6 8", "malformed", "not a ballot number"), ("1e2", "malformed", "not a ballot number"),
    ("\uff16\uff18", "malformed", "not a ballot number"), ("68\n", "malformed", "not a ballot number"),
    (True, "malformed", "not a ballot number"), (6.8, "malformed", "not a ballot number"),
    ("1234", "malformed", "not a ballot number"), (["68"], "malformed", "not a ballot number"),
])
def test_choose_refuses_bad_input_with_its_reason(choice, code, words):
    with pytest.raises(BallotError) as caught:
        choose(choice)
    assert caught.value.code == code and words in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_opening_plies():
    assert opening_plies(None) == 0 and opening_plies(68) == 3
