"""Playing the computer and using the analysis board in a real Chromium.

The moves clicked come from the page's own list of legal moves (sent by the
server); the analysis board's answers are checked against game.rules.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from game.rules import Position
from tests.browser.conftest import Server

SCREENSHOTS = Path(os.environ.get("BROWSER_SCREENSHOTS_DIR", "/tmp"))

# White gives the king on 25 (25-22, 17x26 is forced) and the man on 30 then takes three pieces
# in one route, 30x23x16x7: a forced win (proved exhaustively in tests/engine/test_search.py).
SHOT_FEN = "W:W18,K25,30,32:B10,K11,17,K19"


@pytest.fixture
def slow_computer_server(server_env, tmp_path):
    """A server of this test's own whose computer takes 2 s over a move: time to kill it meanwhile."""
    srv = Server({**server_env, "COMPUTER_MIN_THINK_MS": "2000"}, tmp_path / "daphne.log")
    srv.start()
    yield srv
    srv.stop()


def start_computer_game(page: Page, url: str, level_name: str, colour: str) -> None:
    page.goto(url + "/")
    page.fill("#id_name", "alice")
    page.locator("#computer-form label", has_text=level_name).click()
    page.locator("#computer-form label", has_text=colour).click()
    page.click("#play-computer")
    expect(page).to_have_url(re.compile(r"/g/\w+/$"))


def click_route(page: Page, move: str) -> None:
    """Click the squares of ``move`` (full notation) on the board, start square first."""
    for square in re.split(r"[-x]", move):
        page.locator(f"#sq-{square}").click()


def test_play_as_choices_read_the_same_for_a_friend_and_the_computer(server, new_context):
    page = new_context().new_page()
    page.goto(server.url + "/")
    friend = page.locator("#id_color label").all_inner_texts()
    computer = page.locator("#computer-form .side-choice label").all_inner_texts()
    assert [t.strip() for t in friend] == [t.strip() for t in computer] == ["Random", "Black (moves first)", "White"]


def test_computer_replies_to_moves_played_on_the_board(server, new_context):
    page = new_context().new_page()
    start_computer_game(page, server.url, "Beginner", "Black")
    expect(page.locator("#player-top .player-name")).to_have_text("Computer (level 1)")
    expect(page.locator("#player-bottom .player-name")).to_have_text("alice")
    for ply in (1, 3, 5):
        expect(page.locator("body")).to_have_attribute("data-ply", str(ply - 1))
        expect(page.locator("#turn")).to_have_text("Your turn")
        legal = page.evaluate("() => window.checkers.ctrl.state.legal")
        click_route(page, legal[0])
        # The computer answers on its own: the game moves on by two plies.
        expect(page.locator("body")).to_have_attribute("data-ply", str(ply + 1), timeout=20_000)
    moves = page.evaluate("() => window.checkers.ctrl.moves")
    replay = Position.initial()
    for move in moves:
        replay = replay.play(replay.parse_move(move))
    assert len(moves) == 6
    game_url = page.url
    link = page.locator("#analyse-link")
    # Fair play: no engine for a player during their own game, not even on reload.
    expect(link).to_be_hidden()
    page.screenshot(path=str(SCREENSHOTS / "computer-game.png"))
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ply", "6")
    expect(link).to_be_hidden()
    page.click("#resign")
    page.click("#resign-confirm")
    expect(page.locator("body")).to_have_attribute("data-status", "finished")
    # Once the game is over it is there, in a new tab: the game's moves, at the position on the board.
    expect(link).to_be_visible()
    expect(link).to_have_text("Analyse the game")
    game_id = game_url.rstrip("/").rsplit("/", 1)[-1]
    expect(link).to_have_attribute("href", f"/analysis?game={game_id}&ply=6")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener")
    with page.context.expect_page() as opened:
        link.click()
    analysis = opened.value
    expect(analysis).to_have_url(re.compile(rf"/analysis\?game={game_id}&ply=6$"))
    expect(analysis.locator("body")).to_have_attribute("data-fen", replay.fen())
    expect(analysis.locator("#move-list button.ply")).to_have_count(6)
    expect(analysis.locator("#analysis-status")).to_contain_text("Move 4 · Black to move")

    # The game's link in the "Load" box sets up its current position there, in place.
    analysis.locator("#reset").click()
    expect(analysis.locator("body")).not_to_have_attribute("data-fen", replay.fen())
    analysis.fill("#game-source", game_url)
    analysis.click("#game-load")
    expect(analysis.locator("body")).to_have_attribute("data-fen", replay.fen())
    expect(analysis.locator("#game-source-error")).to_be_hidden()


