"""A challenge by name in real browsers: sent from a profile, received live on another page of the
other player, accepted there; both pages go to the game.  axe-core finds nothing on the profile with
its challenge form nor on a page showing a challenge."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from tests.browser.test_accessibility import assert_clean
from tests.browser.test_rated_pools import sign_up


def test_a_challenge_sent_from_a_profile_is_accepted_on_another_page(server, new_context):
    tag = uuid.uuid4().hex[:6]
    ann = sign_up(new_context(), server, f"ann{tag}")
    ben = sign_up(new_context(), server, f"ben{tag}")
    ben.goto(server.url + "/how-to-play")
    ann.goto(server.url + f"/@/ben{tag}")
    expect(ann.locator("#challenge-form")).to_be_visible()
    assert_clean(ann, "a profile with its challenge form")
    ann.select_option("#challenge-control", "3+2")
    ann.select_option("#challenge-color", "W")
    ann.check("#challenge-ballot")
    ann.click("#challenge-send")
    expect(ann.locator("#challenge-status")).to_contain_text(f"ben{tag}")
    card = ben.locator("#challenge-inbox .challenge-card")
    expect(card).to_contain_text(f"ann{tag}")
    expect(card).to_contain_text("3+2")
    expect(card).to_contain_text("you play Black")
    assert_clean(ben, "a page showing a challenge")
    card.locator(".challenge-accept").click()
    ann.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    ben.wait_for_url(re.compile(r"/g/[a-z0-9]+/$"))
    assert ann.url == ben.url
    for page in (ann, ben):
        expect(page.locator("#time-control")).to_contain_text("3+2")
        expect(page.locator("body")).to_have_attribute("data-status", "active")
    expect(ann.locator("body")).to_have_attribute("data-you", "W")


def test_a_declined_challenge_tells_its_sender_why_and_a_followed_player_shows_online(server, new_context):
    tag = uuid.uuid4().hex[:6]
    ann = sign_up(new_context(), server, f"ann{tag}")
    ben = sign_up(new_context(), server, f"ben{tag}")
    ann.goto(server.url + f"/@/ben{tag}")
    ann.click("#challenge-send")
    card = ben.locator("#challenge-inbox .challenge-card")
    expect(card).to_be_visible()
    card.locator(".challenge-reason").select_option("too_fast")
    card.locator(".challenge-decline").click()
    expect(card).to_have_count(0)
    expect(ann.locator("#challenge-status")).to_contain_text("Too fast")
    ann.click("#follow-button")
    expect(ann.locator("#follow-button")).to_have_text("Unfollow")
    ann.goto(server.url + "/games/mine")
    followed = ann.locator(f'#following-list li[data-player="ben{tag}"]')
    expect(followed).to_contain_text("online")
    assert_clean(ann, "My games with the players followed")
