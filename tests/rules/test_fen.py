"""Reading and writing positions as PDN FEN (docs/rules.md, "FEN")."""

import pickle

import pytest

from game.rules import INITIAL_FEN, Color, InvalidFenError, Position, RulesError


def test_initial_fen_matches_rules_page():
    assert Position.initial().fen() == INITIAL_FEN
    assert Position.from_fen(INITIAL_FEN) == Position.initial()


def test_fen_is_canonical_order_white_then_black_ascending():
    position = Position.from_fen("B:BK3,2,1:W30,K22,21")
    assert position.fen() == "B:W21,K22,30:B1,2,K3"


def test_fen_accepts_ranges_and_surrounding_spaces():
    assert Position.from_fen("  B:W21-32:B1-12 \n") == Position.initial()


def test_fen_accepts_ascii_whitespace_around_it_and_around_squares():
    assert Position.from_fen("\t\v\fB:W21, 22 ,K30-31\r:B 1\n").fen() == "B:W21,22,K30,K31:B1"


# Only ASCII digits and ASCII whitespace (space, tab, CR, LF, VT, FF) count: Python's \d, int() and
# str.strip() would take fullwidth, Arabic-Indic or mathematical digits and Unicode spaces (and the
# ASCII separators \x1c-\x1f) as well.
@pytest.mark.parametrize("fen", [
    "B:W\uff12\uff11:B1",              # fullwidth 21
    "B:W\u0662\u0661:B1",              # Arabic-Indic 21
    "B:W2\U0001d7cf:B1",                # 2 and a mathematical 1
    "B:WK\u0968\u0967:B1",             # Devanagari 21, a king
    "B:W21-\uff12\uff12:B1",           # a range ending in a fullwidth 22
    "B:W21:B\u00b9",                    # a superscript 1
    "\xa0B:W21:B1",                     # no-break spaces
    "B:W21:B1\xa0",
    "B:W21,\xa022:B1",
    "B:W21\u2003:B1",                   # an em space
    "\u3000B:W21:B1",                   # an ideographic space
    "B:W21:B1\u2028",                   # a line separator
    "B:W21:B1\x85",                     # a next-line control
    "B:W21:B1\x1c",                     # an ASCII file separator (not whitespace here)
])
def test_fen_refuses_non_ascii_digits_and_whitespace(fen):
    with pytest.raises(InvalidFenError) as info:
        Position.from_fen(fen)
    assert "stray characters" in str(info.value) or "side to move" in str(info.value)


def test_fen_with_empty_side_reads():
    position = Position.from_fen("B:W:BK32")
    assert position.board() == {32: "B"}
    assert position.fen() == "B:W:BK32"


def test_repr_reads_back():
    position = Position.from_fen("W:WK1,6:B2,5,K9")
    assert repr(position) == "Position.from_fen('W:WK1,6:B2,5,K9')"
    assert eval(repr(position), {"Position": Position}) == position


def test_board_letters():
    assert Position.from_fen("B:W21,K30:B1,K3").board() == {1: "b", 3: "B", 21: "w", 30: "W"}


def test_position_is_hashable_and_immutable():
    a = Position.from_fen("B:W21:B1")
    b = Position.from_fen("B:W21:B1")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != Position.from_fen("W:W21:B1")
    with pytest.raises(AttributeError):
        a.turn = Color.WHITE
    assert pickle.loads(pickle.dumps(a)) == a


@pytest.mark.parametrize(
    "fen, words",
    [
        ("B:W21,21:B1", "repeated square"),
        ("B:W21:B1,5,1", "repeated square"),
        ("B:W33:B1", "outside 1-32"),
        ("B:W0:B1", "outside 1-32"),
        ("B:W21:B1-40", "outside 1-32"),
        ("B:W21:B21", "both sides"),
        ("B:WK5:B5", "both sides"),
        ("B:W21:B1;", "stray characters"),
        ("B:W21:B1:", "stray characters"),
        ("B:W21,x:B1", "stray characters"),
        ("B:W21:B1 2", "stray characters"),
        ("B:W21,:B1", "stray characters"),
        ("B:W21:Q1", "stray characters"),
        ("B:W21:W22", "stray characters"),
        ("B:W21", "stray characters"),
        ("B:W2:B1", "crowning row"),
        ("B:W21:B30", "crowning row"),
        ("X:W21:B1", "side to move"),
        ("b:W21:B1", "side to move"),
        (":W21:B1", "side to move"),
        ("", "empty"),
    ],
)
def test_invalid_fen_refused_with_reason(fen, words):
    with pytest.raises(InvalidFenError) as info:
        Position.from_fen(fen)
    assert words in str(info.value)
    assert isinstance(info.value, RulesError) and isinstance(info.value, ValueError)


def test_kings_on_crowning_rows_are_valid():
    position = Position.from_fen("W:WK2:BK30")
    assert position.board() == {2: "W", 30: "B"}


def test_from_board_round_trips():
    position = Position.from_fen("W:W21,K30:B1,K3")
    assert Position.from_board(position.board(), position.turn) == position
