"""Accessibility in a real Chromium: axe-core finds nothing on the site's pages, and a screen reader
hears every move, offer and end of a game in words through the game page's polite live region.

axe-core comes from its npm package (package.json pins it; `make test` and .ci/run run `npm ci`),
read from node_modules and evaluated in each page, so the test needs no network. The rules run
are WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices. Each page is checked in
the light and the dark colour scheme (the site follows the system's).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.test_game_actions import OPENING, Table, join_game, play

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]


def axe_source() -> str:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` (make test does) to install axe-core")
    return AXE.read_text(encoding="utf-8")


def violations(page: Page) -> list[str]:
    """axe-core's violations on ``page`` as it is now, one line each: rule, impact, where."""
    if not page.evaluate("() => !!window.axe"):
        page.evaluate(axe_source())  # evaluated by the browser's debugger: the page's CSP allows no inline script
    found = page.evaluate(
        """async (tags) => {
            const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
            return result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
              nodes: v.nodes.slice(0, 4).map((n) =>
                `${n.target.join(' ')}: ${n.failureSummary.replace(/\\s+/g, ' ')}`)}));
        }""",
        TAGS,
    )
    return [f"{v['id']} ({v['impact']}): {v['help']} -- " + " | ".join(v["nodes"]) for v in found]


def assert_clean(page: Page, what: str) -> None:
    found = violations(page)
    assert not found, f"axe-core on {what} ({page.url}):\n" + "\n".join(found)


@pytest.fixture(params=["light", "dark"])
def scheme(request):
    return request.param


def test_home_and_how_to_play_pages_have_no_axe_violations(server, new_context, scheme):
    page = new_context(color_scheme=scheme).new_page()
    page.goto(server.url + "/")
    expect(page.locator("#seek-status")).not_to_have_attribute("data-state", "connecting")
    assert_clean(page, f"the home page ({scheme})")
    page.click("#create-game")  # an empty name is a guest: this creates a game
    page.goto(server.url + "/how-to-play")
    assert_clean(page, f"How to play ({scheme})")


def live_table(server, new_context, scheme: str, check: bool = True) -> Table:
    """alice creates a live 3+2 game as Black; axe checks her waiting page and bob's invitation
    (with ``check``). The first move is due within 30 s of bob's joining."""
    alice = new_context(color_scheme=scheme).new_page()
    alice.goto(server.url + "/")
    alice.fill("#id_name", "alice")
    alice.click("label[for=id_color_1]")
    alice.select_option("#id_time_control", "3+2")
    alice.click("#create-game")
    alice.wait_for_url(re.compile(r"/g/\w+/$"))
    expect(alice.locator("body[data-status=waiting]")).to_be_attached()
    expect(alice.locator("#connection")).to_have_attribute("data-state", "open")
    url = alice.locator("#invite-url").input_value()
    if check:
        assert_clean(alice, f"a waiting game, its creator's page ({scheme})")
    bob = new_context(color_scheme=scheme).new_page()
    bob.goto(url)
    expect(bob.locator("#join-form")).to_be_visible()
    expect(bob.locator("#connection")).to_have_attribute("data-state", "open")
    if check:
        assert_clean(bob, f"a waiting game, the join form ({scheme})")
    join_game(bob, url, "bob")
    expect(alice.locator("body[data-status=active][data-you=B]")).to_be_attached()
    carol = new_context(color_scheme=scheme).new_page()
    carol.goto(url)
    expect(carol.locator("body[data-status=active][data-you='']")).to_be_attached()
    return Table(url, alice, bob, carol)


def test_game_pages_have_no_axe_violations_waiting_active_and_finished(server, new_context, scheme):
    t = live_table(server, new_context, scheme)
    # Active, before the first move (due within 30 s): alice has the first-move countdown.
    expect(t.alice.locator("#first-move-note")).to_be_visible()
    assert_clean(t.alice, f"an active game, the player to make the first move ({scheme})")
    play(t, OPENING)
    for page, who in ((t.bob, "the other player"), (t.carol, "a spectator")):
        expect(page.locator("#connection")).to_have_attribute("data-state", "open")
        assert_clean(page, f"an active game, {who} ({scheme})")
    t.alice.click("#move-list [data-ply='2']")  # replaying an earlier position
    expect(t.alice.locator("#replay-status")).to_be_visible()
    t.bob.click("#offer-draw")
    expect(t.alice.locator("#draw-offer-box")).to_be_visible()
    for page, who in ((t.alice, "a player offered a draw, replaying"), (t.bob, "the player who offered"),
                      (t.carol, "a spectator")):
        assert_clean(page, f"an active game after four plies, {who} ({scheme})")
    t.alice.click("#decline-draw")
    t.alice.click("#resign")
    expect(t.alice.locator("#resign-box")).to_be_visible()
    assert_clean(t.alice, f"the resignation's confirmation ({scheme})")
    t.alice.click("#resign-confirm")
    for page in t.everyone:
        expect(page.locator("body")).to_have_attribute("data-status", "finished")
        expect(page.locator("#result-banner")).to_be_visible()
    for page, who in ((t.alice, "the loser"), (t.bob, "the winner"), (t.carol, "a spectator")):
        assert_clean(page, f"a finished game, {who} ({scheme})")


