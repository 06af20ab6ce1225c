"""Takebacks in real browsers: alice (Black) proposes, bob (White) accepts or declines, carol watches.

The game is made the way people make one (tests/browser/test_game_actions.py: the home page, the
invite link, a third browser watching). Expected boards come from the rules package.
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.test_game_actions import expect_board, play, positions_after, shot, start


def move_list(page) -> list[str]:
    """The moves the page's move list shows, ply 1 first."""
    return page.locator("#move-list [data-ply]").all_inner_texts()


def test_takeback_proposed_accepted_and_seen_by_both_players_and_a_spectator(server, new_context):
    t = start(server, new_context)
    play(t, ["11-15", "23-19", "8-11"])
    version = int(t.carol.locator("body").get_attribute("data-version"))

    # Alice takes back her 8-11 before bob replies.
    expect(t.alice.locator("#propose-takeback")).to_be_enabled()
    expect(t.bob.locator("#propose-takeback")).to_be_enabled()
    expect(t.carol.locator("#propose-takeback")).to_be_hidden()
    t.alice.click("#propose-takeback")
    expect(t.bob.locator("#takeback-offer-box")).to_be_visible()
    expect(t.bob.locator("#takeback-offer-text")).to_have_text("alice proposes to take back their last move")
    # Its mark is the takeback's own, not the draw offer's "½".
    mark = t.bob.locator("#takeback-offer-text").evaluate("e => getComputedStyle(e, '::before').content")
    assert mark == '"↶"', mark
    expect(t.bob.locator("#propose-takeback")).to_be_hidden()
    expect(t.alice.locator("#takeback-pending")).to_have_text("Takeback proposed by you · waiting for bob")
    expect(t.alice.locator("#propose-takeback")).to_be_disabled()
    expect(t.alice.locator("#accept-takeback")).to_be_hidden()
    expect(t.carol.locator("#takeback-pending")).to_have_text("Takeback proposed by alice")
    expect(t.carol.locator("#accept-takeback")).to_be_hidden()
    shot(t.bob, "takeback-proposal-received")
    shot(t.alice, "takeback-proposal-pending")

    t.bob.click("#accept-takeback")
    # The notice first: it shows for a few seconds only.
    expect(t.alice.locator("#status")).to_have_text("Takeback accepted: it is your move again.")
    expect(t.carol.locator("#status")).to_have_text("alice took back a move.")
    expect(t.bob.locator("#status")).to_have_text("alice took back a move.")
    shot(t.carol, "takeback-done-spectator")
    two = positions_after(["11-15", "23-19"])[-1]
    for page in t.everyone:
        expect(page.locator(f"body[data-ply='2'][data-version='{version + 2}'][data-turn=B]")).to_be_attached()
        expect_board(page, two)
        assert move_list(page) == ["11-15", "23-19"]
        expect(page.locator("#takeback-pending")).to_be_hidden()
        expect(page.locator("#takeback-offer-box")).to_be_hidden()

    # Alice plays another move instead; the move list, the board and the replay follow it.
    play(t, ["9-13"], first_ply=3)
    for page in t.everyone:
        assert move_list(page) == ["11-15", "23-19", "9-13"]
        expect_board(page, positions_after(["11-15", "23-19", "9-13"])[-1])
    t.carol.click("#move-list [data-ply='1']")
    expect(t.carol.locator("body[data-shown-ply='1']")).to_be_attached()
    expect_board(t.carol, positions_after(["11-15"])[-1])
    t.carol.keyboard.press("End")
    expect(t.carol.locator("body[data-shown-ply='3']")).to_be_attached()

    # The PDN has only the moves that remain.
    pdn = t.alice.request.get(t.url.rstrip("/") + ".pdn").text()
    assert "1. 11-15 23-19 2. 9-13" in pdn and "8-11" not in pdn


def test_takeback_declined_then_the_proposer_waits_and_a_move_declines(server, new_context):
    t = start(server, new_context, spectator=False)
    play(t, ["11-15", "23-19"])
    # Bob proposes on alice's turn; alice declines.
    t.bob.click("#propose-takeback")
    expect(t.alice.locator("#decline-takeback")).to_be_visible()
    t.alice.click("#decline-takeback")
    expect(t.alice.locator("#takeback-offer-box")).to_be_hidden()
    expect(t.bob.locator("#status")).to_have_text("alice declined the takeback.")
    hint = t.bob.locator("#takeback-hint")
    expect(hint).to_have_text(
        "Your takeback proposal was declined. You can propose again after 2 more moves of yours.")
    expect(t.bob.locator("#propose-takeback")).to_be_disabled()
    shot(t.bob, "takeback-declined-proposer")

    # Alice proposes on bob's turn after her move; bob plays on instead, which declines it.
    play(t, ["8-11"], first_ply=3)
    t.alice.click("#propose-takeback")
    expect(t.bob.locator("#takeback-offer-box")).to_be_visible()
    play(t, ["22-18"], first_ply=4)
    expect(t.alice.locator("#status")).to_have_text("bob played on: your takeback proposal is declined.")
    expect(t.bob.locator("#takeback-offer-box")).to_be_hidden()
    expect(t.alice.locator("#takeback-hint")).to_contain_text("after 2 more moves of yours")
    expect(t.bob.locator("#takeback-hint")).to_have_text(
        "Your takeback proposal was declined. You can propose again after 1 more move of yours.")


def start_computer_game(page, url: str, level: int) -> None:
    """Start a game against the computer at ``level`` from the home page, alice playing Black."""
    page.goto(url + "/")
    page.fill("#id_name", "alice")
    expect(page.locator("#computer-takebacks")).to_have_text(
        "Levels 1 to 4 let you take back a move at once; levels 5 to 9 grant no takebacks.")
    page.locator(f"#computer-form label:has(input[name=level][value='{level}'])").click()
    page.locator("#computer-form .side-choice label", has_text="Black").click()
    page.click("#play-computer")
    expect(page.locator("body[data-status=active][data-you=B]")).to_be_attached()


def test_the_computer_grants_a_takeback_at_level_2_and_the_page_says_level_5_grants_none(server, new_context):
    page = new_context().new_page()
    start_computer_game(page, server.url, 2)
    expect(page.locator("#propose-takeback")).to_be_disabled()  # nothing to take back yet
    page.click("#sq-11")
    page.click("#sq-15")
    expect(page.locator("body[data-ply='2']")).to_be_attached(timeout=20_000)  # the computer replied
    expect(page.locator("#propose-takeback")).to_be_enabled()
    page.click("#propose-takeback")
    expect(page.locator("body[data-ply='0'][data-turn=B]")).to_be_attached()
    expect(page.locator("#status")).to_have_text("Takeback accepted: it is your move again.")
    assert move_list(page) == []
    expect_board(page, positions_after([])[0])

    strong = new_context().new_page()
    start_computer_game(strong, server.url, 5)
    expect(strong.locator("#takeback-hint")).to_have_text(
        "The computer at level 5 grants no takebacks (levels 1 to 4 do).")
    expect(strong.locator("#propose-takeback")).to_be_hidden()
    shot(strong, "takeback-computer-level-5")
