"""PDN files: reading, replaying through the rules, writing (PDN 3.0)."""

import io
import subprocess
import sys
from pathlib import Path

import pytest

from game.rules import Game, Position, game_to_pdn, perft, read_games, write_game
from game.rules.cli import main, replay_game

from .helpers import DATA, PDN_FILES

REPO = Path(__file__).resolve().parents[2]


def read(text):
    return list(read_games(io.StringIO(text)))


@pytest.mark.parametrize("path", PDN_FILES, ids=lambda p: p.name)
def test_every_game_in_data_file_replays(path):
    with open(path, encoding="utf-8", newline="") as handle:
        games = list(read_games(handle))
    assert games
    failures = [(game.number, replay_game(game)) for game in games if replay_game(game) is not None]
    assert failures == []


def test_data_files_game_counts():
    counts = []
    for path in PDN_FILES:
        with open(path, encoding="utf-8", newline="") as handle:
            counts.append(len(list(read_games(handle))))
    assert counts == [43, 68]


def test_inferno_short_form_captures_expand():
    with open(DATA / "inferno.pdn", encoding="utf-8", newline="") as handle:
        games = list(read_games(handle))
    game = Game()
    first = games[0]
    for text in first.moves:
        game.play(text)
    assert first.tags["Event"] == "Inferno of Checkers, GAYP Game 1"
    assert first.result == "1/2-1/2"
    assert all("x" not in str(m) or str(m).count("x") == len(m.captures) for m in game.moves)


def test_cli_replay_exit_zero_and_summary():
    proc = subprocess.run(
        [sys.executable, "-m", "game.rules", "replay", *map(str, PDN_FILES)],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "111 games, 111 replayed, 0 rejected"


def test_cli_replay_reports_rejected_game_and_continues(tmp_path):
    bad = tmp_path / "bad.pdn"
    bad.write_text(
        '[Event "good one"]\n1. 11-15 23-19 *\n\n'
        '[Event "bad one"]\n[Black "alice"]\n[White "bob"]\n1. 11-15 23-19 2. 8-11 19-23 *\n\n'
        '[Event "after"]\n1. 9-13 22-18 1-0\n',
        encoding="utf-8",
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(bad)], out, err) == 1
    lines = out.getvalue().splitlines()
    assert lines[-1] == "3 games, 2 replayed, 1 rejected"
    (report,) = lines[:-1]
    assert "game 2" in report and 'Event "bad one"' in report and 'Black "alice"' in report
    assert "ply 4" in report and "'19-23'" in report
    assert "W:W19,21,22,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,9,10,11,12,15" in report
    assert "IllegalMoveError" in report


def test_cli_replay_unreadable_file_exit_two(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(tmp_path / "missing.pdn"), str(PDN_FILES[1])], out, err) == 2
    assert "missing.pdn" in err.getvalue()
    assert out.getvalue().splitlines()[-1] == "68 games, 68 replayed, 0 rejected"


def test_cli_perft_prints_count():
    out = io.StringIO()
    assert main(["perft", "4"], out) == 0
    assert out.getvalue().startswith("perft(4) = 1469")
    out = io.StringIO()
    assert main(["perft", "2", "--divide", "--fen", "W:W26:B16,22,23"], out) == 0
    lines = out.getvalue().splitlines()
    position = Position.from_fen("W:W26:B16,22,23")
    assert [line.split()[0] for line in lines[:-1]] == ["26x17", "26x19x12"]
    total = sum(int(line.split()[1]) for line in lines[:-1])
    assert lines[-1].startswith(f"perft(2) = {total} ") and total == perft(position, 2)


def test_reader_handles_comments_variations_nags_and_numbers():
    text = (
        "\ufeff[Event \"odd \\\"quoted\\\" name\"]\r\n[Site \"x\"]\r\n"
        "1. 11-15 {a comment (with parens)} 23-19 $1 2... ; line comment 8-11\r\n"
        "2. 8-11! (2. 9-14 (2. 10-14 22-17) 22-18 {in variation}) 22-17?\r\n"
        "% escaped line 9-14\r\n"
        "3.9-13 17x10 4. 7x14 1/2-1/2\r\n"
    )
    (game,) = read(text)
    assert game.tags == {"Event": 'odd "quoted" name', "Site": "x"}
    assert game.moves == ["11-15", "23-19", "8-11", "22-17", "9-13", "17x10", "7x14"]
    assert game.result == "1/2-1/2"
    assert game.start_fen is None and game.number == 1