def test_analysis_board_has_no_axe_violations(server, new_context, scheme):
    page = new_context(color_scheme=scheme).new_page()
    page.goto(server.url + "/analysis")
    expect(page.locator("#analysis-status")).to_contain_text("to move")
    assert_clean(page, f"the analysis board ({scheme})")
    page.fill("#game-source", "1. 11-15 23-19 2. 8-11 22-17 1-0")
    page.click("#game-load")
    expect(page.locator("#move-list button.ply")).to_have_count(4)
    page.click("#replay-prev")
    page.click("#analyse")
    expect(page.locator("#engine-result")).to_be_visible(timeout=15_000)
    page.fill("#fen-input", "B:W5:B5")
    page.click("#fen-load")
    expect(page.locator("#fen-error")).to_be_visible()
    page.check("#mode-edit")
    assert_clean(page, f"the analysis board with a game, the engine's answer and a refused FEN ({scheme})")


# ---- what a screen reader hears ---------------------------------------------------------------


def heard(page: Page) -> list[str]:
    """Everything the game page's live region has said so far (kept by the page for tests)."""
    return page.evaluate("() => (window.checkersAnnounced || []).slice()")


def test_moves_offers_and_the_end_are_announced_in_words(server, new_context):
    t = live_table(server, new_context, "light", check=False)
    region = t.carol.locator("#announcer")
    expect(region).to_have_attribute("aria-live", "polite")
    assert t.carol.locator("#announcer").get_attribute("role") == "status"
    # A live game: the player who must make a first move is told once that it aborts after 30 s.
    expect(t.alice.locator("#announcer")).to_have_text(re.compile(r"Make your first move within (29|30) seconds"))
    play(t, OPENING)  # 11-15 22-18 15x22 26x17
    expect(region).to_have_text("White 26x17, captures 22")
    for page in t.everyone:
        said = heard(page)
        for line in ("Black 11-15", "White 22-18", "Black 15x22, captures 18", "White 26x17, captures 22"):
            assert any(text.startswith(line) for text in said), (line, said)
    assert any("Make your first move" in text for text in heard(t.bob))  # White's first move, after 11-15
    assert not any("Make your first move" in text for text in heard(t.carol))  # a spectator has none
    # A takeback proposed by bob (his 26x17), accepted by alice.
    t.bob.click("#propose-takeback")
    expect(t.carol.locator("#announcer")).to_have_text("White (bob) asks to take back a move.")
    t.alice.click("#accept-takeback")
    expect(t.carol.locator("body")).to_have_attribute("data-ply", "3")
    expect(t.carol.locator("#announcer")).to_have_text(
        "Takeback: the position before move 2 is back; White to move.")
    t.bob.click("#sq-26")
    t.bob.click("#sq-17")
    expect(t.carol.locator("#announcer")).to_have_text("White 26x17, captures 22")
    t.bob.click("#offer-draw")
    expect(t.alice.locator("#announcer")).to_have_text(re.compile(r"White \(bob\) offers a draw"))
    t.alice.click("#decline-draw")
    expect(t.bob.locator("#announcer")).to_have_text(re.compile(r"Black \(alice\) declined the draw"))
    t.alice.click("#resign")
    t.alice.click("#resign-confirm")
    expect(t.carol.locator("#announcer")).to_have_text(
        re.compile(r"^Game over: White \(bob\) wins\. Black resigned\. 0-1$"))
    # The board's active square is never a hidden one.
    for page in t.everyone:
        active = page.evaluate("""() => {
            const board = document.getElementById('board');
            const id = board.getAttribute('aria-activedescendant');
            if (!id) return 'none';
            const node = document.getElementById(id);
            return node && node.checkVisibility() ? 'visible' : `hidden: ${id}`;
        }""")
        assert active in ("none", "visible"), active
