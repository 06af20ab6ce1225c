"""The lobby you can see, in real browsers: a seek made with one click appears on another page, which
plays it with one click; axe-core finds nothing on the home page with seeks listed and with the custom
seek dialog open."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.test_accessibility import assert_clean


def open_home(context, server, name: str):
    page = context.new_page()
    page.goto(server.url + "/")
    page.fill("#id_name", name)
    expect(page.locator('.quick-seek[data-control="5+3"]')).to_be_enabled()
    return page


def test_a_seek_made_in_one_click_is_seen_and_played_in_one_click(server, new_context):
    alice = open_home(new_context(), server, "alice")
    bob = open_home(new_context(), server, "bob")
    alice.check("#seek-ballot")
    alice.click('.quick-seek[data-control="5+3"]')
    expect(alice.locator("#seek-status")).to_have_attribute("data-state", "seeking")
    expect(alice.locator("#seek-list tbody tr")).to_have_count(1)
    expect(alice.locator("#seek-list tbody tr .seek-play")).to_have_count(0)  # one's own seek: no button
    row = bob.locator("#seek-list tbody tr", has_text="alice")
    expect(row).to_contain_text("5+3")
    expect(row).to_contain_text("3-move ballot")
    expect(bob.locator("#online-count")).not_to_have_text("0")
    assert_clean(bob, "the home page with a seek listed")
    row.locator(".seek-play").click()
    alice.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    bob.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    assert alice.url == bob.url
    for page in (alice, bob):
        expect(page.locator("#time-control")).to_contain_text("5+3")
        expect(page.locator("body")).to_have_attribute("data-status", "active")


def test_the_custom_seek_dialog_has_no_axe_violations(server, new_context):
    for scheme in ("light", "dark"):
        page = new_context(color_scheme=scheme).new_page()
        page.goto(server.url + "/")
        expect(page.locator('.quick-seek[data-control="1+0"]')).to_be_enabled()
        page.click("#custom-seek-open")
        expect(page.locator("#seek-pool")).to_be_visible()
        assert_clean(page, f"the home page's custom seek dialog ({scheme})")
        page.click("#custom-seek-close")
        expect(page.locator("#seek-pool")).to_be_hidden()


def test_a_rated_seeker_is_told_who_waits_out_of_range_and_when_the_range_reaches_them(server, new_context):
    page = new_context().new_page()
    page.goto(server.url + "/")
    expect(page.locator('.quick-seek[data-control="5+3"]')).to_be_enabled()
    words = page.evaluate("""async () => {
        const m = await import('/static/js/seeklist.js');
        const range = {start: 100, step: 50, step_s: 5, max: 500};
        const mine = {id: 'me', rating: 1500, waitedMs: 0};
        const seeks = [{id: 'me', rating: 1500, waited_ms: 0}, {id: 'a', rating: 1560, waited_ms: 0},
                       {id: 'b', rating: 1800, waited_ms: 12000}, {id: 'c', rating: 2100, waited_ms: 0}];
        const view = m.rangeView(mine, range, seeks);
        return [view, m.rangeNote(view), m.rangeNote(m.rangeView(mine, range, [seeks[0]]))];
    }""")
    view, note, alone = words
    # 1560 is in range now; 1800 comes in range when the longer wait (12 s) reaches 20 s; 2100 never.
    assert view == {"others": 3, "outside": 2, "nearest": {"rating": 1800, "seconds": 8}}
    assert note == ("3 other players waiting; 2 outside your range for now; "
                    "a player rated 1800 comes in range in about 8 s.")
    assert alone == "Nobody else is waiting for this game yet."
