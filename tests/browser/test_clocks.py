"""Clocks and presence in real browsers.

Every game is made the way people make one: alice creates it on the home page as Black with a
time control chosen there, bob opens the invite link in a browser context of his own and joins
as White, carol (a third context) opens the link afterwards and watches. The server owns the
clocks; the pages count down between its events and only ask it (``clock_check``) at zero.

One test waits for a real minute: a 1+0 game in which White stops moving loses on time.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.seats import take_free_seat

#: Screenshots of the clocks go here when CHECKERS_SCREENSHOTS is set (a directory).
SCREENSHOTS = os.environ.get("CHECKERS_SCREENSHOTS")

#: Seconds of absence before a claim on the claim test's own server (instead of 60/120).
SHORT_CLAIM_S = 3

#: The flag test waits for the server's clock: 60 s of White's time, plus slack.
FLAG_TIMEOUT_MS = 75_000


def shot(page: Page, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"clocks-{name}.png"))


@dataclasses.dataclass
class Person:
    """A page and the frames it sent on its game sockets."""

    page: Page
    sent: list = dataclasses.field(default_factory=list)

    def watch(self, ws) -> None:
        if "/ws/game/" in ws.url:
            ws.on("framesent", lambda payload: self.sent.append((time.monotonic(), payload)))

    def sent_of_type(self, kind: str) -> list[float]:
        """When this page sent each frame of type ``kind`` (monotonic seconds)."""
        out = []
        for at, payload in self.sent:
            try:
                message = json.loads(payload)
            except (TypeError, ValueError):
                continue
            if isinstance(message, dict) and message.get("type") == kind:
                out.append(at)
        return out


@dataclasses.dataclass
class Table:
    url: str
    alice: Person  # Black
    bob: Person  # White
    carol: Person | None  # a spectator

    @property
    def pages(self) -> list[Page]:
        return [p.page for p in (self.alice, self.bob, self.carol) if p]


def person(new_context) -> Person:
    page = new_context().new_page()
    who = Person(page)
    page.on("websocket", who.watch)
    return who


def start_game(new_context, server, control: str, custom: tuple[int, int] | None = None,
               spectator: bool = True) -> Table:
    """alice creates a game with ``control`` (a value of the home page's select) as Black; bob joins."""
    alice = person(new_context)
    page = alice.page
    page.goto(server.url + "/")
    page.get_by_label("Your name").fill("alice")
    page.locator("#id_color label", has_text="Black (moves first)").click()
    page.locator("#id_time_control").select_option(control)
    if custom:
        page.get_by_label("Minutes").fill(str(custom[0]))
        page.get_by_label("Increment (s)").fill(str(custom[1]))
    page.locator("#create-game").click()
    expect(page).to_have_url(re.compile(r"/g/[^/]+/$"))
    expect(page.locator("body")).to_have_attribute("data-status", "waiting")
    url = page.locator("#invite-url").input_value()

    bob = person(new_context)
    bob.page.goto(url)
    take_free_seat(bob.page, "bob")
    expect(bob.page.locator("body")).to_have_attribute("data-you", "W")
    carol = None
    if spectator:
        carol = person(new_context)
        carol.page.goto(url)
        expect(carol.page.locator("body")).to_have_attribute("data-you", "")
    table = Table(url, alice, bob, carol)
    for p in table.pages:
        expect(p.locator("body")).to_have_attribute("data-status", "active")
        expect(p.locator("#connection")).to_have_attribute("data-state", "open")
    return table


def square(page: Page, n: int):
    return page.locator(f'#board [data-square="{n}"]')


def play(page: Page, move: str, pages: list[Page]) -> None:
    """Click a simple move on ``page``; every page in ``pages`` then shows it."""
    ply = int(page.locator("body").get_attribute("data-ply"))
    start, end = (int(n) for n in re.split(r"[-x]", move))
    square(page, start).click()
    expect(square(page, start)).to_have_class(re.compile(r"(^|\s)selected(\s|$)"))
    square(page, end).click()
    for p in pages:
        expect(p.locator("body")).to_have_attribute("data-ply", str(ply + 1))


def clock(page: Page, seat: str):
    return page.locator(f'.clock[data-seat="{seat}"]')


# ---------------------------------------------------------------------------------------------


def test_clocks_count_down_locally_and_only_the_running_one(server, new_context):
    t = start_game(new_context, server, "3+2")
    alice, bob, carol = t.alice.page, t.bob.page, t.carol.page
    for page in t.pages:
        expect(page.locator("#time-control")).to_have_text("3+2")
    # Each viewer has their own seat at the bottom; the spectator sees White there.
    expect(alice.locator("#clock-bottom")).to_have_attribute("data-seat", "B")
    expect(bob.locator("#clock-bottom")).to_have_attribute("data-seat", "W")
    expect(carol.locator("#clock-bottom")).to_have_attribute("data-seat", "W")
    # A side's first move runs no clock: Black has 30 s for it, shown instead of its time.
    for page in t.pages:
        expect(clock(page, "B")).to_have_text(re.compile(r"^first move: ([1-2]\d|30) s$"))
        expect(clock(page, "B")).to_have_attribute("data-running", "false")
        expect(clock(page, "W")).to_have_text("3:00")
    shot(alice, "first-move")

    play(alice, "11-15", t.pages)
    for page in t.pages:
        expect(clock(page, "W")).to_have_text(re.compile(r"^first move: \d+ s$"))
        expect(clock(page, "B")).to_have_text("3:00")
    play(bob, "22-18", t.pages)

    # Black's second move: its clock runs (and counts down on every page), White's does not.
    for page in t.pages:
        expect(clock(page, "B")).to_have_attribute("data-running", "true")
        expect(clock(page, "W")).to_have_attribute("data-running", "false")
        expect(clock(page, "B")).not_to_have_text("3:00", timeout=2_000)
        expect(clock(page, "B")).to_have_text(re.compile(r"^2:5\d$"))
        expect(clock(page, "W")).to_have_text("3:00")
    shot(alice, "running")

    # Black moves: 2 s increment from its second move on, and now White's clock runs.
    play(alice, "15x22", t.pages)
    for page in t.pages:
        expect(clock(page, "W")).to_have_attribute("data-running", "true")
        expect(clock(page, "B")).to_have_attribute("data-running", "false")
        expect(clock(page, "B")).to_have_text(re.compile(r"^(3:0[0-2]|2:[3-5]\d)$"))
        expect(clock(page, "W")).not_to_have_text("3:00", timeout=2_000)
    # Black's clock is the server's number: what was left, plus the increment.
    assert 150_000 < int(clock(alice, "B").get_attribute("data-ms")) <= 182_000

    # A page whose countdown reaches zero asks the server (which refuses: its clock has time),
    # once and then at most every 2 s. Move this page's clock forward 10 minutes.
    alice.evaluate("() => { const c = window.checkers.ctrl; const now = c.now; c.now = () => now() + 600000; }")
    expect(clock(alice, "W")).to_have_text("0:00.0")
    deadline = time.monotonic() + 10
    while len(t.alice.sent_of_type("clock_check")) < 2 and time.monotonic() < deadline:
        alice.wait_for_timeout(100)  # waiting on the page's real 2 s throttle is the point here
    checks = t.alice.sent_of_type("clock_check")
    assert len(checks) >= 2, checks
    assert checks[1] - checks[0] >= 1.9, checks
    # The server decides from its own clock: the game goes on.
    for page in t.pages:
        expect(page.locator("body")).to_have_attribute("data-status", "active")
    expect(clock(bob, "W")).to_have_text(re.compile(r"^2:[3-5]\d$"))


def test_white_stops_moving_and_loses_on_time_in_a_1_0_game(server, new_context):
    t = start_game(new_context, server, "1+0")
    alice, bob, carol = t.alice.page, t.bob.page, t.carol.page
    for page in t.pages:
        expect(page.locator("#time-control")).to_have_text("1+0")
        expect(clock(page, "B")).to_have_text(re.compile(r"^first move: \d+ s$"))
        expect(clock(page, "W")).to_have_text("1:00")
    # The first move of each side runs no clock.
    play(alice, "9-13", t.pages)
    play(bob, "22-18", t.pages)
    for page in t.pages:
        expect(clock(page, "B")).to_have_attribute("data-running", "true")
        expect(clock(page, "W")).to_have_text("1:00")
    # Black's second move; then White's minute runs out while bob looks on.
    play(alice, "10-14", t.pages)
    started = time.monotonic()
    for page in t.pages:
        expect(clock(page, "W")).to_have_attribute("data-running", "true")
        expect(clock(page, "W")).to_have_text(re.compile(r"^0:5\d$"))
        expect(clock(page, "B")).to_have_attribute("data-running", "false")
    expect(clock(bob, "W")).to_have_class(re.compile(r"(^|\s)low(\s|$)"), timeout=FLAG_TIMEOUT_MS)
    shot(bob, "low")
    for page in t.pages:
        expect(page.locator("#result-banner")).to_be_visible(timeout=FLAG_TIMEOUT_MS)
    waited = time.monotonic() - started
    assert waited >= 55, f"flagged after {waited:.1f} s"
    for page in t.pages:
        banner = page.locator("#result-banner")
        expect(banner).to_contain_text("lost on time")
        expect(banner).to_contain_text("Black wins (alice)")
        expect(banner).to_have_attribute("data-winner", "black")
        expect(banner).to_have_attribute("data-termination", "time_forfeit")
        expect(clock(page, "W")).to_have_text("0:00.0")
        expect(clock(page, "W")).to_have_attribute("data-running", "false")
        expect(page.locator("body")).to_have_attribute("data-status", "finished")
    expect(alice.locator("#result-banner")).to_contain_text("You won!")
    expect(bob.locator("#result-banner")).to_contain_text("You lost.")
    shot(bob, "flagged")
    shot(carol, "flagged-spectator")


def test_correspondence_player_to_move_sees_time_left_to_answer(server, new_context):
    t = start_game(new_context, server, "1d", spectator=False)
    alice, bob = t.alice.page, t.bob.page
    for page in t.pages:
        expect(page.locator("#time-control")).to_have_text("1 day a move")
    # Correspondence clocks run from the first move; under a day they show h:mm:ss.
    expect(alice.locator("#answer-time")).to_have_text(re.compile(r"^Time left to answer: 23:59:[0-5]\d$"))
    expect(bob.locator("#answer-time")).to_be_hidden()
    expect(clock(bob, "W")).to_have_text("1d")
    play(alice, "11-15", t.pages)
    expect(alice.locator("#answer-time")).to_be_hidden()
    expect(clock(alice, "B")).to_have_text("1d")
    # bob comes back to the game later: the last move is highlighted and his time is shown.
    bob.reload()
    expect(bob.locator("body")).to_have_attribute("data-ply", "1")
    expect(square(bob, 11)).to_have_class(re.compile(r"(^|\s)last-(from|move)"))
    expect(square(bob, 15)).to_have_class(re.compile(r"(^|\s)last-(to|move)"))
    expect(bob.locator("#answer-time")).to_have_text(re.compile(r"^Time left to answer: 23:59:[0-5]\d$"))
    expect(clock(bob, "W")).to_have_attribute("data-running", "true")
    shot(bob, "correspondence")


def test_custom_time_inputs_show_only_for_custom(server, new_context, browser):
    page = new_context().new_page()
    page.goto(server.url + "/")
    custom = page.locator("#custom-time")
    expect(custom).to_be_hidden()
    page.locator("#id_time_control").select_option("custom")
    expect(custom).to_be_visible()
    expect(page.get_by_label("Minutes")).to_be_focused()
    shot(page, "home-custom")
    page.locator("#id_time_control").select_option("5+0")
    expect(custom).to_be_hidden()
    # The live list shows a game's time control when /games/live gives one (it does not yet).
    item = page.evaluate("""async () => {
      const module = await import(document.querySelector('script[src*="home"]').src);
      const li = module.gameItem({id: 'g1', black: 'a', white: 'b', ply: 3, spectators: 0, control: '5+3'});
      const plain = module.gameItem({id: 'g2', black: 'a', white: 'b', ply: 3, spectators: 0});
      return [li.querySelector('.live-control').textContent, plain.querySelector('.live-control')];
    }""")
    assert item == ["5+3", None], item
    # Without scripts the inputs are simply there.
    context = browser.new_context(java_script_enabled=False)
    try:
        plain = context.new_page()
        plain.goto(server.url + "/")
        expect(plain.locator("#custom-time")).to_be_visible()
        expect(plain.get_by_label("Minutes")).to_be_enabled()
    finally:
        context.close()
    # A custom game carries its control to the game page.
    t = start_game(new_context, server, "custom", custom=(2, 1), spectator=False)
    for p in t.pages:
        expect(p.locator("#time-control")).to_have_text("2+1")
        expect(clock(p, "W")).to_have_text("2:00")
    # On a phone, in dark mode, the bars and clocks fit across the screen.
    phone = t.alice.page
    phone.set_viewport_size({"width": 375, "height": 740})
    phone.emulate_media(color_scheme="dark")
    for row in ("top", "bottom"):
        bar = phone.locator(f"#player-{row}").bounding_box()
        box = phone.locator(f"#clock-{row}").bounding_box()
        assert bar["x"] >= 0 and bar["x"] + bar["width"] <= box["x"], (bar, box)
        assert box["x"] + box["width"] <= 375, box
    expect(clock(phone, "B")).to_have_text(re.compile(r"^first move: \d+ s$"))
    shot(phone, "phone-dark")


@pytest.fixture
def claim_server(server_env, tmp_path):
    """A server of the test's own on which the player to move may be claimed against after 3 s."""
    env = dict(server_env, CLAIM_AFTER_LIVE_S=str(SHORT_CLAIM_S), CLAIM_AFTER_UNTIMED_S=str(SHORT_CLAIM_S))
    srv = Server(env, tmp_path / "daphne.log")
    srv.start()
    yield srv
    srv.stop()


def test_opponent_who_left_can_be_claimed_against_by_the_player_only(claim_server, new_context):
    t = start_game(new_context, claim_server, "untimed")
    alice, carol = t.alice.page, t.carol.page
    for page in t.pages:
        expect(page.locator("#time-control")).to_have_text("Untimed")
        expect(page.locator("#clock-top")).to_be_hidden()
    play(alice, "11-15", t.pages)
    # White to move and on the page: a claim is refused with the server's words.
    assert alice.evaluate("() => window.checkers.ctrl.act('claim_win')")
    expect(alice.locator("#status")).to_have_text("Your opponent is connected.")
    expect(alice.locator("#claim-box")).to_be_hidden()

    t.bob.page.context.close()  # bob leaves
    expect(alice.locator("#player-top .presence")).to_have_class(re.compile(r"(^|\s)away(\s|$)"))
    expect(alice.locator("#claim-text")).to_contain_text("bob left the page")
    shot(alice, "claim-wait")
    expect(alice.locator("#claim-win")).to_be_visible()
    expect(alice.locator("#claim-draw")).to_be_visible()
    expect(alice.locator("#claim-text")).to_have_text("bob left the game.")
    expect(carol.locator("#claim-box")).to_be_hidden()
    expect(carol.locator("#claim-win")).to_be_hidden()
    shot(alice, "claim")
    alice.locator("#claim-win").click()
    for page in (alice, carol):
        banner = page.locator("#result-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Black wins (alice)")
        expect(banner).to_contain_text("White left the game")
        expect(banner).to_have_attribute("data-termination", "abandoned")
    expect(alice.locator("#claim-box")).to_be_hidden()
