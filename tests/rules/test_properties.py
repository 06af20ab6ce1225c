"""Property tests (Hypothesis) of the rules: notation, move shape, capture and draw-counter invariants."""

import io
import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from game.rules import (
    FORTY_MOVE_PLIES,
    AmbiguousMoveError,
    Color,
    Game,
    InvalidFenError,
    Position,
    Termination,
    perft,
    read_games,
)
from game.rules.bitboard import coordinates, index_at
from game.rules.cli import replay_game

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BLACK_CROWN = {29, 30, 31, 32}
WHITE_CROWN = {1, 2, 3, 4}


def row(square):
    return coordinates(square - 1)[0]


@st.composite
def setups(draw, king_weight=1):
    """Any legal position: each square empty or holding a man or king of either side."""
    cells = draw(st.lists(st.sampled_from("....bbwwBW" + "BW" * (king_weight - 1)), min_size=32, max_size=32))
    board = {}
    for square, letter in enumerate(cells, start=1):
        if letter == ".":
            continue
        if letter == "b" and square in BLACK_CROWN:
            letter = "B"
        if letter == "w" and square in WHITE_CROWN:
            letter = "W"
        board[square] = letter
    return Position.from_board(board, draw(st.sampled_from([Color.BLACK, Color.WHITE])))


@st.composite
def reachable(draw):
    """A position reached from the start by random legal moves."""
    position = Position.initial()
    for choice in draw(st.lists(st.integers(min_value=0, max_value=1000), max_size=60)):
        moves = position.legal_moves()
        if not moves:
            break
        position = position.play(moves[choice % len(moves)])
    return position


positions = st.one_of(setups(), reachable(), setups(king_weight=4))


@SETTINGS
@given(positions)
def test_fen_round_trip(position):
    assert Position.from_fen(position.fen()) == position
    assert Position.from_fen(position.fen()).fen() == position.fen()
    assert Position.from_board(position.board(), position.turn) == position
    assert eval(repr(position), {"Position": Position}) == position


# Digits and spaces Python's \d, int() or str.strip() would take: fullwidth, Arabic-Indic, Devanagari,
# mathematical digits; no-break, em, ideographic spaces, line separator, next line, and \x1c-\x1f.
NON_ASCII_DIGITS_AND_SPACES = "\uff11\uff12\u0661\u0662\u0967\U0001d7cf\xa0\u2003\u3000\u2028\x85\x1c\x1f"


@SETTINGS
@given(positions, st.data())
def test_fen_with_a_non_ascii_character_anywhere_is_refused(position, data):
    fen = position.fen()
    at = data.draw(st.integers(min_value=0, max_value=len(fen)))
    char = data.draw(st.one_of(st.sampled_from(NON_ASCII_DIGITS_AND_SPACES),
                               st.characters(min_codepoint=0x80, exclude_categories=("Cs",))))
    try:
        Position.from_fen(fen[:at] + char + fen[at:])
    except InvalidFenError:
        pass
    else:
        raise AssertionError(f"accepted {fen[:at] + char + fen[at:]!r}")


# Tokens, move numbers and tags, among them non-ASCII digits and spaces.
PDN_CHARACTERS = st.one_of(st.characters(exclude_categories=("Cs",)),
                           st.sampled_from(' 0123456789.-x:$[]"{}();%!?\n\t' + NON_ASCII_DIGITS_AND_SPACES))


@SETTINGS
@given(st.text(alphabet=PDN_CHARACTERS))
def test_pdn_reader_and_replay_never_crash(text):
    for game in read_games(io.StringIO(text)):
        replay_game(game)  # None, or a report of the first move or tag refused: never an exception


@SETTINGS
@given(positions)
def test_notation_round_trip(position):
    moves = position.legal_moves()
    for move in moves:
        assert position.parse_move(str(move)) == move
        short = f"{move.start}{'x' if move.is_capture else '-'}{move.end}"
        same_ends = [m for m in moves if (m.start, m.end) == (move.start, move.end)]
        if len(same_ends) == 1:
            assert position.parse_move(short) == move
        else:
            try:
                position.parse_move(short)
            except AmbiguousMoveError as error:
                assert move in error.candidates
            else:
                raise AssertionError(f"{short} should be ambiguous in {position.fen()}")