def test_reader_fen_tag_with_or_without_setup_and_dot():
    text = (
        '[SetUp "1"]\n[FEN "W:W18:B14."]\n1... 18x9 0-1\n\n'
        '[FEN "B:W18:B14"]\n1. 14x23 1-0\n'
    )
    first, second = read(text)
    assert first.start_fen == "W:W18:B14" and first.moves == ["18x9"]
    assert second.start_fen == "B:W18:B14" and second.number == 2
    assert replay_game(first) is None and replay_game(second) is None


def test_reader_games_without_result_split_on_tags():
    text = '[Event "a"]\n1. 11-15 23-19\n[Event "b"]\n1. 9-13\n'
    first, second = read(text)
    assert (first.moves, first.result) == (["11-15", "23-19"], None)
    assert (second.tags["Event"], second.moves) == ("b", ["9-13"])


def test_reader_result_falls_back_to_tag():
    (game,) = read('[Result "0-1"]\n1. 11-15 23-19\n')
    assert game.result == "0-1"


def test_replay_reports_malformed_token():
    (game,) = read('[Event "x"]\n1. 11-15 hello 2. 8-11 *\n')
    failure = replay_game(game)
    assert failure["ply"] == 2 and failure["move"] == "hello" and "MalformedMoveError" in failure["reason"]


@pytest.mark.parametrize("number", ["\uff12.", "\u0662.", "\U0001d7d0.", "1\u0662.", "\u0662...", "\u00b2."])
def test_move_numbers_are_ascii_digits_only(number):
    (game,) = read(f'[Event "x"]\n1. 11-15 23-19 {number} 8-11 22-17 *\n')
    assert game.moves == ["11-15", "23-19", number, "8-11", "22-17"]
    failure = replay_game(game)
    assert (failure["ply"], failure["move"]) == (3, number) and "MalformedMoveError" in failure["reason"]


@pytest.mark.parametrize("nag", ["$\u0661", "$\uff11", "$\u00b9"])
def test_nags_are_ascii_digits_only(nag):
    (game,) = read(f"1. 11-15 {nag} 23-19 *\n")
    assert game.moves == ["11-15", nag, "23-19"]
    assert "MalformedMoveError" in replay_game(game)["reason"]


@pytest.mark.parametrize("space", ["\xa0", "\u2003", "\u3000", "\u2028", "\x85", "\x1c"])
def test_only_ascii_whitespace_separates_tokens(space):
    (game,) = read(f"1. 11-15{space}23-19 2. 8-11 *\n")
    assert game.moves == [f"11-15{space}23-19", "8-11"]
    failure = replay_game(game)
    assert failure["ply"] == 1 and "MalformedMoveError" in failure["reason"]


def test_ascii_whitespace_separates_tokens():
    (game,) = read("1.\t11-15\v23-19\f2. 8-11\r\n22-17 *")
    assert game.moves == ["11-15", "23-19", "8-11", "22-17"] and replay_game(game) is None


@pytest.mark.parametrize("fen", ["\xa0W:W18:B14", "W:W18:B14.\xa0", "W:W18:B14\u2003.", "W:W\uff11\uff18:B14"])
def test_fen_tag_with_non_ascii_whitespace_or_digits_is_refused(fen):
    (game,) = read(f'[FEN "{fen}"]\n1... 18x9 *\n')
    failure = replay_game(game)
    assert failure["ply"] == 0 and "InvalidFenError: bad FEN tag" in failure["reason"]


def test_fen_tag_with_ascii_whitespace_around_it_reads():
    (game,) = read('[FEN " \tW:W18:B14 . "]\n1... 18x9 *\n')
    assert game.start_fen == "W:W18:B14" and replay_game(game) is None


def test_replay_refuses_other_game_types():
    (game,) = read('[GameType "20"]\n1. 32-28 *\n')
    assert "not English draughts" in replay_game(game)["reason"]


def test_writer_output_reads_back_identically():
    game = Game.from_moves(["11-15", "24-20", "8-11", "28-24", "9-13", "22-18", "15x22", "25x18"])
    text = game_to_pdn(game, {"Event": "Club night", "Black": "alice", "White": "bob", "Date": "2024.05.01"})
    (back,) = read(text)
    assert back.moves == [str(m) for m in game.moves]
    assert back.tags["GameType"] == "21" and back.tags["Black"] == "alice" and back.result == "*"
    assert Game.from_moves(back.moves).position == game.position


