"""A game opened with a 3-move ballot, in a real Chromium: chosen on the home page, shown on the game
page of both players and a spectator (the ballot's number and moves, its three plies on the board and
in the move list), and played on from White's first own move."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import expect

from game.rules import ballots
from tests.browser.seats import take_free_seat
from tests.browser.test_live_game import BOARD_JS, click_move, open_page

SCREENSHOTS = Path(os.environ.get("BROWSER_SCREENSHOTS_DIR", "/tmp"))
WHITE_DOCTOR = ballots.ballot(68)


def test_game_page_shows_the_ballot_and_play_goes_on_from_whites_move(new_context, server):
    alice = open_page(new_context, "alice")
    page = alice.page
    page.goto(server.url + "/")
    page.get_by_label("Your name").fill("alice")
    page.locator("#id_color label", has_text="White").click()
    page.select_option("#id_opening", "ballot")
    page.fill("#id_ballot", "68")
    page.locator("#create-game").click()
    expect(page).to_have_url(re.compile(r"/g/[^/]+/$"))
    url = page.url
    expect(page.locator("body")).to_have_attribute("data-you", "W")

    bob = open_page(new_context, "bob")
    bob.page.goto(url)
    take_free_seat(bob.page, "bob")
    carol = open_page(new_context, "carol")
    carol.page.goto(url)
    expected_board = {str(sq): piece for sq, piece in
                      ((n, WHITE_DOCTOR.record().position.piece_at(n)) for n in range(1, 33))}
    for person in (alice, bob, carol):
        p = person.page
        expect(p.locator("body")).to_have_attribute("data-status", "active")
        note = p.locator("#ballot-note")
        expect(note).to_be_visible()
        expect(note).to_have_attribute("data-ballot", "68")
        expect(note).to_have_text("3-move ballot 68: 10-14 22-18 12-16")
        expect(p.locator("#move-list button.ply")).to_have_text(list(WHITE_DOCTOR.moves))
        assert p.evaluate(BOARD_JS) == expected_board
    page.screenshot(path=str(SCREENSHOTS / "ballot-game-page.png"), full_page=True)

    # Neither side has made a move of its own: the players may still abort (the ballot's plies are the site's).
    expect(page.locator("#abort")).to_be_visible()
    expect(bob.page.locator("#abort")).to_be_visible()
    expect(carol.page.locator("#abort")).to_be_hidden()
    # White (alice) plays the first move of her own; everyone sees it after the ballot's plies.
    expect(page.locator("#connection")).to_have_attribute("data-state", "open")
    click_move(page, "24-20")
    for person in (alice, bob, carol):
        expect(person.page.locator("#move-list button.ply")).to_have_text([*WHITE_DOCTOR.moves, "24-20"])
    expect(bob.page.locator("body")).to_have_attribute("data-turn", "B")
    expect(bob.page.locator("#abort")).to_be_visible()     # Black has not moved yet


def test_a_barred_ballot_is_refused_on_the_home_page_and_nothing_starts(new_context, server):
    page = new_context().new_page()
    page.goto(server.url + "/")
    page.select_option("#id_opening", "ballot")
    page.fill("#id_ballot", "3")
    page.locator("#create-game").click()
    expect(page.locator("#ballot-errors")).to_contain_text("Ballot 3 (9-13 21-17 10-14) is barred")
    assert page.url.rstrip("/") == server.url
    expect(page.locator("#id_ballot")).to_have_value("3")
    page.screenshot(path=str(SCREENSHOTS / "ballot-refused-home.png"), full_page=True)
