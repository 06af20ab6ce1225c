"""The lobby you can see, in real browsers: a seek made with one click appears on another page, which
plays it with one click, from the list or from the chart's dot; axe-core finds nothing on the home page
with seeks listed, charted (light and dark) and with the custom seek dialog open."""

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
    # the total counts every pool's seeks, as the list and the quick buttons do (bob's chosen pool is another)
    expect(bob.locator("#seek-pool-count")).to_have_text("1 player waiting")
    bob.evaluate("""async () => {
        const src = document.querySelector('script[type=module][src*="/js/"]').src;
        const { SeekList } = await import(new URL('seeklist.js', src).href);
        const els = { online: document.getElementById('online-text'),
                      playing: document.getElementById('playing-text') };
        SeekList.prototype.onCounters.call({ els }, { online: 2, playing: 1 });
    }""")
    expect(bob.locator("#lobby-counters")).to_have_text("2 online · 1 game in play")
    bob.check("#seek-ballot")   # the count of the pool, as the news of the seek carried it (`waiting`)
    expect(bob.locator('.quick-seek[data-control="5+3"] .quick-waiting')).to_have_text("1 waiting")
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


def test_a_seek_is_a_dot_on_anothers_chart_which_plays_it_and_leaves_with_it(server, new_context):
    carol = open_home(new_context(), server, "carol")
    dave = open_home(new_context(), server, "dave")
    dave.click("#seek-view-chart")
    expect(dave.locator("#seek-view-chart")).to_have_attribute("aria-pressed", "true")
    carol.check("#seek-ballot")
    carol.click('.quick-seek[data-control="3+2"]')
    dot = dave.get_by_role("button", name="carol, no rating, 3+2, casual, 3-move ballot")
    expect(dot).to_be_visible()
    expect(dave.locator("#seek-list")).to_be_hidden()
    assert_clean(dave, "the home page with a seek on the chart (light)")
    carol.click("#seek-cancel")  # the seek gone, its dot goes
    expect(dot).to_have_count(0)
    expect(dave.locator("#seek-chart-wrap")).to_be_hidden()
    dave.reload()  # the choice of the chart is remembered
    expect(dave.locator("#seek-view-chart")).to_have_attribute("aria-pressed", "true")
    expect(dave.locator('.quick-seek[data-control="3+2"]')).to_be_enabled()
    carol.click('.quick-seek[data-control="3+2"]')
    dot.focus()
    dot.press("Enter")
    carol.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    dave.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    assert carol.url == dave.url
    expect(dave.locator("#time-control")).to_contain_text("3+2")


def test_the_seek_chart_has_no_axe_violations_in_the_dark(server, new_context):
    page = new_context(color_scheme="dark").new_page()
    page.goto(server.url + "/")
    page.click("#seek-view-chart")
    seeker = open_home(new_context(), server, "erin")
    seeker.click('.quick-seek[data-control="10+0"]')
    expect(page.locator('#seek-chart .seek-dot[role="button"]')).to_have_count(1)
    assert_clean(page, "the home page with a seek on the chart (dark)")
    # The columns go from the shortest game to the longest; the rating axis takes in every seek.
    columns, wide, narrow = page.evaluate("""async () => {
        const m = await import('/static/js/seekchart.js');
        const labels = {untimed: 'Untimed', '1d': '1 day', '10+0': '10+0', '3+2': '3+2', '5+0': '5+0', '1+0': '1+0'};
        return [m.columnsOf(labels), m.ratingAxis([950, 2310]), m.ratingAxis([])];
    }""")
    assert columns == ["1+0", "3+2", "5+0", "10+0", "1d", "untimed"]
    assert wide == {"low": 900, "high": 2400, "step": 200}
    assert narrow == {"low": 1200, "high": 1800, "step": 100}
