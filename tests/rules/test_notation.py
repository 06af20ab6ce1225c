"""Move notation both ways: parse_move and str(move) (docs/rules.md, "Notation in" and "Notation out")."""

import pytest

from game.rules import (
    AmbiguousMoveError,
    IllegalMoveError,
    MalformedMoveError,
    Move,
    Position,
    RulesError,
)

# Black's man on 6 takes 9 and 17 (6x13x22) or 10 and 18 (6x15x22): same start and end.
AMBIGUOUS = "B:W9,10,17,18:B6"


def test_full_form_parses():
    position = Position.from_fen("W:W26:B16,22,23")
    move = position.parse_move("26x19x12")
    assert move.path == (26, 19, 12) and move.captures == (23, 16) and move.is_capture
    assert str(move) == "26x19x12"


def test_short_form_parses_when_unique():
    position = Position.from_fen("B:W8,16:B4")
    assert str(position.parse_move("4x20")) == "4x11x20"


@pytest.mark.parametrize("text", ["11x15", "11:15", " 11 - 15 ", "11X15"])
def test_loose_separators_for_quiet_move_accepted(text):
    assert str(Position.initial().parse_move(text)) == "11-15"


@pytest.mark.parametrize("text", ["11-15\n", "\t11x15\r\n", "11 :15"])
def test_ascii_whitespace_around_squares_accepted(text):
    assert str(Position.initial().parse_move(text)) == "11-15"


def test_leading_zero_square_accepted():
    assert str(Position.initial().parse_move("09-13")) == "9-13"


@pytest.mark.parametrize("text", ["\u0661\u0661-\u0661\u0665", "\uff11\uff11-\uff11\uff15",
                                  "\U0001d7cf\U0001d7cf-\U0001d7cf\U0001d7d3", "1\u0661-15", "11\xa0-15",
                                  "11-15\xa0", "\u200911-15", "11-15\u2028"])
def test_non_ascii_digits_and_whitespace_are_malformed(text):
    with pytest.raises(MalformedMoveError):
        Position.initial().parse_move(text)


@pytest.mark.parametrize("text", ["4-11-20", "4-20", "4x11-20"])
def test_loose_separators_for_capture_accepted(text):
    assert str(Position.from_fen("B:W8,16:B4").parse_move(text)) == "4x11x20"


@pytest.mark.parametrize("text", ["", "11", "11-", "-15", "e3-f4", "11--15", "11-15-", "1 1-15", "11-15x", "a",
                                  "111-15", "11-33", "0-4", None, 1115])
def test_malformed_move_raises_malformed(text):
    with pytest.raises(MalformedMoveError):
        Position.initial().parse_move(text)


@pytest.mark.parametrize("text", ["11-14", "21-17", "11x18", "15-19", "9-13-17"])
def test_illegal_move_raises_illegal(text):
    with pytest.raises(IllegalMoveError) as info:
        Position.initial().parse_move(text)
    assert "legal moves: 9-13" in str(info.value)


def test_quiet_move_refused_when_capture_is_compulsory():
    with pytest.raises(IllegalMoveError):
        Position.from_fen("B:W8:B4,12").parse_move("12-16")


def test_partial_capture_refused():
    with pytest.raises(IllegalMoveError):
        Position.from_fen("B:W8,16:B4").parse_move("4x11")


def test_ambiguous_short_form_raises_ambiguous_with_candidates():
    position = Position.from_fen(AMBIGUOUS)
    with pytest.raises(AmbiguousMoveError) as info:
        position.parse_move("6x22")
    assert {str(move) for move in info.value.candidates} == {"6x13x22", "6x15x22"}
    assert "6x13x22" in str(info.value) and "6x15x22" in str(info.value)


def test_full_form_resolves_ambiguity():
    position = Position.from_fen(AMBIGUOUS)
    assert position.parse_move("6x13x22").captures == (9, 17)
    assert position.parse_move("6x15x22").captures == (10, 18)


def test_loop_short_form_is_ambiguous():
    position = Position.from_fen("B:W10,11,18,19:BK7")
    with pytest.raises(AmbiguousMoveError) as info:
        position.parse_move("7x7")
    assert len(info.value.candidates) == 2
    assert str(position.parse_move("7x14x23x7")) == "7x14x23x16x7"


def test_errors_are_distinct_rules_errors():
    kinds = {MalformedMoveError, IllegalMoveError, AmbiguousMoveError}
    assert len(kinds) == 3
    for kind in kinds:
        assert issubclass(kind, RulesError) and issubclass(kind, ValueError)
    assert not issubclass(AmbiguousMoveError, IllegalMoveError)
    assert not issubclass(IllegalMoveError, MalformedMoveError)


def test_play_refuses_move_not_in_legal_moves():
    with pytest.raises(IllegalMoveError):
        Position.initial().play(Move((11, 14)))
    with pytest.raises(IllegalMoveError):
        Position.initial().play("11-15")


def test_play_accepts_equal_move_value():
    position = Position.initial()
    assert position.play(Move((11, 15))) == position.play(position.parse_move("11-15"))


def test_play_of_hand_built_move_still_crowns():
    position = Position.from_fen("B:W11:B28")
    assert position.play(Move((28, 32))).board()[32] == "B"
    assert position.legal_move(Move((28, 32))).crowns


def test_move_is_immutable_value():
    move = Position.initial().parse_move("11-15")
    assert move == Move((11, 15), ()) and hash(move) == hash(Move((11, 15)))
    assert repr(move) == "Move((11, 15), ())"
    with pytest.raises(AttributeError):
        move.path = (1, 2)
