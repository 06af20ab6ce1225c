"""Play online in real browsers: two people press a quick-pairing button (or seek from the custom
dialog) and meet in one game."""

from __future__ import annotations

import re

from playwright.sync_api import expect


def open_home(context, server, name: str):
    page = context.new_page()
    page.goto(server.url + "/")
    page.fill("#id_name", name)
    expect(page.locator("#play-online")).to_be_enabled()
    expect(page.locator('.quick-seek[data-control="5+0"]')).to_be_enabled()
    return page


def custom_seek(page, control: str) -> None:
    """Seek ``control`` from the custom dialog."""
    page.click("#custom-seek-open")
    page.select_option("#seek-pool", control)
    page.click("#play-online")


def test_two_people_pressing_a_quick_pairing_button_meet_in_one_game(server, new_context):
    alice = open_home(new_context(), server, "alice")
    bob = open_home(new_context(), server, "bob")
    alice.click('.quick-seek[data-control="5+0"]')
    expect(alice.locator("#seek-status")).to_have_attribute("data-state", "seeking")
    expect(alice.locator("#seek-cancel")).to_be_visible()
    expect(alice.locator('.quick-seek[data-control="5+0"]')).to_have_attribute("aria-pressed", "true")
    expect(bob.locator('.quick-seek[data-control="5+0"] .quick-waiting')).to_have_text("1 waiting")
    bob.click('.quick-seek[data-control="5+0"]')
    alice.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    bob.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    assert alice.url == bob.url
    for page in (alice, bob):
        expect(page.locator("#time-control")).to_contain_text("5+0")
        expect(page.locator("body")).to_have_attribute("data-status", "active")
    seats = {alice.evaluate("document.body.dataset.you"), bob.evaluate("document.body.dataset.you")}
    assert seats == {"B", "W"}
    black, white = (alice, bob) if alice.evaluate("document.body.dataset.you") == "B" else (bob, alice)
    black.click('[data-square="11"]')
    black.click('[data-square="15"]')
    for page in (black, white):
        expect(page.locator("body")).to_have_attribute("data-ply", "1")
        expect(page.locator("#move-list")).to_contain_text("11-15")


def test_cancelled_seek_meets_nobody(server, new_context):
    alice = open_home(new_context(), server, "alice")
    bob = open_home(new_context(), server, "bob")
    custom_seek(alice, "untimed")
    expect(alice.locator("#seek-status")).to_have_attribute("data-state", "seeking")
    bob.click("#custom-seek-open")
    bob.select_option("#seek-pool", "untimed")
    bob.click("#custom-seek-close")
    expect(bob.locator("#seek-count")).to_have_text("1")
    alice.click("#seek-cancel")
    expect(alice.locator('.quick-seek[data-control="15+10"]')).to_be_enabled()
    expect(bob.locator("#seek-count")).to_have_text("0")
    custom_seek(bob, "untimed")
    expect(bob.locator("#seek-status")).to_have_attribute("data-state", "seeking")
    expect(alice.locator("#seek-count")).to_have_text("1")
    assert alice.url.endswith("/") and "/g/" not in alice.url
    bob.click("#seek-cancel")
    expect(bob.locator('.quick-seek[data-control="15+10"]')).to_be_enabled()
