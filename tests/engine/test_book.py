"""The opening book: the shipped file, its loader, the levels that use it and the script that builds it."""

from __future__ import annotations

import dataclasses
import logging
import random
import subprocess
import sys
from pathlib import Path

import pytest

from game.engine import LEVELS, choose_move, native
from game.engine import levels as worker
from game.engine.book import (
    BOOK_PATH,
    FORMAT_LINE,
    Book,
    BookEntry,
    BookError,
    default_book,
    parse_book,
    read_book,
    reset_default_book,
)
from game.rules import INITIAL_FEN, Color, Position, ballots

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fresh_default_book():
    """The process's default book is read again in the test, and again after it."""
    reset_default_book()
    yield
    reset_default_book()


def _first_choice(chosen: ballots.Ballot) -> Position:
    """The position after the ballot ``chosen`` and any forced reply: the first with a choice of moves."""
    position = chosen.record().position
    while len(legal := position.legal_moves()) == 1:
        position = position.play(legal[0])
    return position


def _rows() -> list[list[str]]:
    return [line.split("\t") for line in BOOK_PATH.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]


def test_every_entry_of_the_shipped_book_is_a_valid_position_with_a_legal_move():
    rows = _rows()
    assert len(rows) >= 150
    for fen, move, score, depth, source, pv in rows:
        position = Position.from_fen(fen)
        assert position.fen() == fen, "keyed by the rules' own FEN"
        assert position.parse_move(move) in position.legal_moves(), (fen, move)
        assert int(depth) >= 1 and abs(int(score)) < 100_000 and source
        line = pv.split()
        assert line[0] == move
        for step in line:  # the whole line is legal, move after move
            position = position.play(position.parse_move(step))
    book = read_book(BOOK_PATH)
    assert len(book) == len(rows), "no entry of the shipped book is ignored"


def test_the_shipped_book_holds_the_free_start_and_every_approved_ballot_and_is_small():
    book = read_book(BOOK_PATH)
    assert book.entry(Position.initial()) is not None
    forced = 0
    for chosen in ballots.approved():
        position = chosen.record().position
        assert position.turn == Color.WHITE
        if len(position.legal_moves()) == 1:  # nothing to choose: the book holds the first choice after it
            forced += 1
            assert book.entry(position) is None, chosen.number
        assert book.entry(_first_choice(chosen)) is not None, chosen.number
    assert forced == 29
    assert book.header[0] == FORMAT_LINE
    assert any(line.startswith("# built by: bench/build_book.py") for line in book.header)
    assert BOOK_PATH.stat().st_size < 200_000


@pytest.mark.parametrize("number", [9])
def test_level_9_plays_the_book_move(number, fresh_default_book):
    start = Position.initial()
    expected = read_book(BOOK_PATH).entry(start)
    assert expected is not None
    played = worker.play(INITIAL_FEN, number, [], 0, seed=1)  # the worker function the computer's games run
    assert played["move"] == expected.move and played.get("book") is True and played["nodes"] == 0
    assert played["depth"] == expected.depth and played["score"] == expected.score
    # A book that says otherwise is followed: the move comes from the book, not from a search.
    other = Book({start.fen(): BookEntry(start.fen(), "12-16", 0, 1, "test", ("12-16",))})
    choice = choose_move(start, LEVELS[number - 1], book=other, rng=random.Random(1))
    assert choice["move"] == "12-16" and choice.get("book") is True


@pytest.mark.parametrize("number", [1, 2, 3, 4, 5, 6, 7, 8])
def test_levels_1_to_8_do_not_depend_on_the_book(number):
    """The level as it is, but searched to a depth of at most 4 with all the time it needs: a search
    cut by the clock on a busy machine would reach another depth in each of the two searches."""
    start = Position.initial()
    unusual = Book({start.fen(): BookEntry(start.fen(), "12-16", 0, 1, "test", ("12-16",))})
    level = LEVELS[number - 1]
    level = dataclasses.replace(level, depth=min(level.depth or 4, 4), time_ms=600_000)
    for seed in range(12):
        with_book = choose_move(start, level, book=unusual, rng=random.Random(seed))
        without = choose_move(start, level, book=Book(), rng=random.Random(seed))
        assert "book" not in with_book
        assert with_book["move"] == without["move"] and with_book["random"] == without["random"]


