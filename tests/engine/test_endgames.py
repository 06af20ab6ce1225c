"""Endgame databases: built by the core, consistent, right on known endings, used by the search, optional."""

from __future__ import annotations

import io
import random
import threading

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from game.engine import WIN, native
from game.rules import Position

from .positions import placed_positions
from .test_search import mirrored


@pytest.fixture(scope="module")
def three_pieces(tmp_path_factory):
    path = tmp_path_factory.mktemp("endgames") / "endgames-3.bin"
    stats = native.build_endgames(3, path)
    native.load_endgames(path)
    yield path, stats
    native.unload_endgames()


def test_the_database_counts_add_up_and_the_file_has_its_size(three_pieces):
    path, stats = three_pieces
    assert stats["complete"] and stats["pieces"] == 3
    assert stats["positions"] == stats["wins"] + stats["losses"] + stats["draws"] == 268_316
    assert path.stat().st_size == stats["bytes"]
    assert 0 < stats["longest"] < 252


def test_every_value_follows_from_the_values_of_its_moves(three_pieces):
    assert native.verify_endgames() == (0, 325_504)


def test_a_corrupted_database_fails_the_check(three_pieces, tmp_path):
    path, _ = three_pieces
    data = bytearray(path.read_bytes())
    position = Position.from_fen("B:WK32:BK1,K5")
    before = native.probe_endgame(position)
    # flip every value byte of one stretch: some of them are positions the check must catch
    for offset in range(100_000, 100_050):
        if data[offset] not in (254,):
            data[offset] = 255 if data[offset] != 255 else 3
    broken = tmp_path / "broken.bin"
    broken.write_bytes(bytes(data))
    try:
        native.load_endgames(broken)
        wrong, _ = native.verify_endgames()
        assert wrong > 0
    finally:
        native.load_endgames(path)
    assert native.probe_endgame(position) == before


@pytest.mark.parametrize(("fen", "verdict"), [
    ("B:WK32:BK1,K5", ("win", 31)),    # two kings beat one, driven out of the double corner
    ("W:WK32:BK1,K5", ("loss", 32)),
    ("B:WK32:BK1", ("draw", 0)),       # a king against a king
    ("B:W9,14:B5", ("loss", 0)),       # Black cannot move
    ("W:W18:B14", ("win", 1)),         # 18x9 takes Black's last piece
    ("W:W18:B14,22", ("draw", 0)),     # 18x9, then a man each that both crown
])
def test_known_endings(three_pieces, fen, verdict):
    assert native.probe_endgame(Position.from_fen(fen)) == verdict


def test_a_position_and_its_mirror_image_have_the_same_verdict(three_pieces):
    positions = [p for p in placed_positions(8_000, seed=31) if p.pieces("B") + p.pieces("W") <= 3]
    assert len(positions) > 100
    for position in positions:
        assert native.probe_endgame(position) == native.probe_endgame(mirrored(position)), position.fen()


def test_the_search_plays_the_database_ending(three_pieces):
    position = Position.from_fen("B:WK32:BK1,K5")
    without = native.search(position, depth=3, endgames=False)
    assert without.mate is None
    result = native.search(position, depth=3)
    assert result.mate == 31 and result.score == WIN - 31
    after = position.play(result.move)
    assert native.probe_endgame(after) == ("loss", 30)
    # the forty-move rule still comes first
    assert native.search(position, depth=3, no_progress=79).score == 0


def test_sampled_positions_agree_with_a_deep_search(three_pieces):
    rng = random.Random(5)
    _, entries = native.verify_endgames()
    positions = [p for p in native.endgame_positions([rng.randrange(entries) for _ in range(200)])
                 if p.legal_moves()][:40]
    proved = 0
    for position in positions:
        outcome, plies = native.probe_endgame(position)
        result = native.search(position, depth=12, endgames=False)
        if result.mate is not None:
            # the same result, and never sooner than best play (the search need not find the quickest)
            assert outcome != "draw", position.fen()
            assert (result.mate > 0) == (outcome == "win") and abs(result.mate) >= plies, position.fen()
            proved += 1
        elif outcome != "draw":
            assert plies > 5, position.fen()
    assert proved >= 10


def test_without_a_database_everything_works(three_pieces, tmp_path, monkeypatch):
    path, _ = three_pieces
    monkeypatch.setattr(native, "ENDGAME_DIR", tmp_path / "none")
    native.unload_endgames()
    try:
        assert native.load_endgames() == 0 and native.endgame_pieces() == 0
        position = Position.from_fen("B:WK32:BK1,K5")
        assert native.probe_endgame(position) is None
        assert native.search(position, depth=3).move in position.legal_moves()
        with pytest.raises(RuntimeError):
            native.verify_endgames()
    finally:
        native.load_endgames(path)


