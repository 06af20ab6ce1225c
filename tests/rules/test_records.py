"""Records of games played elsewhere (docs/rules.md, "Records from elsewhere"): over the board a
repetition or the forty-move count is claimed, so ``replay`` and the PDN reader play on past
the draw the site declares by itself, say at which ply the site would have, and still refuse
illegal moves and unreadable move text with their reason."""

import io
import subprocess
import sys

import pytest

from game.rules import FORTY_MOVE_PLIES, Game, GameOverError, Position, Termination, read_games
from game.rules.cli import main, replay_game
from game.rules.pdn import replay

from .helpers import DATA
from .test_game import FORTY_START, forty_move_plies

REPO = DATA.parent.parent
LONDON = DATA / "london1992.pdn"


def london_games():
    with open(LONDON, encoding="utf-8", newline="") as handle:
        return list(read_games(handle))


def test_chinook_v_tinsley_london_1992_replays_past_the_repetition():
    first = london_games()[0]
    assert first.tags["Black"] == "Chinook" and first.tags["Event"] == "London 1992, game 1"
    # The site's own rule ends the game at the third occurrence: the record cannot go on.
    site = Game()
    try:
        for text in first.moves:
            site.play(text)
    except GameOverError:
        pass
    assert site.outcome.termination is Termination.REPETITION and site.ply == 73
    done = replay(first)
    assert done.ok and done.record.ply == len(first.moves) == 103
    ply, outcome = done.site_draw
    assert (ply, outcome.termination) == (73, Termination.REPETITION)
    assert done.move_number(73) == (37, "Black") and str(done.record.moves[72]) == "28-32"
    assert done.record.outcome is None and replay_game(first) is None


def test_every_london_game_replays_and_two_go_past_a_repetition():
    games = london_games()
    done = [replay(game) for game in games]
    assert [d.ok for d in done] == [True] * 4
    assert [d.site_draw[0] if d.site_draw else None for d in done] == [73, 75, 80, None]
    assert [d.record.ply for d in done] == [103, 109, 80, 51]   # game 7 ends on its third occurrence


def test_cli_replays_them_with_the_note_and_exit_zero():
    proc = subprocess.run([sys.executable, "-m", "game.rules", "replay", str(LONDON)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[-1] == "4 games, 4 replayed, 0 rejected; 2 played on past a draw the site would have declared"
    assert lines[0] == (
        f"{LONDON}: game 1 (line 1; Event \"London 1992, game 1\", Black \"Chinook\", White \"M Tinsley\", "
        "Result \"1/2-1/2\"): the site would have declared a draw by threefold repetition after ply 73 "
        "(move 37, Black, '28-32'); played on, as over the board the draw is claimed")
    assert "game 2 " in lines[1] and "after ply 75 (move 38, Black, '17-14')" in lines[1]
    assert len(lines) == 3 and "rejected at" not in proc.stdout


def test_illegal_move_after_the_repetition_is_still_refused(tmp_path):
    text = LONDON.read_text(encoding="utf-8").split("\n\n")[0].replace("41. 28-32 19x23", "41. 28-32 19-26")
    failure = replay_game(next(read_games(io.StringIO(text))))
    assert failure["ply"] == 82 and failure["move"] == "19-26" and failure["side"] == "White"
    assert failure["reason"].startswith("IllegalMoveError: ")
    bad = tmp_path / "bad.pdn"
    bad.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(bad)], out, err) == 1
    report = out.getvalue().splitlines()
    assert "after ply 73" in report[0]                             # the note, and then the refusal
    assert "rejected at ply 82 (move 41, White) '19-26'" in report[1] and "IllegalMoveError" in report[1]
    assert report[-1] == "1 games, 0 replayed, 1 rejected; 1 played on past a draw the site would have declared"


def test_unreadable_move_text_is_still_refused():
    game = next(read_games(io.StringIO("1. 11-15 23-19 2. 8-11 22-17 3. 9-1\uff14 *")))
    failure = replay_game(game)
    assert failure["ply"] == 5 and "MalformedMoveError" in failure["reason"]


def test_forty_move_count_is_claimed_in_a_record_from_elsewhere():
    """The forty-move fixture of test_game.py: the site draws at the 80th ply, a record from
    elsewhere plays the capture that follows and notes ply 80."""
    plies = forty_move_plies()[:78] + ["25-21", "30-25", "21x30"]
    site = Game(Position.from_fen(FORTY_START))
    with pytest.raises(GameOverError):
        for text in plies:
            site.play(text)
    assert site.ply == FORTY_MOVE_PLIES and site.outcome.termination is Termination.FORTY_MOVES
    record = Game(Position.from_fen(FORTY_START), automatic_draws=False)
    for text in plies:
        record.play(text)
    assert record.ply == 81 and record.outcome is None and record.no_progress_plies == 0
    assert record.site_draw == (FORTY_MOVE_PLIES, site.outcome)
    pdn = f'[FEN "{FORTY_START}"]\n1. ' + " ".join(plies) + " *\n"
    done = replay(next(read_games(io.StringIO(pdn))))
    assert done.ok and done.site_draw == (80, site.outcome) and done.move_number(80) == (40, "White")


def test_a_win_still_ends_a_record_from_elsewhere():
    game = next(read_games(io.StringIO('[FEN "W:W18:B14"]\n1... 18x9 2. 1-5 *')))
    failure = replay(game).rejection
    assert failure["ply"] == 2 and failure["reason"].startswith("GameOverError: the game is over (Black has no pieces")