@SETTINGS
@given(positions)
def test_capture_is_compulsory_and_counts_agree(position):
    moves = position.legal_moves()
    if any(move.is_capture for move in moves):
        assert all(move.is_capture for move in moves)
        assert position.is_capture_required()
    assert perft(position, 1) == len(moves) == len(set(moves))
    assert position.has_legal_move() == bool(moves)


@SETTINGS
@given(positions)
def test_no_piece_jumped_twice(position):
    for move in position.legal_moves():
        assert len(set(move.captures)) == len(move.captures)
        assert len(move.path) == len(move.captures) + 1 if move.is_capture else len(move.path) == 2


@SETTINGS
@given(positions)
def test_captured_pieces_gone_and_nothing_else_changed(position):
    before = position.board()
    for move in position.legal_moves():
        after = position.play(move).board()
        piece = before[move.start]
        for square in move.captures:
            assert before[square].lower() != piece.lower()
            assert square not in after
        expected = dict(before)
        del expected[move.start]
        for square in move.captures:
            del expected[square]
        expected[move.end] = piece.upper() if move.crowns else piece
        assert after == expected


@SETTINGS
@given(positions)
def test_men_never_move_backward(position):
    board = position.board()
    for move in position.legal_moves():
        if board[move.start].isupper():
            continue
        rows = [row(square) for square in move.path]
        step = 1 if position.turn is Color.BLACK else -1
        assert all(b - a == step * (2 if move.is_capture else 1) for a, b in itertools.pairwise(rows))


@SETTINGS
@given(positions)
def test_crowning_ends_a_capture(position):
    board = position.board()
    crown_row = BLACK_CROWN if position.turn is Color.BLACK else WHITE_CROWN
    for move in position.legal_moves():
        is_man = board[move.start].islower()
        assert move.crowns == (is_man and move.end in crown_row)
        if is_man:
            assert not crown_row & set(move.path[:-1])


@SETTINGS
@given(positions)
def test_captures_are_complete(position):
    board = position.board()
    mine = board.get
    for move in position.legal_moves():
        if not move.is_capture or move.crowns:
            continue
        piece = board[move.start]
        is_king = piece.isupper()
        taken = set(move.captures)
        r, c = coordinates(move.end - 1)
        for dr in (-1, 1):
            if not is_king and dr != (1 if position.turn is Color.BLACK else -1):
                continue
            for dc in (-1, 1):
                over = _square_at(r + dr, c + dc)
                land = _square_at(r + 2 * dr, c + 2 * dc)
                if over is None or land is None or over in taken:
                    continue
                enemy = mine(over) and mine(over).lower() != piece.lower()
                empty = land not in board or land == move.start
                assert not (enemy and empty), f"{move} could go on in {position.fen()}"


def _square_at(r, c):
    index = index_at(r, c)
    return None if index < 0 else index + 1


@SETTINGS
@given(positions)
def test_side_to_move_alternates(position):
    for move in position.legal_moves():
        assert position.play(move).turn is position.turn.opponent


@SETTINGS
@given(setups(king_weight=6), st.lists(st.integers(min_value=0, max_value=1000), min_size=1, max_size=120))
def test_draw_counters_follow_rules(start, choices):
    game = Game(start)
    seen = {start: 1}
    for choice in choices:
        if game.outcome is not None:
            break
        before = game.position
        moves = game.legal_moves()
        move = moves[choice % len(moves)]
        counter = game.no_progress_plies
        was_man = before.board()[move.start].islower()
        game.play(move)
        position = game.position
        seen[position] = seen.get(position, 0) + 1
        expected = 0 if move.is_capture or was_man else counter + 1
        assert game.no_progress_plies == expected
        assert game.repetition_count == seen[position]
        outcome = game.outcome
        if not position.legal_moves():
            assert outcome.termination in (Termination.NO_PIECES, Termination.NO_MOVES)
            assert outcome.winner is before.turn
        elif seen[position] >= 3:
            assert outcome.termination is Termination.REPETITION
        elif expected >= FORTY_MOVE_PLIES:
            assert outcome.termination is Termination.FORTY_MOVES
        else:
            assert outcome is None