def test_writer_includes_fen_and_white_first_numbering():
    game = Game(Position.from_fen("W:W26:B14,22"))
    game.play("26x17x10")
    text = game_to_pdn(game)
    assert '[SetUp "1"]' in text and '[FEN "W:W26:B14,22"]' in text
    assert text.splitlines()[-1] == "1... 26x17x10 0-1"
    (back,) = read(text)
    assert back.start_fen == "W:W26:B14,22" and back.result == "0-1"


def test_writer_wraps_long_move_text():
    with open(PDN_FILES[0], encoding="utf-8") as handle:
        record = next(read_games(handle))
    game = Game.from_moves(record.moves)
    handle = io.StringIO()
    write_game(handle, game, record.tags)
    text = handle.getvalue()
    assert all(len(line) <= 79 for line in text.splitlines())
    (back,) = read(text)
    assert back.moves == [str(m) for m in game.moves]
    assert back.tags["Event"] == record.tags["Event"]


def test_reader_loose_separators_replay():
    (game,) = read('[Event "loose"]\n1. 11x15 24-20 2. 8-11 28-24 3. 9x13 22-18 4. 15-22 25-18 *\n')
    assert game.moves[6:] == ["15-22", "25-18"]
    assert replay_game(game) is None
    assert [str(m) for m in Game.from_moves(game.moves).moves] == [
        "11-15", "24-20", "8-11", "28-24", "9-13", "22-18", "15x22", "25x18"]


def test_reader_odd_tags_and_malformed_tag_lines():
    text = (
        '[Event"no space"]\n[Black_Player "a [bracketed] name"]\n[WhiteRating ""]\n'
        '[Broken tag without quotes]\n[Site "x"]\n1. 11-15 *\n'
    )
    (game,) = read(text)
    assert game.tags == {"Event": "no space", "Black_Player": "a [bracketed] name", "WhiteRating": "", "Site": "x"}
    assert game.moves == ["11-15"]


def test_reader_setup_without_fen_and_fen_without_setup():
    first, second = read('[SetUp "1"]\n1. 11-15 *\n\n[FEN "W:W21,22:B1,2."]\n1... 21-17 *\n')
    assert first.start_fen is None and replay_game(first) is None
    assert second.start_fen == "W:W21,22:B1,2" and replay_game(second) is None


def test_reader_game_after_result_without_tags_starts_new_game():
    first, second = read("1. 11-15 23-19 1-0\n1. 9-13 22-18 0-1\n")
    assert (first.moves, first.result, second.moves, second.result) == (
        ["11-15", "23-19"], "1-0", ["9-13", "22-18"], "0-1")


def test_reader_binary_handle_and_cr_line_ends():
    data = '\ufeff[Event "cr"]\r1. 11-15 23-19\r*\r'.encode("utf-8")
    (game,) = list(read_games(io.BytesIO(data)))
    assert game.tags == {"Event": "cr"} and game.moves == ["11-15", "23-19"] and game.result == "*"


def test_replay_reports_illegal_move_precisely_and_goes_on():
    text = (
        '[Event "one"]\n1. 11-15 24-20 *\n\n'
        '[Event "two"]\n[FEN "W:W18,27:B14,1"]\n1... 18x9 2. 1-5 27-23 3. 5x14 23-16 *\n\n'
        '[Event "three"]\n1. 11-15 24-20 *\n'
    )
    games = read(text)
    assert [replay_game(game) is None for game in games] == [True, False, True]
    failure = replay_game(games[1])
    assert (failure["ply"], failure["number"], failure["side"], failure["move"]) == (5, 3, "White", "23-16")
    assert failure["fen"] == "W:W23:B14" and "IllegalMoveError" in failure["reason"]


def test_writer_output_read_back_by_pydraughts():
    pdn = pytest.importorskip("draughts.PDN")
    with open(PDN_FILES[0], encoding="utf-8") as handle:
        records = list(read_games(handle))[:10]
    for record in records:
        game = Game.from_moves(record.moves)
        tags = {name: record.tags[name] for name in ("Event", "Site", "Date", "Black", "White") if name in record.tags}
        tags["Result"] = record.result
        text = game_to_pdn(game, tags)
        (theirs,) = pdn.PDNReader(pdn_text=text).games
        (ours,) = read(text)
        assert theirs.moves == ours.moves == [str(m) for m in game.moves]
        assert theirs.tags == ours.tags
        assert theirs.game_ending == ours.result == record.result
        assert theirs.variant == "english"
