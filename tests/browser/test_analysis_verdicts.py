"""The analysis board's exact verdicts in a real Chromium: with an endgame database on the server,
a position it covers reads "Black wins (in 31 plies with best play)" or "Draw with best play", in
the status panel and in place of the engine's evaluation; beyond the database nothing of it shows.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from game.engine import native
from tests.browser.conftest import Server
from tests.browser.test_accessibility import assert_clean

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled core is not built")

SCREENSHOTS = Path(os.environ.get("BROWSER_SCREENSHOTS_DIR", "/tmp"))
TWO_KINGS = "B:WK32:BK1,K5"  # two black kings against one, Black to move: Black wins in 31 plies


@pytest.fixture(scope="module")
def endgame_server(server_env, tmp_path_factory):
    """A server of this module's own whose processes load a database of every position with at most 3 pieces."""
    directory = tmp_path_factory.mktemp("endgames")
    native.build_endgames(3, directory / "endgames-3.bin")
    srv = Server({**server_env, "ENGINE_ENDGAME_DIR": str(directory)},
                 tmp_path_factory.mktemp("daphne-endgames") / "daphne.log")
    srv.start()
    yield srv
    srv.stop()


def open_board(page: Page, url: str, fen: str) -> None:
    page.goto(url + "/analysis?fen=" + quote(fen))
    expect(page.locator("body")).to_have_attribute("data-valid", "1")


def test_the_board_reads_the_exact_verdict(endgame_server, new_context):
    page = new_context().new_page()
    open_board(page, endgame_server.url, TWO_KINGS)
    verdict = page.locator("#analysis-verdict")
    expect(verdict).to_be_visible()
    expect(verdict).to_have_text("Endgame database: Black wins (in 31 plies with best play)")
    expect(verdict).to_have_attribute("data-result", "win")

    # The engine's answer gives the same exact result in place of its evaluation.
    page.click("#analyse")
    expect(page.locator("#engine-eval")).to_have_text("Black wins (in 31 plies with best play)")
    expect(page.locator("#engine-pv")).to_contain_text(" 16. ")  # best play to the end: 31 plies
    page.screenshot(path=str(SCREENSHOTS / "analysis-verdict-win.png"))
    page.click("#play-best")  # the best move keeps the win, one ply nearer, White to move
    expect(page.locator("#analysis-status")).to_contain_text("White to move")
    expect(verdict).to_have_text("Endgame database: Black wins (in 30 plies with best play)")
    expect(verdict).to_have_attribute("data-result", "loss")

    # A king against a king, typed in the FEN box: a draw.
    page.fill("#fen-input", "W:WK32:BK1")
    page.press("#fen-input", "Enter")
    expect(page.locator("body")).to_have_attribute("data-fen", "W:WK32:BK1")
    expect(verdict).to_have_text("Endgame database: Draw with best play")
    page.click("#analyse")
    expect(page.locator("#engine-eval")).to_have_text("Draw with best play")
    page.screenshot(path=str(SCREENSHOTS / "analysis-verdict-draw.png"))

    # Four pieces are beyond the database: the evaluation alone, as before.
    open_board(page, endgame_server.url, "B:WK32,K28:BK1,K5")
    expect(page.locator("#analysis-status")).to_contain_text("Black to move")
    expect(verdict).to_be_hidden()
    page.click("#analyse")
    expect(page.locator("#engine-result")).to_be_visible()
    expect(page.locator("#engine-eval")).not_to_contain_text("with best play")


def test_the_verdict_reads_in_french_and_spanish(endgame_server, new_context):
    for locale, win, draw in [
        ("fr-FR", "Les noirs gagnent (en 31 demi-coups avec le meilleur jeu)", "Nulle avec le meilleur jeu"),
        ("es-ES", "Ganan las negras (en 31 medias jugadas con el mejor juego)", "Tablas con el mejor juego"),
    ]:
        page = new_context(locale=locale).new_page()
        open_board(page, endgame_server.url, TWO_KINGS)
        expect(page.locator("#analysis-verdict-text")).to_have_text(win)
        open_board(page, endgame_server.url, "B:WK32:BK1")
        expect(page.locator("#analysis-verdict-text")).to_have_text(draw)


def test_without_a_database_the_board_shows_no_verdict(server, new_context):
    if native.endgame_path(3).is_file() or native.endgame_path(4).is_file() or native.endgame_path(5).is_file():
        pytest.skip("this checkout has an endgame database in var/endgames")
    page = new_context().new_page()
    open_board(page, server.url, TWO_KINGS)
    expect(page.locator("#analysis-status")).to_contain_text("Black to move")
    expect(page.locator("#analysis-verdict")).to_be_hidden()
    page.click("#analyse")
    expect(page.locator("#engine-result")).to_be_visible()
    expect(page.locator("#engine-eval")).not_to_contain_text("with best play")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_verdict_passes_axe(endgame_server, new_context, scheme):
    page = new_context(color_scheme=scheme).new_page()
    open_board(page, endgame_server.url, TWO_KINGS)
    expect(page.locator("#analysis-verdict")).to_be_visible()
    page.click("#analyse")
    expect(page.locator("#engine-eval")).to_have_text("Black wins (in 31 plies with best play)")
    assert_clean(page, f"the analysis board with an exact verdict ({scheme})")
    page.screenshot(path=str(SCREENSHOTS / f"analysis-verdict-{scheme}.png"))
