"""The analysis board in a real Chromium: picking moves on it (the same route input as the game
page: clicks hop by hop, the end of the only route, drags) and a game loaded from the server,
stepped through move by move. Expected positions come from the rules package (game.rules).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from playwright.sync_api import Page, expect

from game.rules import Game, Position
from tests.browser.test_game_actions import OPENING, play, start

#: Black must take: the man on 1 jumps 6 to 10, then 14 to 17 or 15 to 19.
DOUBLE = "B:W6,14,15,30:B1,12"


def has_class(name: str):
    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")


def after(fen: str, move: str) -> str:
    position = Position.from_fen(fen)
    return position.play(position.parse_move(move)).fen()


def shown(body, fen: str) -> None:
    """Wait for the board to show ``fen`` with the server's answer about it (its legal moves).

    The board shows a position it steps to at once and takes clicks on it once the server has
    answered (``data-valid``); a click before that selects nothing, as for a player.
    """
    expect(body).to_have_attribute("data-fen", fen)
    expect(body).to_have_attribute("data-valid", "1")


def slow_answers(page: Page, ms: int = 300) -> None:
    """Delay the server's answers about positions by ``ms`` ms, as on a slow link, so a test
    that clicks before the board has its legal moves fails every time rather than now and then."""
    page.add_init_script(
        "(() => { const f = window.fetch; window.fetch = (u, o) => String(u).includes('/analysis/position')"
        f" ? new Promise((r) => setTimeout(r, {ms})).then(() => f(u, o)) : f(u, o); }})()"
    )


def drag(page: Page, start: int, end: int) -> None:
    """Press on square ``start``, move in steps onto square ``end`` and let go."""
    a = page.locator(f"#sq-{start}").bounding_box()
    b = page.locator(f"#sq-{end}").bounding_box()
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=8)
    page.mouse.up()


def test_analysis_board_picks_moves_by_clicks_and_drags(server, new_context):
    page = new_context().new_page()
    slow_answers(page)
    page.goto(server.url + "/analysis?fen=" + quote(DOUBLE))
    body = page.locator("body")
    expect(page.locator("#analysis-status")).to_have_text("Black to move · 2 legal moves (a capture is compulsory)")
    expect(page.locator("#game-panel")).to_be_hidden()
    # The must-capture ring on the piece that can take; the other man cannot move.
    expect(page.locator("#sq-1")).to_have_class(has_class("must-capture"))
    expect(page.locator("#sq-1")).to_have_class(has_class("movable"))
    expect(page.locator("#sq-12")).not_to_have_class(has_class("movable"))

    page.locator("#sq-12").click()  # nothing to select there
    expect(page.locator("#board .selected")).to_have_count(0)
    page.locator("#sq-1").click()
    expect(page.locator("#sq-1")).to_have_class(has_class("selected"))
    expect(page.locator("#board .dest")).to_have_count(1)
    expect(page.locator("#sq-10")).to_have_class(has_class("dest"))
    page.locator("#sq-10").click()  # the first hop: both routes go on from there
    expect(page.locator("#sq-10")).to_have_class(has_class("route-tip"))
    expect(page.locator("#board .dest")).to_have_count(2)
    expect(page.locator("#sq-17")).to_have_class(has_class("dest"))
    expect(page.locator("#sq-19")).to_have_class(has_class("dest"))
    page.locator("#sq-19").click()
    expect(body).to_have_attribute("data-fen", after(DOUBLE, "1x10x19"))
    expect(page.locator("#sq-1")).to_have_class(has_class("last-from"))
    expect(page.locator("#sq-19")).to_have_class(has_class("last-to"))
    expect(page.locator("#board .selected")).to_have_count(0)

    # The end of the only route ending there is enough.
    page.click("#undo")
    shown(body, Position.from_fen(DOUBLE).fen())
    page.locator("#sq-1").click()
    page.locator("#sq-17").click()
    expect(body).to_have_attribute("data-fen", after(DOUBLE, "1x10x17"))

    # Dragging: onto the first landing square, then on from there.
    page.click("#undo")
    shown(body, Position.from_fen(DOUBLE).fen())
    expect(page.locator("#board.interactive")).to_be_attached()
    drag(page, 1, 10)
    expect(page.locator("#sq-10")).to_have_class(has_class("route-tip"))
    drag(page, 10, 19)
    expect(body).to_have_attribute("data-fen", after(DOUBLE, "1x10x19"))

    # In set-up mode a click places a piece instead.
    page.check("#mode-edit")
    page.locator("#sq-3").click()
    expect(body).to_have_attribute("data-fen", "W:W14,30:B3,12,19")


def test_analysis_board_steps_through_a_game_loaded_from_the_server(server, new_context):
    t = start(server, new_context, spectator=False)
    play(t, OPENING)
    record = Game.from_moves(OPENING)
    fens = [p.fen() for p in record.positions]  # fens[k]: after k plies

    page = new_context().new_page()  # a visitor, from the game's link
    slow_answers(page)
    page.goto(server.url + "/analysis?game=" + quote(t.url))
    body = page.locator("body")
    expect(page.locator("#move-list button.ply")).to_have_text(OPENING)
    expect(body).to_have_attribute("data-game-ply", "4")
    expect(body).to_have_attribute("data-fen", fens[4])
    expect(page.locator("#game-link")).to_have_text(f"Game {t.game_id} (in play)")
    expect(page.locator("#game-link")).to_have_attribute("href", f"/g/{t.game_id}/")
    expect(page.locator("#game-place")).to_have_text(f"After 2... {OPENING[3]} · ply 4 of 4")
    expect(page.locator("#move-list .ply.current")).to_have_text(OPENING[3])
    expect(page.locator("#replay-next")).to_be_disabled()
    expect(page.locator("#replay-last")).to_be_disabled()
    expect(page.locator("#analysis-status")).to_contain_text("Move 3 · Black to move")

    page.click("#replay-prev")
    expect(body).to_have_attribute("data-game-ply", "3")
    expect(body).to_have_attribute("data-fen", fens[3])
    expect(page.locator("#move-list .ply.current")).to_have_text(OPENING[2])
    expect(page.locator("#game-place")).to_have_text(f"After 2. {OPENING[2]} · ply 3 of 4")
    expect(page.locator("#analysis-status")).to_contain_text("Move 2 · White to move")
    expect(page.locator("#sq-15")).to_have_class(has_class("last-from"))
    expect(page.locator("#sq-22")).to_have_class(has_class("last-to"))

    page.click("#move-list [data-ply='1']")
    expect(body).to_have_attribute("data-fen", fens[1])
    page.keyboard.press("Home")
    expect(body).to_have_attribute("data-game-ply", "0")
    expect(body).to_have_attribute("data-fen", fens[0])
    expect(page.locator("#game-place")).to_have_text("Start position · ply 0 of 4")
    expect(page.locator("#replay-first")).to_be_disabled()
    expect(page.locator("#replay-prev")).to_be_disabled()
    expect(page.locator("#move-list .ply.current")).to_have_count(0)
    page.keyboard.press("ArrowRight")
    shown(body, fens[1])

    # The game's own next move, played on the board, stays on the game...
    page.locator("#sq-22").click()
    page.locator("#sq-18").click()
    expect(body).to_have_attribute("data-game-ply", "2")
    expect(body).to_have_attribute("data-fen", fens[2])
    expect(page.locator("#move-list .ply.current")).to_have_text(OPENING[1])
    # ... and another one leaves it; Previous goes back to where it left, Take back too.
    page.keyboard.press("Home")
    shown(body, fens[0])
    page.locator("#sq-9").click()
    page.locator("#sq-13").click()
    expect(body).to_have_attribute("data-fen", after(fens[0], "9-13"))
    expect(body).to_have_attribute("data-game-ply", "")
    expect(page.locator("#move-list .ply.current")).to_have_count(0)
    expect(page.locator("#game-place")).to_have_text("Moves played here, from the game's start position")
    page.click("#undo")
    expect(body).to_have_attribute("data-game-ply", "0")
    page.locator("#legal-moves button", has_text="12-16").click()
    expect(body).to_have_attribute("data-game-ply", "")
    page.click("#replay-next")
    expect(body).to_have_attribute("data-game-ply", "1")
    expect(body).to_have_attribute("data-fen", fens[1])

    # Setting up a position of one's own leaves the game; the "Load" box brings it back.
    page.click("#reset")
    expect(page.locator("#game-panel")).to_be_hidden()
    page.fill("#game-source", t.game_id)
    page.click("#game-load")
    expect(body).to_have_attribute("data-game-ply", "4")
    expect(body).to_have_attribute("data-fen", fens[4])
    expect(page.locator("#move-list button.ply")).to_have_text(OPENING)
    expect(page.locator("#game-source-error")).to_be_hidden()
