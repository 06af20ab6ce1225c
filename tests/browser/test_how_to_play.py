"""The "How to play" page in a real Chromium: reached from the home page, one drawn board per
diagram with its pieces, the square numbers toggled by the checkbox (the notation board keeps
them), no console error (a refused style or script included), and screenshots, light and wide,
dark and narrow (kept in ``HOWTO_SCREENSHOT_DIR`` when that is set)."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import expect

from game.howto import DIAGRAMS
from game.rules import Position


def test_how_to_play_page(server, new_context, tmp_path):
    page = new_context().new_page()
    console = []
    page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    page.goto(server.url + "/")
    page.locator("#how-to-play-link").click()
    expect(page).to_have_url(server.url + "/how-to-play")
    expect(page.locator("h1")).to_have_text("How to play checkers")

    boards = page.locator("svg.hb-board")
    expect(boards).to_have_count(len(DIAGRAMS))
    for diagram in DIAGRAMS:
        board = page.locator(f'svg.hb-board[data-diagram="{diagram.key}"]')
        expect(board).to_be_visible()
        box = board.bounding_box()
        assert box and box["width"] > 200 and abs(box["width"] - box["height"]) < 2
        expect(board.locator("g.hb-piece")).to_have_count(len(Position.from_fen(diagram.fen).board()))

    start_numbers = page.locator('#diagram-start .hb-numbers')
    notation_numbers = page.locator('#diagram-notation .hb-numbers')
    expect(start_numbers).to_be_visible()
    page.locator("#howto-numbers").uncheck()
    expect(start_numbers).to_be_hidden()
    expect(notation_numbers).to_be_visible()
    page.locator("#howto-numbers").check()
    expect(start_numbers).to_be_visible()

    folder = Path(os.environ.get("HOWTO_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / "how-to-play.png"), full_page=True)
    for section in page.locator("section.howto-section").all():
        section.screenshot(path=str(folder / f"how-to-play-{section.get_attribute('id')}.png"))
    # Dark colours and a phone's width: the boards stay square and fill the column.
    page.emulate_media(color_scheme="dark")
    page.set_viewport_size({"width": 390, "height": 800})
    board = page.locator('svg.hb-board[data-diagram="crowning"]')
    board.scroll_into_view_if_needed()
    box = board.bounding_box()
    assert box and 300 < box["width"] <= 360 and abs(box["width"] - box["height"]) < 2
    page.locator("#crowning").screenshot(path=str(folder / "how-to-play-narrow-dark.png"))
    assert not console, console