def test_analysis_board_sets_up_positions_and_shows_the_engine_line(server, new_context):
    page = new_context().new_page()
    page.goto(server.url + "/analysis")
    expect(page.locator("#analysis-status")).to_have_text("Black to move · 7 legal moves")
    expect(page.locator("#legal-moves button")).to_have_count(7)

    # Set up: an empty board, a white man on 30 and a black man on 29 (its crowning row: refused).
    page.check("#mode-edit")
    page.click("#clear")
    page.locator(".tool-row label", has_text="White man").click()
    page.locator("#sq-30").click()
    page.locator(".tool-row label", has_text="Black man").click()
    page.locator("#sq-29").click()
    crowned = "A black man cannot stand on square 29: black men are crowned on that row. Make it a king or move it."
    expect(page.locator("#fen-error")).to_have_text(crowned)  # in plain words, next to the FEN box
    expect(page.locator("#analysis-status")).to_have_text(f"This position cannot be analysed. {crowned}")
    expect(page.locator("#analysis-error")).to_be_hidden()
    expect(page.locator("#analyse")).to_be_disabled()
    page.locator("#sq-29").click()  # the same piece again: removed
    page.locator("#sq-1").click()
    expect(page.locator("#fen-error")).to_be_hidden()
    expect(page.locator("body")).to_have_attribute("data-fen", "B:W30:B1")
    held = []  # the server's answer about W:W30:B1, held back until the pasted FEN below was sent

    def hold_the_boards_answer(route):
        if not held and "fen=W%3AW30%3AB1" in route.request.url:
            held.append(route)
        else:
            route.continue_()

    page.route(re.compile(r"/analysis/position\?"), hold_the_boards_answer)
    page.check("#turn-white")
    expect(page.locator("body")).to_have_attribute("data-fen", "W:W30:B1")
    for _ in range(500):  # the board's request reaches the route at once
        if held:
            break
        page.wait_for_timeout(20)
    assert held

    # A pasted FEN that docs/rules.md, "FEN" forbids is refused with the reason; the board stays
    # (and what the server says of it, though its answer comes after the refusal).
    page.fill("#fen-input", "B:W5:B5")
    page.click("#fen-load")
    expect(page.locator("#fen-error")).to_have_text(
        "“B:W5:B5” was not set up: Square 5 is given to both Black and White.")
    held[0].continue_()
    expect(page.locator("body")).to_have_attribute("data-fen", "W:W30:B1")
    expect(page.locator("#fen-input")).to_have_value("W:W30:B1")  # the box shows the board again
    expect(page.locator("#analysis-status")).to_contain_text("White to move")
    expect(page.locator("#fen-error")).to_have_text(
        "“B:W5:B5” was not set up: Square 5 is given to both Black and White.")
    page.unroute(re.compile(r"/analysis/position\?"))

    # A typo in the "Load" box (a game link or id): the reason next to the box, the board stays.
    page.fill("#game-source", server.url + "/g/nosuchgame/")
    page.click("#game-load")
    expect(page.locator("#game-source-error")).to_have_text(
        "No game “nosuchgame” was found. Check the link for a typo.")
    expect(page.locator("body")).to_have_attribute("data-fen", "W:W30:B1")
    expect(page).to_have_url(re.compile(r"/analysis\?fen=W%3AW30%3AB1$"))
    page.fill("#game-source", "B:W1:B5")  # a FEN there is read as one
    page.press("#game-source", "Enter")
    expect(page.locator("#game-source-error")).to_contain_text("A white man cannot stand on square 1")
    expect(page.locator("body")).to_have_attribute("data-fen", "W:W30:B1")

    # A shot: the engine finds the forced win and shows its line as notation.
    page.fill("#fen-input", SHOT_FEN)
    page.click("#fen-load")
    expect(page.locator("body")).to_have_attribute("data-fen", Position.from_fen(SHOT_FEN).fen())
    page.check("#mode-play")
    page.select_option("#think-ms", "1000")
    page.click("#analyse")
    result = page.locator("#engine-result")
    expect(result).to_be_visible(timeout=15_000)
    expect(page.locator("#engine-move")).to_have_text("25-22")
    expect(page.locator("#engine-eval")).to_contain_text("White wins")
    expect(page.locator("#engine-pv")).to_have_text(re.compile(r"^1\. \.\.\. 25-22 2\. 17x26 30x23x16x7"))
    expect(page.locator("#sq-25")).to_have_class(re.compile(r"\bbest-from\b"))
    expect(page.locator("#sq-22")).to_have_class(re.compile(r"\bbest-to\b"))
    page.screenshot(path=str(SCREENSHOTS / "analysis-board.png"))

    # Play the engine's move, then take it back.
    page.click("#play-best")
    expect(page.locator("#analysis-status")).to_contain_text("Black to move")
    expect(page.locator("#legal-moves button")).to_have_text(["17x26"])
    page.click("#undo")
    expect(page.locator("body")).to_have_attribute("data-fen", Position.from_fen(SHOT_FEN).fen())


