"""The site's header on phones, signed in with a long username, in English, French and Spanish: the
page is no wider than the screen, the language picker, the bell and the account menu are on it, and
the panels they open fit on it too."""

from __future__ import annotations

import itertools
import uuid

from playwright.sync_api import expect

from tests.browser.test_accessibility import assert_clean
from tests.browser.test_rated_pools import sign_up

#: A phone held sideways, then upright.
PHONES = [(844, 390), (390, 844)]

WIDTHS = """() => ({
  page: document.documentElement.scrollWidth,
  screen: window.innerWidth,
  parts: Object.fromEntries(['#language-select', '#bell-button', '#account-summary', '#bell-panel', '#account-panel']
    .map((s) => [s, document.querySelector(s)]).filter(([, e]) => e && e.offsetParent)
    .map(([s, e]) => { const b = e.getBoundingClientRect(); return [s, [b.left, b.right]]; })),
})"""


def assert_fits(page, what: str, expected: tuple[str, ...]) -> None:
    """No horizontal scrolling, and each of ``expected`` (CSS selectors) shown within the screen."""
    found = page.evaluate(WIDTHS)
    assert found["page"] <= found["screen"], f"{what}: the page is {found['page']} px wide on {found['screen']}"
    for selector in expected:
        assert selector in found["parts"], f"{what}: {selector} is not shown"
        left, right = found["parts"][selector]
        assert left >= 0 and right <= found["screen"], f"{what}: {selector} spans {left}-{right} px"


def test_the_header_fits_a_phone_either_way_up(server, new_context):
    context = new_context()
    page = sign_up(context, server, f"player_{uuid.uuid4().hex[:13]}")  # 20 characters, the most
    for language, (width, height) in itertools.product(("en", "fr", "es"), PHONES):
        context.add_cookies([{"name": "django_language", "value": language, "url": server.url}])
        what = f"{language}, {width}x{height}"
        page.set_viewport_size({"width": width, "height": height})
        page.goto(server.url + "/")
        expect(page.locator("html")).to_have_attribute("lang", language)
        assert_fits(page, what, ("#language-select", "#bell-button", "#account-summary"))
        page.click("#bell-button")
        expect(page.locator("#bell-panel")).to_be_visible()
        assert_fits(page, f"{what}, the bell open", ("#bell-panel",))
        page.keyboard.press("Escape")
        page.focus("#account-summary")
        page.keyboard.press("Enter")                                  # the account menu, by keyboard
        expect(page.locator("#logout-button")).to_be_visible()
        assert_fits(page, f"{what}, the account menu open", ("#account-panel",))
        page.keyboard.press("Escape")
        expect(page.locator("#logout-button")).to_be_hidden()
        expect(page.locator("#account-summary")).to_be_focused()
        if language == "fr" and height > width:
            assert_clean(page, "the header on a phone held upright")