def test_files_that_are_no_database_are_refused(three_pieces, tmp_path):
    bogus = tmp_path / "bogus.bin"
    bogus.write_bytes(b"not a database at all")
    with pytest.raises(ValueError, match="not an endgame database"):
        native.load_endgames(bogus)
    short = tmp_path / "short.bin"
    short.write_bytes(three_pieces[0].read_bytes()[:5000])
    with pytest.raises(ValueError, match="wrong size"):
        native.load_endgames(short)
    with pytest.raises(OSError):
        native.load_endgames(tmp_path / "missing.bin")
    assert native.endgame_pieces() == 3  # the loaded database stays
    with pytest.raises(ValueError):
        native.build_endgames(6, tmp_path / "six.bin")


def test_the_management_command_builds_and_checks(three_pieces, tmp_path, monkeypatch):
    monkeypatch.setattr(native, "ENDGAME_DIR", tmp_path)
    out = io.StringIO()
    try:
        call_command("build_endgames", pieces=2, samples=20, stdout=out)
        text = out.getvalue()
        assert "7,092 positions" in text and "0 not following from their moves" in text
        assert "0 disagreements" in text and "every check passed" in text
        assert (tmp_path / "endgames-2.bin").stat().st_size == 8_080
        with pytest.raises(CommandError, match="2 to 5"):
            call_command("build_endgames", pieces=7, stdout=io.StringIO())
        with pytest.raises(CommandError, match="does not exist"):
            call_command("build_endgames", pieces=3, verify_only=True, stdout=io.StringIO())
    finally:
        native.load_endgames(three_pieces[0])


@pytest.mark.parametrize(("fen", "verdict"), [
    ("B:WK32:BK1,K5", {"result": "win", "winner": "B", "plies": 31}),
    ("W:WK32:BK1,K5", {"result": "loss", "winner": "B", "plies": 32}),
    ("B:WK32:BK1", {"result": "draw", "winner": None, "plies": None}),
    ("B:W9,14:B5", {"result": "loss", "winner": "W", "plies": 0}),   # Black cannot move: lost already
    ("B:WK32,K28:BK1,K5", None),                                      # 4 pieces: beyond the database
])
def test_the_verdict_names_the_winner(three_pieces, fen, verdict):
    assert native.endgame_verdict(Position.from_fen(fen)) == verdict


def test_the_line_of_best_play_keeps_the_result_to_the_end(three_pieces):
    for fen, plies in [("B:WK32:BK1,K5", 31), ("W:WK32:BK1,K5", 32)]:
        position = Position.from_fen(fen)
        line = native.endgame_line(position)
        assert len(line) == plies
        for done, move in enumerate(line, start=1):
            position = position.play(move)
            left = native.probe_endgame(position)
            assert left is not None and left[1] == plies - done
        assert not position.legal_moves()  # Black has taken White's last piece or blocked it
    assert len(native.endgame_line(Position.from_fen("B:WK32:BK1,K5"), limit=5)) == 5
    assert native.endgame_line(Position.from_fen("B:WK32:BK1")) == []         # a draw: no line
    assert native.endgame_line(Position.from_fen("B:WK32,K28:BK1,K5")) == []  # beyond the database
    with pytest.raises(ValueError):
        native.endgame_line(Position.from_fen("B:WK32:BK1,K5"), limit=-1)
    with pytest.raises(TypeError):
        native.endgame_verdict("B:WK32:BK1,K5")  # type: ignore[arg-type]


def test_threads_asking_at_once_all_wait_for_the_database(three_pieces, monkeypatch):
    # A server's first requests come together: none may answer before the default database is read.
    path, _ = three_pieces
    monkeypatch.setattr(native, "ENDGAME_DIR", path.parent)
    position = Position.from_fen("B:WK32:BK1,K5")
    for _ in range(5):
        native.unload_endgames()
        start = threading.Barrier(8)
        verdicts: list = []

        def ask(start=start, verdicts=verdicts):
            start.wait()
            verdicts.append(native.endgame_verdict(position))

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert verdicts == [{"result": "win", "winner": "B", "plies": 31}] * 8
    native.load_endgames(path)


@pytest.mark.heavy
def test_heavy_the_four_piece_database_is_built_complete_and_consistent(tmp_path):
    """The database the site ships with (``manage.py build_endgames``, 4 pieces): its counts
    (docs/engine.md, "Endgame databases"), every value following from its moves' values, and two
    kings against one winning in 31 plies."""
    path = tmp_path / "endgames-4.bin"
    stats = native.build_endgames(4, path)
    assert stats["complete"] and stats["pieces"] == 4
    assert (stats["positions"], stats["wins"], stats["losses"], stats["draws"]) == (
        7_361_090, 3_151_397, 2_480_924, 1_728_769)
    assert path.stat().st_size == stats["bytes"] == 9_531_280
    native.load_endgames(path)
    try:
        assert native.verify_endgames() == (0, 9_531_264)
        assert native.endgame_verdict(Position.from_fen("B:WK32:BK1,K5")) == {
            "result": "win", "winner": "B", "plies": 31}
        assert native.endgame_verdict(Position.from_fen("B:WK32:BK1")) == {
            "result": "draw", "winner": None, "plies": None}
    finally:
        native.unload_endgames()