def test_engine_verdict_in_words_and_line_numbered_from_the_games_move(server, new_context):
    page = new_context().new_page()
    # White a man up (Black's 12 is missing), at move 7 of the game it came from.
    page.goto(server.url + "/analysis?fen=" + quote("B:W21-32:B1-11") + "&move_number=7")
    expect(page.locator("#analysis-status")).to_have_text(re.compile(r"^Move 7 · Black to move"))
    page.click("#analyse")
    expect(page.locator("#engine-result")).to_be_visible(timeout=15_000)
    # From Black's side: White ahead is a negative number (a minus sign).
    expect(page.locator("#engine-eval")).to_have_text(re.compile(r"^White is better \(\u2212\d+\.\d\d\)$"))
    expect(page.locator("#engine-pv")).to_have_text(re.compile(r"^7\. \d+-\d+ \d+-\d+ 8\. "))
    # Black's move and White's reply: the numbering and the address follow.
    page.click("#play-best")
    expect(page.locator("#analysis-status")).to_contain_text("Move 7 · White to move")
    page.locator("#legal-moves button").first.click()
    expect(page.locator("#analysis-status")).to_contain_text("Move 8 · Black to move")
    expect(page).to_have_url(re.compile(r"move_number=8$"))
    # Level play, and a position typed in by hand is numbered from 1.
    page.fill("#fen-input", "B:W21-32:B1-12")
    page.click("#fen-load")
    expect(page.locator("#analysis-status")).to_have_text("Black to move · 7 legal moves")
    page.click("#analyse")
    expect(page.locator("#engine-eval")).to_have_text("Equal", timeout=15_000)
    expect(page.locator("#engine-pv")).to_have_text(re.compile(r"^1\. "))


def test_computer_move_lost_in_a_server_crash_comes_after_the_restart(slow_computer_server, new_context):
    srv = slow_computer_server
    page = new_context().new_page()
    start_computer_game(page, srv.url, "Beginner", "Black")
    expect(page.locator("#turn")).to_have_text("Your turn")
    click_route(page, page.evaluate("() => window.checkers.ctrl.state.legal[0]"))
    expect(page.locator("body")).to_have_attribute("data-ply", "1")
    expect(page.locator("#turn")).to_have_text("Computer (level 1) is thinking…")
    srv.stop(kill=True)  # the computer was still thinking
    expect(page.locator("#connection")).to_be_visible()
    srv.start()
    # The page reconnects by itself; the new server finds the computer to move and plays.
    expect(page.locator("body")).to_have_attribute("data-ply", "2", timeout=30_000)
    expect(page.locator("#turn")).to_have_text("Your turn")
