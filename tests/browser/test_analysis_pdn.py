"""The analysis board loads a whole game, pasted as PDN or from a stored game, and steps through it
with the engine on every position shown; the address names the game's ply, never a ?fen=.

Expected positions come from the rules package (game.rules), the record from tests/data.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from playwright.sync_api import expect

from game.rules import Game, read_games
from tests.browser.test_game_actions import OPENING, play, start

DATA = Path(__file__).resolve().parents[1] / "data"


def _first_record() -> tuple[str, Game]:
    """The first game of the OCA file as PDN text (tags, numbered moves), and its replay."""
    text = (DATA / "OCA_2.0.pdn").read_text(encoding="utf-8")
    second = text.index("[Event", text.index("[Event") + 1)
    pdn = text[:second].strip()
    record = next(read_games(io.StringIO(pdn)))
    return pdn, Game.from_moves(record.moves, start_fen=record.start_fen)


PDN, RECORD = _first_record()
FENS = [p.fen() for p in RECORD.positions]  # FENS[k]: after k plies


def test_a_pasted_pdn_is_stepped_through_with_the_engine_on_each_position(server, new_context):
    page = new_context().new_page()
    page.goto(server.url + "/analysis")
    body = page.locator("body")
    page.fill("#game-source", PDN)
    page.click("#game-load")
    n = RECORD.ply
    expect(page.locator("#move-list button.ply")).to_have_count(n)
    expect(body).to_have_attribute("data-game-ply", str(n))
    expect(body).to_have_attribute("data-fen", FENS[n])
    expect(page.locator("#game-players")).to_have_text("Moorhead, W. (Black) \u2013 Wyllie, J. (White)")
    expect(page.locator("#game-result")).to_have_text("0-1")
    expect(page.locator("#game-result")).to_have_attribute("title", "White won (0-1: Black's score first)")
    expect(page.locator("#game-link")).to_be_hidden()  # a pasted record has no page
    expect(page.locator("#game-place")).to_contain_text(f"ply {n} of {n}")
    assert "fen=" not in page.url  # the defect: stepping rewrote the address to ?fen=

    # The engine on every position shown.
    page.check("#auto-analyse")
    result = page.locator("#engine-result")
    expect(result).to_have_attribute("data-fen", FENS[n], timeout=15_000)
    for ply in (n - 1, n - 2):
        page.click("#replay-prev")
        expect(body).to_have_attribute("data-fen", FENS[ply])
        expect(page.locator("#game-place")).to_contain_text(f"ply {ply} of {n}")
        expect(result).to_have_attribute("data-fen", FENS[ply], timeout=15_000)
        expect(page.locator("#engine-eval")).to_have_text(re.compile(r"^(Equal|(Black|White) (is better|wins).*)$"))
        assert "fen=" not in page.url, page.url
    page.keyboard.press("Home")
    expect(body).to_have_attribute("data-game-ply", "0")
    expect(page.locator("#game-place")).to_have_text(f"Start position · ply 0 of {n}")
    for ply in (1, 2, 3):
        page.keyboard.press("ArrowRight")
        expect(body).to_have_attribute("data-fen", FENS[ply])
    expect(result).to_have_attribute("data-fen", FENS[3], timeout=15_000)
    page.click("#move-list [data-ply='10']")
    expect(body).to_have_attribute("data-fen", FENS[10])


def test_a_bare_list_of_moves_loads_too_and_a_bad_record_is_refused_where_it_was_typed(server, new_context):
    page = new_context().new_page()
    page.goto(server.url + "/analysis")
    body = page.locator("body")
    page.fill("#game-source", "1. 11-15 23-19 2. 8-11 22-17")
    page.press("#game-source", "Enter")
    expect(page.locator("#move-list button.ply")).to_have_text(["11-15", "23-19", "8-11", "22-17"])
    expect(body).to_have_attribute("data-fen", Game.from_moves(["11-15", "23-19", "8-11", "22-17"]).position.fen())
    shown = body.get_attribute("data-fen")

    page.fill("#game-source", "1. 11-15 23-19 2. 11-15")
    page.click("#game-load")
    expect(page.locator("#game-source-error")).to_contain_text("Ply 3, “11-15”, cannot be played")
    expect(body).to_have_attribute("data-fen", shown)  # the board stays where it was
    expect(page.locator("#game-source")).to_have_attribute("aria-invalid", "true")


def test_a_stored_games_link_opens_at_its_ply_and_stepping_keeps_the_game_in_the_address(server, new_context):
    """The link's ply, then "next" clicked before the server has answered for that ply: the board
    goes to the next ply and stays there once that first answer comes (it used to put the game's
    last position under the page's "ply 3"); the address follows, and a reload brings it back."""
    t = start(server, new_context, spectator=False)
    play(t, OPENING)
    fens = [p.fen() for p in Game.from_moves(OPENING).positions]
    page = new_context().new_page()
    held = []  # the first position request, answered only once "next" has been answered

    def hold_first(route):
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route(re.compile(r"/analysis/position\?"), hold_first)
    page.goto(f"{server.url}/analysis?game={t.game_id}&ply=2")
    body = page.locator("body")
    expect(body).to_have_attribute("data-game-ply", "2")
    expect(body).to_have_attribute("data-fen", fens[2])
    for _ in range(500):  # the first position request reaches the route right after the game's
        if held:
            break
        page.wait_for_timeout(20)
    assert held
    page.click("#replay-next")
    expect(body).to_have_attribute("data-valid", "1")
    expect(body).to_have_attribute("data-fen", fens[3])
    held[0].continue_()
    page.evaluate("() => window.analysis.started")  # the page's start has finished
    expect(body).to_have_attribute("data-fen", fens[3])
    expect(body).to_have_attribute("data-game-ply", "3")
    expect(page).to_have_url(re.compile(rf"/analysis\?game={t.game_id}&ply=3$"))
    page.unroute(re.compile(r"/analysis/position\?"))
    page.reload()  # the address brings back the same ply of the same game
    expect(body).to_have_attribute("data-game-ply", "3")
    expect(body).to_have_attribute("data-fen", fens[3])
    expect(page.locator("#move-list button.ply")).to_have_text(OPENING)
