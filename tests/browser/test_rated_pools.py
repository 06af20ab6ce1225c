"""Rated pools of Play online in real browsers: a guest sees them closed; two new accounts meet in
a rated pool, the page showing each one's rating and the range it accepts."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect


def sign_up(context, server, username: str):
    """Sign up ``username`` in ``context`` (the sign-up page), then open the home page."""
    page = context.new_page()
    page.goto(server.url + "/accounts/signup/")
    password = f"Pw-{uuid.uuid4().hex}"
    page.fill("#id_username", username)
    page.fill("#id_password1", password)
    page.fill("#id_password2", password)
    page.locator("form button[type=submit]").last.click()
    page.wait_for_load_state()
    page.goto(server.url + "/")
    expect(page.locator("#play-online")).to_be_enabled()
    return page


def test_a_guest_sees_rated_disabled_with_the_reason_beside_it(server, new_context):
    page = new_context().new_page()
    page.goto(server.url + "/")
    page.evaluate("() => localStorage.setItem('checkers.lobby.choices', '{\"rated\": true}')")
    page.reload()
    expect(page.locator('.quick-seek[data-control="5+0"]')).to_be_enabled()
    expect(page.locator("#seek-rated")).to_be_disabled()
    expect(page.locator("#seek-rated")).not_to_be_checked()  # a remembered choice gives a guest no rating
    expect(page.locator("#rated-pools-hint")).to_be_visible()
    assert page.locator("#seek-rated").get_attribute("aria-describedby") == "rated-pools-hint"
    expect(page.locator("#seek-ballot")).to_be_enabled()


def test_two_accounts_meet_in_a_rated_pool(server, new_context):
    tag = uuid.uuid4().hex[:6]
    ann = sign_up(new_context(), server, f"ann{tag}")
    ben = sign_up(new_context(), server, f"ben{tag}")
    for page in (ann, ben):
        expect(page.locator("#rated-pools-hint")).to_have_count(0)
        page.check("#seek-rated")
    ann.click('.quick-seek[data-control="5+0"]')
    expect(ann.locator("#seek-status")).to_have_attribute("data-state", "seeking")
    expect(ann.locator("#seek-range")).to_contain_text("1500")
    expect(ann.locator("#seek-range")).to_contain_text("1400")
    expect(ben.locator('.quick-seek[data-control="5+0"] .quick-waiting')).to_have_text("1 waiting")
    ben.reload()  # the toggle is remembered by the browser
    expect(ben.locator("#seek-rated")).to_be_checked()
    expect(ben.locator('.quick-seek[data-control="5+0"]')).to_be_enabled()
    ben.click('.quick-seek[data-control="5+0"]')
    ann.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    ben.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    assert ann.url == ben.url
    for page in (ann, ben):
        expect(page.locator("#time-control")).to_contain_text("5+0")
        expect(page.locator("body")).to_have_attribute("data-status", "active")
        expect(page.locator("body")).to_contain_text(f"ann{tag}")
        expect(page.locator("body")).to_contain_text(f"ben{tag}")
