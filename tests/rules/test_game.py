"""The game record and the end of the game (docs/rules.md, "Winning" and "Draws")."""

import pytest

from game.rules import (
    FORTY_MOVE_PLIES,
    Color,
    Game,
    GameOverError,
    IllegalMoveError,
    Outcome,
    Position,
    RulesError,
    Termination,
)

# Forty-move fixture. White men on 18 and 22 stay put. Black's king toggles
# 29-25 / 25-29 while White's king walks this 20-square cycle, so no position
# occurs three times. White's 39th move leaves the cycle for 30 and the 40th,
# 30-25, shuts Black's king in on 29: the 80th ply without a capture or man move.
CYCLE = [19, 15, 10, 14, 9, 5, 1, 6, 2, 7, 3, 8, 11, 16, 20, 24, 27, 31, 26, 23]
FORTY_START = "B:W18,K19,22:BK29"


def forty_move_plies():
    """The 80 plies of the forty-move fixture (the last one traps Black)."""
    plies = []
    for k in range(1, 41):
        plies.append("29-25" if k % 2 else "25-29")
        if k <= 38:
            plies.append(f"{CYCLE[(k - 1) % 20]}-{CYCLE[k % 20]}")
        elif k == 39:
            plies.append("26-30")
        else:
            plies.append("30-25")
    return plies


def play_all(game, plies):
    for ply in plies:
        game.play(ply)
    return game


def test_new_game_starts_undecided():
    game = Game()
    assert game.position == Position.initial()
    assert (game.ply, game.moves, game.outcome, game.no_progress_plies, game.repetition_count) == (0, [], None, 0, 1)


def test_play_accepts_text_and_moves_and_returns_move():
    game = Game()
    move = game.play("11-15")
    assert str(move) == "11-15"
    assert game.play(game.position.parse_move("23-19")) == game.moves[-1]
    assert game.ply == 2 and game.position.turn is Color.BLACK


def test_from_moves_replays_with_start_fen():
    game = Game.from_moves(["26x17x10"], start_fen="W:W26:B14,22")
    assert game.position.fen() == "B:W10:B"
    assert game.outcome == Outcome(Termination.NO_PIECES, Color.WHITE)
    assert game.outcome.result == "0-1"
    assert game.outcome.reason == "Black has no pieces left"


def test_from_moves_raises_on_illegal_move():
    with pytest.raises(IllegalMoveError):
        Game.from_moves(["11-15", "11-15"])


def test_no_legal_move_loses():
    game = Game(Position.from_fen("W:WK19,27:B28,K32"))
    game.play("19-23")
    assert game.outcome == Outcome(Termination.NO_MOVES, Color.WHITE)
    assert game.outcome.reason == "Black has no legal move"


def test_start_position_already_lost_is_decided():
    game = Game(Position.from_fen("B:WK23,27:B28,K32"))
    assert game.outcome == Outcome(Termination.NO_MOVES, Color.WHITE)
    assert game.legal_moves() == []


def test_decided_game_refuses_moves():
    game = Game.from_moves(["26x17x10"], start_fen="W:W26:B14,22")
    with pytest.raises(GameOverError):
        game.play("10-6")
    with pytest.raises(GameOverError):
        game.end(Outcome(Termination.RESIGNATION, Color.BLACK))


def test_forty_move_fixture_is_king_moves_only():
    game = Game(Position.from_fen(FORTY_START))
    for count, ply in enumerate(forty_move_plies()[:79], start=1):
        move = game.play(ply)
        assert not move.is_capture
        assert game.no_progress_plies == count
        assert game.repetition_count <= 2


def test_forty_moves_79_plies_not_drawn():
    game = play_all(Game(Position.from_fen(FORTY_START)), forty_move_plies()[:79])
    assert game.no_progress_plies == FORTY_MOVE_PLIES - 1 == 79
    assert game.outcome is None


def test_forty_moves_80_plies_drawn():
    plies = forty_move_plies()[:78] + ["25-21", "30-25"]
    game = play_all(Game(Position.from_fen(FORTY_START)), plies)
    assert game.no_progress_plies == 80
    assert game.position.has_legal_move()
    assert game.outcome == Outcome(Termination.FORTY_MOVES, None)
    assert game.outcome.result == "1/2-1/2"
    with pytest.raises(GameOverError):
        game.play("21x30")


