"""A record of a game played elsewhere on the analysis board, in a real Chromium: Chinook v Tinsley,
London 1992, game 1, pasted as PDN, loads whole past the repetition and the board says after which
ply the site would have declared the draw (docs/rules.md, "Records from elsewhere")."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import expect

SCREENSHOTS = Path(os.environ.get("BROWSER_SCREENSHOTS_DIR", "/tmp"))
LONDON = Path(__file__).resolve().parents[1] / "data" / "london1992.pdn"


def test_pasted_record_past_a_repetition_loads_whole_with_the_note(new_context, server):
    game = LONDON.read_text(encoding="utf-8").split("\n\n")
    page = new_context().new_page()
    page.goto(server.url + "/analysis")
    page.fill("#game-source", game[0])
    page.click("#game-load")
    expect(page.locator("#game-panel")).to_be_visible()
    expect(page.locator("#game-source-error")).to_be_hidden()
    expect(page.locator("#move-list button.ply")).to_have_count(103)
    note = page.locator("#game-site-draw")
    expect(note).to_be_visible()
    expect(note).to_have_text("The site would have declared a draw by threefold repetition after ply 73; "
                              "over the board a draw is claimed, and this game went on.")
    page.screenshot(path=str(SCREENSHOTS / "record-site-draw.png"), full_page=True)
    # A record that never reaches such a position has no note.
    page.fill("#game-source", game[3])
    page.click("#game-load")
    expect(page.locator("#move-list button.ply")).to_have_count(51)
    expect(note).to_be_hidden()
