"""Conditional moves in real browsers: in a correspondence game alice (Black) stores a forecast in
the page's panel while bob (White) is to move; bob plays the foreseen move and alice's reply
appears at once on both boards and the spectator's, as an ordinary move."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.seats import take_free_seat
from tests.browser.test_game_actions import Table, expect_board, new_page, play, positions_after, shot


def start_correspondence(server, new_context) -> Table:
    alice = new_page(new_context)
    alice.goto(server.url + "/")
    alice.fill("#id_name", "alice")
    alice.click("label[for=id_color_1]")  # Black (moves first)
    alice.locator("#id_time_control").select_option("3d")
    alice.click("#create-game")
    alice.wait_for_url(re.compile(r"/g/\w+/$"))
    url = alice.locator("#invite-url").input_value()
    bob = new_page(new_context)
    bob.goto(url)
    take_free_seat(bob, "bob")
    expect(alice.locator("body[data-status=active][data-you=B]")).to_be_attached()
    carol = new_page(new_context)
    carol.goto(url)
    expect(carol.locator("body[data-status=active][data-you='']")).to_be_attached()
    return Table(url, alice, bob, carol)


def test_a_stored_forecast_answers_the_opponent_at_once_on_every_board(server, new_context):
    t = start_correspondence(server, new_context)
    expect(t.alice.locator("#forecast")).to_be_visible()
    expect(t.alice.locator("#forecast-save")).to_be_disabled()   # alice's own move first
    expect(t.carol.locator("#forecast")).to_be_hidden()
    play(t, ["11-15"])

    # A line that cannot be played is refused in the panel; nothing is stored.
    expect(t.alice.locator("#forecast-save")).to_be_enabled()
    t.alice.fill("#forecast-text", "22-18 16-19")
    t.alice.click("#forecast-save")
    expect(t.alice.locator("#forecast-error")).to_contain_text("16-19")
    expect(t.alice.locator("#forecast-lines")).to_be_hidden()

    t.alice.fill("#forecast-text", "22-18 15x22 25x18 8-11\n23-19 8-11")
    t.alice.click("#forecast-save")
    expect(t.alice.locator("#forecast-lines li")).to_have_text(["22-18 15x22 25x18 8-11", "23-19 8-11"])
    expect(t.alice.locator("#forecast-error")).to_be_hidden()
    expect(t.bob.locator("#forecast-lines li")).to_have_count(0)   # the opponent never sees it
    shot(t.alice, "forecast-stored")

    # Bob plays 22-18: alice's 15x22 follows at once, on every board, and the tail is kept.
    expect(t.bob.locator("#board.interactive")).to_be_attached()
    t.bob.click("#sq-22")
    t.bob.click("#sq-18")
    after = positions_after(["11-15", "22-18", "15x22"])[-1]
    for page in t.everyone:
        expect(page.locator("body[data-ply='3'][data-turn=W]")).to_be_attached()
        expect_board(page, after)
        expect(page.locator("#move-list [data-ply]")).to_have_text(["11-15", "22-18", "15x22"])
    expect(t.alice.locator("#forecast-lines li")).to_have_text(["25x18 8-11"])
    expect(t.alice.locator("#forecast-text")).to_have_value("25x18 8-11")

    # Bob answers with the other capture: no line foresaw it, the forecast is cleared.
    t.bob.click("#sq-26")
    t.bob.click("#sq-17")
    for page in t.everyone:
        expect(page.locator("body[data-ply='4'][data-turn=B]")).to_be_attached()
    expect(t.alice.locator("#forecast-lines")).to_be_hidden()
    expect(t.alice.locator("#forecast-text")).to_have_value("")
    expect(t.alice.locator("#forecast-save")).to_be_disabled()
    play(t, ["8-11"], first_ply=5)
    shot(t.alice, "forecast-cleared")
