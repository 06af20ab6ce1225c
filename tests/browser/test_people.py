"""Blocks, reports and game search in real browsers: a player blocks another from the profile, whose
challenge is then refused; the report form opens from a game page's link; the search page lists and
filters.  axe-core finds nothing on a profile with its Block and Report panel, nor on the search
page, nor on the country setting."""

from __future__ import annotations

import uuid

from playwright.sync_api import expect

from tests.browser.test_accessibility import assert_clean
from tests.browser.test_rated_pools import sign_up


def test_a_blocked_player_cannot_challenge_and_the_search_page_is_clean(server, new_context):
    tag = uuid.uuid4().hex[:6]
    ann = sign_up(new_context(), server, f"ann{tag}")
    ben = sign_up(new_context(), server, f"ben{tag}")
    ann.goto(server.url + f"/@/ben{tag}")
    ann.locator("#report-box summary").click()
    expect(ann.locator("#report-form")).to_be_visible()
    assert_clean(ann, "a profile with its Block and Report panel")
    ann.click("#block-button")
    expect(ann.locator("#site-messages")).to_contain_text(f"You block ben{tag}")
    expect(ann.locator("#unblock-button")).to_be_visible()
    ben.goto(server.url + f"/@/ann{tag}")
    expect(ben.locator("#challenge-send")).to_be_enabled()
    ben.click("#challenge-send")
    expect(ben.locator("#challenge-status")).to_have_text("You cannot challenge this player.")
    ann.goto(server.url + "/settings/country")
    ann.select_option("#id_country", "FR")
    ann.click("#country-save")
    expect(ann.locator("#country-current")).to_contain_text("France")
    expect(ann.locator("#blocked-list")).to_contain_text(f"ben{tag}")
    assert_clean(ann, "the country and blocked players setting")
    ann.goto(server.url + f"/games/search?player=ann{tag}&rated=no")
    expect(ann.locator("#search-empty")).to_be_visible()
    assert_clean(ann, "the game search page")
