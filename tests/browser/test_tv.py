"""TV in a real browser: the correspondence channel shows the newest of two casual games in play
(no other browser test plays 7-day games); channels chosen, Back and Forward, and the next game when
that game ends on its player's page, all shown in place: the page is never loaded again, its socket
follows the game shown and the address is the channel's.  axe on the TV page and on the home page's
TV board."""

from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.test_accessibility import assert_clean
from tests.browser.test_game_actions import join_game

#: Screenshots of the TV page and the home page go here when CHECKERS_SCREENSHOTS is set (a directory).
SCREENSHOTS = os.environ.get("CHECKERS_SCREENSHOTS")


def seven_day_game(server, new_context, black: str, white: str) -> tuple[Page, str]:
    """``black`` creates a 7-day game as Black and ``white`` joins it: (Black's page, the game id)."""
    page = new_context().new_page()
    page.goto(server.url + "/")
    page.fill("#id_name", black)
    page.click("label[for=id_color_1]")
    page.select_option("#id_time_control", "7d")
    page.click("#create-game")
    page.wait_for_url(re.compile(r"/g/\w+/$"))
    url = page.locator("#invite-url").input_value()
    join_game(new_context().new_page(), url, white)
    expect(page.locator("body[data-status=active][data-you=B]")).to_be_attached()
    return page, url.rstrip("/").rsplit("/", 1)[-1]


def shot(page: Page, name: str, around: str | None = None) -> None:
    """Phone portrait and landscape screenshots of ``page``: the whole page, or the screen around
    the element ``around`` (a selector)."""
    if not SCREENSHOTS:
        return
    Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
    for label, size in (("portrait", {"width": 390, "height": 844}), ("landscape", {"width": 844, "height": 390})):
        page.set_viewport_size(size)
        if around:
            page.locator(around).scroll_into_view_if_needed()
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}-{label}.png"), full_page=around is None)
    page.set_viewport_size({"width": 1100, "height": 850})


def test_the_tv_page_goes_to_the_next_game_when_its_game_ends(server, new_context):
    _first_page, first = seven_day_game(server, new_context, "ann", "ben")
    second_page, second = seven_day_game(server, new_context, "cleo", "dan")

    viewer = new_context().new_page()
    viewer.goto(server.url + "/")
    viewer.click("#tv-link")
    viewer.wait_for_url(re.compile(r"/tv$"))
    viewer.evaluate("() => { window.loadedOnce = true; }")   # gone if the page were loaded again
    with viewer.expect_websocket(lambda ws: f"/ws/game/{second}/" in ws.url) as opened:
        viewer.click(".tv-channel[data-channel=correspondence]")
    viewer.wait_for_url(re.compile(r"/tv/correspondence$"))
    expect(viewer.locator("#tv-bar")).to_have_attribute("data-game", second)   # the newer of two casual games
    assert viewer.evaluate("() => window.loadedOnce") is True
    expect(viewer.locator(".tv-channel[data-channel=correspondence]")).to_be_focused()
    expect(viewer.locator("body[data-status=active][data-you='']")).to_be_attached()
    expect(viewer).to_have_title(re.compile(r"^TV: Correspondence"))
    expect(viewer.locator("#player-top")).to_contain_text("cleo")
    assert_clean(viewer, "the TV page")
    shot(viewer, "tv")

    viewer.click(".tv-channel[data-channel=classical]")   # no classical game in play: it says so
    viewer.wait_for_url(re.compile(r"/tv/classical$"))
    expect(viewer.locator("#tv-empty")).to_be_visible()
    expect(viewer).to_have_title(re.compile(r"^TV: Classical"))
    watched = opened.value   # the game shown before is no longer watched: its socket closes
    if not watched.is_closed():
        watched.wait_for_event("close")
    assert watched.is_closed()
    viewer.go_back()
    viewer.wait_for_url(re.compile(r"/tv/correspondence$"))
    expect(viewer.locator("#tv-bar")).to_have_attribute("data-game", second)
    expect(viewer.locator("#tv-title")).to_have_text("TV: Correspondence")
    expect(viewer).to_have_title(re.compile(r"^TV: Correspondence"))
    expect(viewer.locator("body[data-status=active]")).to_be_attached()
    viewer.go_forward()
    expect(viewer.locator(".tv-channel[aria-current=page]")).to_have_attribute("data-channel", "classical")
    viewer.go_back()
    expect(viewer.locator("body[data-status=active]")).to_be_attached()

    second_page.click("#abort")   # no move made yet: the game ends by abort
    second_page.click("#abort-confirm")
    expect(viewer.locator("body[data-status=aborted]")).to_be_attached()
    expect(viewer.locator("#tv-status")).not_to_be_empty()
    with viewer.expect_websocket(lambda ws: f"/ws/game/{first}/" in ws.url, timeout=10_000):
        expect(viewer.locator("#tv-bar")).to_have_attribute("data-game", first)
    expect(viewer.locator("body[data-status=active]")).to_be_attached()
    expect(viewer.locator("#player-top")).to_contain_text("ann")
    assert viewer.url.endswith("/tv/correspondence")   # the channel's address, the same entry
    shot(viewer, "tv-next")
    assert viewer.evaluate("() => window.loadedOnce") is True
    viewer.go_back()   # the entry before the channel chosen: the top channel, still in place
    viewer.wait_for_url(re.compile(r"/tv$"))
    expect(viewer.locator(".tv-channel[aria-current=page]")).to_have_attribute("data-channel", "top")
    assert viewer.evaluate("() => window.loadedOnce") is True

    viewer.goto(server.url + "/")
    expect(viewer.locator("#tv-mini-board circle.tv-piece").first).to_be_attached()   # drawn by the server
    shown = viewer.locator("#tv-mini").get_attribute("data-game")
    with viewer.expect_websocket(lambda ws: f"/ws/game/{shown}/" in ws.url):   # live once on screen
        viewer.locator("#tv-mini").scroll_into_view_if_needed()
    expect(viewer.locator("#tv-mini-board-link")).to_be_visible()
    assert_clean(viewer, "the home page with its TV board")
    shot(viewer, "home-tv", around="#tv-mini")


def test_a_channel_with_no_game_says_so_in_the_pages_language(server, new_context):
    page = new_context(locale="es-ES").new_page()
    page.goto(server.url + "/tv/classical")   # no other browser test plays a classical game
    expect(page.locator("#tv-title")).to_have_text("TV: Clásica")
    expect(page.locator("#tv-empty")).to_contain_text("Ahora mismo no se juega ninguna partida en este canal")
    expect(page.locator(".tv-channel[aria-current=page]")).to_have_attribute("data-channel", "classical")
    assert_clean(page, "a TV channel with no game")
    shot(page, "tv-empty-es")