def test_forty_moves_win_on_80th_ply_stands():
    game = play_all(Game(Position.from_fen(FORTY_START)), forty_move_plies())
    assert game.no_progress_plies == 80
    assert game.outcome == Outcome(Termination.NO_MOVES, Color.WHITE)
    assert game.outcome.result == "0-1"


def test_man_move_resets_no_progress_count():
    game = Game(Position.from_fen("B:W32,K19:B1,K29"))
    game.play("29-25")
    game.play("19-15")
    assert game.no_progress_plies == 2
    game.play("1-5")
    assert game.no_progress_plies == 0
    game.play("32-27")
    assert game.no_progress_plies == 0
    game.play("25-21")
    assert game.no_progress_plies == 1


def test_capture_resets_no_progress_count():
    game = Game(Position.from_fen("B:WK19,K31:BK29,K11"))
    game.play("11-15")
    assert game.no_progress_plies == 1
    game.play("19x10")
    assert game.no_progress_plies == 0


def test_crowning_move_resets_no_progress_count():
    game = Game(Position.from_fen("B:WK19:B28,K1"))
    game.play("1-5")
    game.play("19-15")
    assert game.no_progress_plies == 2
    game.play("28-32")
    assert game.no_progress_plies == 0 and game.position.board()[32] == "B"


def test_threefold_repetition_third_occurrence_draws():
    game = Game(Position.from_fen("B:WK32:BK1"))
    cycle = ["1-5", "32-27", "5-1", "27-32"]
    play_all(game, cycle)
    assert game.repetition_count == 2
    assert game.outcome is None
    play_all(game, cycle[:3])
    assert game.repetition_count == 2 and game.outcome is None
    game.play(cycle[3])
    assert game.repetition_count == 3
    assert game.outcome == Outcome(Termination.REPETITION, None)
    assert game.ply == 8


def test_repetition_needs_same_side_to_move():
    # The same pieces with the other side to move is another position.
    a = Position.from_fen("B:WK32:BK1")
    b = Position.from_fen("W:WK32:BK1")
    assert a != b


@pytest.mark.parametrize(
    "termination, winner, result",
    [
        (Termination.RESIGNATION, Color.WHITE, "0-1"),
        (Termination.TIME_FORFEIT, Color.BLACK, "1-0"),
        (Termination.AGREEMENT, None, "1/2-1/2"),
        (Termination.ABORTED, None, "*"),
    ],
)
def test_end_records_outside_decisions(termination, winner, result):
    game = Game()
    game.play("11-15")
    game.end(Outcome(termination, winner))
    assert game.outcome.result == result
    assert game.outcome.reason
    with pytest.raises(GameOverError):
        game.play("23-19")


def test_end_refuses_automatic_terminations():
    with pytest.raises(RulesError):
        Game().end(Outcome(Termination.REPETITION, None))


def test_outcome_values_and_reasons():
    assert Termination("no_pieces") is Termination.NO_PIECES
    assert {t.value for t in Termination} == {
        "no_pieces", "no_moves", "repetition", "forty_moves", "resignation", "agreement", "time_forfeit", "aborted",
        "abandoned"}
    assert Outcome(Termination.ABANDONED, Color.WHITE).result == "0-1"
    assert Outcome(Termination.ABANDONED, None).result == "1/2-1/2"
    assert Outcome(Termination.RESIGNATION, Color.BLACK).reason == "White resigned"
    assert Outcome("no_moves", "W") == Outcome(Termination.NO_MOVES, Color.WHITE)
    with pytest.raises(ValueError):
        Outcome(Termination.NO_MOVES, None)
    with pytest.raises(ValueError):
        Outcome(Termination.AGREEMENT, Color.BLACK)


def test_crowning_ends_a_capture():
    position = Position.from_fen("B:W11,18,26,27:B8")
    (move,) = position.legal_moves()
    assert str(move) == "8x15x22x31" and move.crowns
    after = position.play(move)
    assert after.board() == {27: "w", 31: "B"}
    # A king on 31 could jump 27, but the move has ended; now it is White's turn.
    assert after.turn is Color.WHITE