def test_the_analysis_board_searches_a_book_position(fresh_default_book):
    assert default_book().entry(Position.initial()) is not None
    analysed = worker.analyse(INITIAL_FEN, 50)
    assert analysed["nodes"] > 0 and "book" not in analysed


def test_an_entry_the_rules_refuse_is_ignored(caplog):
    start = Position.initial()
    text = f"{FORMAT_LINE}\n{start.fen()}\t9-15\t0\t5\ttest\t9-15\n"  # 9 cannot go to 15
    with caplog.at_level(logging.WARNING, logger="game.engine.book"):
        book = parse_book(text)
    assert len(book) == 0 and "not legal" in caplog.text
    # An entry made by hand that the rules refuse is ignored too: the level searches.
    forced = Book({start.fen(): BookEntry(start.fen(), "21-17", 0, 5, "test", ())})  # White's move, Black to move
    choice = choose_move(start, dataclasses.replace(LEVELS[-1], time_ms=50), book=forced, rng=random.Random(1))
    assert "book" not in choice and choice["nodes"] > 0
    assert start.parse_move(choice["move"]) in start.legal_moves()


@pytest.mark.parametrize("content", [
    None,  # no file at all
    b"\x00\xff\xfe not text",
    b"this is not a book\n",
    (FORMAT_LINE + "\nB:W21,22:B1,2\t9-14\n").encode(),  # too few fields
    (FORMAT_LINE + "\nB:W21,22,99:B1\t9-14\t0\t5\tx\t9-14\n").encode(),  # no valid FEN
    (FORMAT_LINE + f"\n{INITIAL_FEN}\t9-14\tzero\t5\tx\t9-14\n").encode(),
], ids=["missing", "binary", "no-format-line", "short-line", "bad-fen", "bad-score"])
def test_a_missing_or_corrupt_book_leaves_the_computer_searching(content, tmp_path, monkeypatch, caplog,
                                                                  fresh_default_book):
    path = tmp_path / "book.txt"
    if content is not None:
        path.write_bytes(content)
        with pytest.raises(BookError):
            read_book(path)
    monkeypatch.setenv("ENGINE_BOOK", str(path))
    with caplog.at_level(logging.ERROR, logger="game.engine.book"):
        # The strongest level, the one that reads the book, with a short budget for the test's sake.
        played = choose_move(Position.initial(), dataclasses.replace(LEVELS[-1], time_ms=50), rng=random.Random(1))
    assert "book" not in played and played["nodes"] > 0
    assert played["move"] in [str(m) for m in Position.initial().legal_moves()]
    assert "opening book" in caplog.text and str(path) in caplog.text
    assert len(default_book()) == 0


@pytest.mark.skipif(not native.available(), reason="the compiled core is not built")
def test_the_build_script_writes_the_same_book_twice(tmp_path):
    outputs = []
    for run, workers in enumerate(["1", "2"]):
        output = tmp_path / f"book-{run}.txt"
        done = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "build_book.py"), "--nodes", "20000", "--plies", "3",
             "--ballots", "4", "--workers", workers, "--date", "2026-01-01", "--output", str(output)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
        assert "positions written" in done.stderr and " s wall" in done.stderr
        outputs.append(output.read_bytes())
    assert outputs[0] == outputs[1]
    book = read_book(tmp_path / "book-0.txt")
    assert "# built by: bench/build_book.py --nodes 20000 --plies 3 --ballots 4 --date 2026-01-01" in book.header
    assert book.entry(Position.initial()) is not None
    for chosen in ballots.approved()[:4]:
        assert book.entry(_first_choice(chosen)) is not None
    assert len(book) == len(_rows_of(tmp_path / "book-0.txt"))


def _rows_of(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
