"""Accounts in real browsers: a guest signs up in the middle of a game and keeps the seat; the same
account logged in on a second browser context is that seat too and can move (game/accounts,
docs/accounts.md).  Moves are clicked, as people play them."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.seats import take_free_seat
from tests.browser.test_live_game import click_move

pytestmark = pytest.mark.usefixtures("fresh_rate_limits")

PASSWORD = "squares-and-kings-32"


def open_game(page: Page, server, name: str) -> str:
    """``page`` creates an untimed game as Black under ``name``; returns the invite link."""
    page.goto(server.url + "/")
    page.get_by_label("Your name").fill(name)
    page.locator("#id_color label", has_text="Black (moves first)").click()
    page.locator("#create-game").click()
    expect(page).to_have_url(re.compile(r"/g/[^/]+/$"))
    return page.locator("#invite-url").input_value()


def join(page: Page, url: str, name: str) -> None:
    page.goto(url)
    take_free_seat(page, name)
    expect(page.locator("body")).to_have_attribute("data-you", "W")


def ready(page: Page, ply: int) -> None:
    """The game page shows ``ply`` plies played and its socket is open."""
    expect(page.locator("body")).to_have_attribute("data-ply", str(ply))
    expect(page.locator("#connection")).to_have_attribute("data-state", "open")


def test_a_guest_signs_up_mid_game_keeps_the_seat_and_a_second_browser_is_the_seat_too(new_context, server):
    ann = new_context().new_page()
    url = open_game(ann, server, "ann")
    ben = new_context().new_page()
    join(ben, url, "ben")
    expect(ann.locator("body")).to_have_attribute("data-you", "B")
    ready(ann, 0)
    click_move(ann, "11-15")
    ready(ben, 1)

    # Ann signs up from the header in the middle of the game and comes back to it.
    ann.locator("#signup-link").click()
    expect(ann).to_have_url(re.compile(r"/accounts/signup/"))
    ann.fill("input[name=username]", "ann_plays")
    ann.fill("input[name=password1]", PASSWORD)
    ann.fill("input[name=password2]", PASSWORD)
    ann.locator("form.account-form button[type=submit]").click()
    expect(ann).to_have_url(url)
    expect(ann.locator("#account-name")).to_have_text("ann_plays")
    expect(ann.locator("body")).to_have_attribute("data-you", "B")   # still Black's seat
    click_move(ben, "23-19")
    ready(ann, 2)
    click_move(ann, "8-11")
    ready(ben, 3)

    # The same account on another browser (another context: other cookies) is Black's seat too.
    phone = new_context().new_page()
    phone.goto(server.url + "/accounts/login/?next=" + url.removeprefix(server.url))
    phone.fill("input[name=login]", "ANN_PLAYS")                   # whatever the case
    phone.fill("input[name=password]", PASSWORD)
    phone.locator("form.account-form button[type=submit]").click()
    expect(phone).to_have_url(url)
    expect(phone.locator("body")).to_have_attribute("data-you", "B")
    click_move(ben, "22-18")
    ready(phone, 4)
    ready(ann, 4)
    click_move(phone, "15x22")                                     # the phone moves for Ann
    for page in (ann, ben, phone):
        ready(page, 5)

    # Logged out, the phone is a guest again: a spectator of the game.
    phone.locator("#account-summary").click()                      # the account menu
    phone.locator("#logout-button").click()
    expect(phone.locator("#login-link")).to_be_visible()
    phone.goto(url)
    expect(phone.locator("body")).to_have_attribute("data-you", "")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_account_pages_have_no_axe_violations(new_context, server, scheme):
    from tests.browser.test_accessibility import assert_clean

    page = new_context(color_scheme=scheme).new_page()
    for path in ("/accounts/login/", "/accounts/signup/", "/accounts/password/reset/"):
        page.goto(server.url + path)
        assert_clean(page, path)
    page.goto(server.url + "/accounts/signup/")
    page.fill("input[name=username]", f"axe_{scheme}")              # refused: a short password
    page.fill("input[name=password1]", "short")
    page.fill("input[name=password2]", "short")
    page.locator("form.account-form button[type=submit]").click()
    expect(page.locator("form.account-form")).to_contain_text("too short")
    assert_clean(page, "sign-up with errors")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.locator("form.account-form button[type=submit]").click()
    expect(page.locator("#account-name")).to_have_text(f"axe_{scheme}")
    for path in ("/accounts/password/change/", "/accounts/delete/"):
        page.goto(server.url + path)
        assert_clean(page, path)


def log_in(page: Page, server, username: str, next_path: str = "") -> None:
    page.goto(server.url + "/accounts/login/" + (f"?next={next_path}" if next_path else ""))
    page.fill("input[name=login]", username)
    page.fill("input[name=password]", PASSWORD)
    page.locator("form.account-form button[type=submit]").click()
    expect(page.locator("#account-name")).to_have_text(username)


def test_a_tab_left_open_while_its_browser_logs_in_stays_the_seat(new_context, server):
    setup = new_context().new_page()                 # an account made earlier, elsewhere
    setup.goto(server.url + "/accounts/signup/")
    setup.fill("input[name=username]", "quinn")
    setup.fill("input[name=password1]", PASSWORD)
    setup.fill("input[name=password2]", PASSWORD)
    setup.locator("form.account-form button[type=submit]").click()
    expect(setup.locator("#account-name")).to_have_text("quinn")

    browser = new_context()                          # a guest's browser: two tabs
    tab = browser.new_page()
    sockets = []
    tab.on("websocket", lambda ws: sockets.append(ws) if "/ws/game/" in ws.url else None)
    url = open_game(tab, server, "q-guest")
    opponent = new_context().new_page()
    join(opponent, url, "rival")
    ready(tab, 0)
    other_tab = browser.new_page()
    log_in(other_tab, server, "quinn")               # the browser logs in: the seat moves to quinn
    # The first tab, never reloaded, reconnects with the browser's new cookie: still Black's seat.
    for _ in range(100):                             # its socket closed (4409) and opened again
        if len(sockets) >= 2:
            break
        tab.wait_for_timeout(100)
    assert len(sockets) == 2 and sockets[0].is_closed()
    ready(tab, 0)
    click_move(tab, "11-15")
    for page in (tab, opponent):
        ready(page, 1)
    other_tab.goto(url)
    expect(other_tab.locator("body")).to_have_attribute("data-you", "B")


def test_no_rematch_is_offered_against_a_player_whose_account_was_deleted(new_context, server):
    """Cleo (an account) deletes her account in the middle of a game against Dan: her game is resigned,
    Dan's page shows the win against "deleted player" and offers no rematch (the server would refuse
    it: opponent_deleted)."""
    cleo = new_context().new_page()
    cleo.goto(server.url + "/accounts/signup/")
    cleo.fill("input[name=username]", "cleo_plays")
    cleo.fill("input[name=password1]", PASSWORD)
    cleo.fill("input[name=password2]", PASSWORD)
    cleo.locator("form.account-form button[type=submit]").click()
    expect(cleo.locator("#account-name")).to_have_text("cleo_plays")
    cleo.goto(server.url + "/")                                     # signed in: no name box, the username
    cleo.locator("#id_color label", has_text="Black (moves first)").click()
    cleo.locator("#create-game").click()
    expect(cleo).to_have_url(re.compile(r"/g/[^/]+/$"))
    url = cleo.locator("#invite-url").input_value()
    dan = new_context().new_page()
    join(dan, url, "dan")
    ready(cleo, 0)
    click_move(cleo, "11-15")
    ready(dan, 1)

    cleo.goto(server.url + "/accounts/delete/")
    cleo.fill("#delete-account-form input[name=password]", PASSWORD)
    cleo.locator("#delete-account").click()
    expect(dan.locator("body")).to_have_attribute("data-status", "finished")
    expect(dan.locator(".player-bar").filter(has_text="deleted player")).to_have_count(1)
    expect(dan.locator("#rematch")).to_be_hidden()
