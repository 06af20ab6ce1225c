"""The bell and the "My games" badge in real browsers: a challenge rings and shows on the bell of
another page of its player; after the correspondence game it made, the opponent's move shows at
once on the bell and the badge of a page elsewhere.  axe-core finds nothing with the bell's panel
open, nor on My games with open challenges listed."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from tests.browser.test_accessibility import assert_clean
from tests.browser.test_clocks import play
from tests.browser.test_rated_pools import sign_up


def test_the_bell_and_the_badge_follow_a_challenge_and_the_opponents_move(server, new_context):
    tag = uuid.uuid4().hex[:6]
    ann = sign_up(new_context(), server, f"ann{tag}")
    ben = sign_up(new_context(), server, f"ben{tag}")
    ben.goto(server.url + "/games/mine")
    ann.goto(server.url + f"/@/ben{tag}")
    ann.select_option("#challenge-control", "1d")
    ann.select_option("#challenge-color", "B")
    ann.click("#challenge-send")
    ann.goto(server.url + "/games/mine")
    expect(ann.locator("#my-challenges .challenge-card.sent")).to_contain_text(f"ben{tag}")
    assert_clean(ann, "My games with a challenge sent")
    card = ben.locator("#my-challenges .challenge-card")
    expect(card).to_contain_text(f"ann{tag}")
    expect(ben.locator("body")).to_have_attribute("data-last-sound", "challenge")
    expect(ben.locator("#bell-count")).to_have_text("1")
    ben.click("#bell-button")
    expect(ben.locator("#bell-list li[data-kind=challenge]")).to_contain_text(f"ann{tag} challenges you")
    expect(ben.locator("#bell-count")).to_be_hidden()  # read on opening
    assert_clean(ben, "the bell's panel open on My games with a challenge received")
    ben.keyboard.press("Escape")
    expect(ben.locator("#bell-panel")).to_be_hidden()
    card.locator(".challenge-accept").click()
    ann.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    ben.wait_for_url(ann.url)
    elsewhere = ben.context.new_page()
    elsewhere.goto(server.url + "/how-to-play")
    expect(elsewhere.locator("#bell-button")).to_be_visible()
    expect(elsewhere.locator("#turn-badge")).to_have_count(0)
    play(ann, "11-15", [ann, ben])
    expect(elsewhere.locator("#turn-badge")).to_have_text("1")
    expect(elsewhere.locator("#bell-count")).to_have_text("1")
    elsewhere.click("#bell-button")
    line = elsewhere.locator("#bell-list li[data-kind=turn]")
    expect(line).to_contain_text(f"ann{tag}")
    expect(line.locator("a")).to_have_attribute("href", ann.url.removeprefix(server.url))
    expect(ben.locator("#bell-count")).to_be_hidden()  # read on every page of ben's
    play(ben, "22-18", [ann, ben])
    expect(elsewhere.locator("#turn-badge")).to_have_count(0)
    expect(ann.locator("#bell-count")).to_have_text("2")  # the challenge accepted, and ann's move
    ann.click("#bell-button")
    expect(ann.locator("#bell-list li.unread")).to_have_count(2)
    expect(ann.locator("#bell-list li").first).to_have_attribute("data-kind", "turn")
    for size, name in (((390, 844), "portrait"), ((844, 390), "landscape")):
        elsewhere.set_viewport_size({"width": size[0], "height": size[1]})
        elsewhere.screenshot(path=f"/tmp/bell-{name}.png")
        ann.set_viewport_size({"width": size[0], "height": size[1]})
        ann.screenshot(path=f"/tmp/bell-game-{name}.png")
