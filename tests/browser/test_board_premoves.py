"""Premoves in real browsers: while bob (White) thinks in a live 3+2 game, alice (Black) queues a
move by clicking; the moment bob's move reaches her page it sends the premove, and the server
judges it like any move.

Every page records when each websocket frame left or arrived (an init script, page clock in ms
since the epoch, the same clock for every page of this machine), so the test prints how long
after bob's move left his page the premove arrived back on it, and how long alice's page took
between receiving bob's move and sending hers. Expected moves and positions come from game.rules.
"""

from __future__ import annotations

import json
import re
import statistics

from playwright.sync_api import Page, expect

from game.rules import Game
from tests.browser.seats import take_free_seat

#: Wraps the page's WebSocket: every frame in or out, with its time (ms since the epoch).
FRAME_LOG_JS = """(() => {
  window.__frames = [];
  const stamp = () => performance.timeOrigin + performance.now();
  const Native = window.WebSocket;
  class Logged extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => window.__frames.push({dir: 'in', t: stamp(), data: String(e.data)}));
    }
    send(data) {
      window.__frames.push({dir: 'out', t: stamp(), data: String(data)});
      return super.send(data);
    }
  }
  window.WebSocket = Logged;
})();"""

#: Black's first move, then rounds of (bob's move, alice's premove queued before it). Each premove
#: is a quiet move that is still legal after bob's (checked against the rules below).
FIRST = "11-15"
ROUNDS = [("21-17", "7-11"), ("17-13", "2-7"), ("22-17", "9-14"), ("25-21", "5-9"), ("23-19", "1-5")]


def has_class(name: str):
    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")


def square(page: Page, n: int):
    return page.locator(f'#board [data-square="{n}"]')


def frames(page: Page) -> list[dict]:
    out = []
    for frame in page.evaluate("() => window.__frames"):
        try:
            message = json.loads(frame["data"])
        except ValueError:
            continue
        if isinstance(message, dict):
            out.append({"dir": frame["dir"], "t": frame["t"], **message})
    return out


def sent_moves(page: Page) -> list[str]:
    return [f["move"] for f in frames(page) if f["dir"] == "out" and f["type"] == "move"]


def open_person(new_context, **options) -> Page:
    page = new_context(**options).new_page()
    page.add_init_script(FRAME_LOG_JS)
    return page


def live_game(new_context, server, control="3+2") -> tuple[Page, Page, str]:
    """alice creates a ``control`` game as Black on the home page, bob joins it through the link."""
    alice = open_person(new_context)
    alice.goto(server.url + "/")
    alice.get_by_label("Your name").fill("alice")
    alice.locator("#id_color label", has_text="Black (moves first)").click()
    alice.locator("#id_time_control").select_option(control)
    alice.locator("#create-game").click()
    expect(alice).to_have_url(re.compile(r"/g/[^/]+/$"))
    url = alice.locator("#invite-url").input_value()
    bob = open_person(new_context)
    bob.goto(url)
    take_free_seat(bob, "bob")
    for page in (alice, bob):
        expect(page.locator("body")).to_have_attribute("data-status", "active")
        expect(page.locator("#connection")).to_have_attribute("data-state", "open")
    return alice, bob, url


def click(page: Page, move: str) -> None:
    start, end = (int(n) for n in re.split(r"[-x]", move))
    square(page, start).click()
    expect(square(page, start)).to_have_class(has_class("selected"))
    square(page, end).click()


def queue_premove(page: Page, move: str) -> None:
    """Click the piece and its landing square while the opponent is to move."""
    start, end = (int(n) for n in re.split(r"[-x]", move))
    square(page, start).click()
    expect(square(page, start)).to_have_class(has_class("premove-from"))
    expect(square(page, end)).to_have_class(has_class("premove-dest"))
    square(page, end).click()
    expect(page.locator("#board")).to_have_attribute("data-premove", move)
    expect(square(page, end)).to_have_class(has_class("premove-route"))
    expect(page.locator("#board .arrow-premove")).to_have_count(1)


def wait_ply(pages, ply: int) -> None:
    for page in pages:
        expect(page.locator("body")).to_have_attribute("data-ply", str(ply))


def test_premove_is_played_the_instant_the_opponent_moves(new_context, server):
    game = Game.from_moves([FIRST])
    for white, black in ROUNDS:  # the line holds: every premove is legal after bob's move
        game.play(white)
        assert black in [str(m) for m in game.legal_moves()], (white, black)
        game.play(black)

    alice, bob, _url = live_game(new_context, server)
    click(alice, FIRST)
    wait_ply((alice, bob), 1)
    round_trip, reaction, there, back = [], [], [], []
    ply = 1
    for white, black in ROUNDS:
        queue_premove(alice, black)
        assert black not in sent_moves(alice)[1:], "a premove left before bob's move"
        click(bob, white)
        ply += 2
        wait_ply((alice, bob), ply)
        expect(alice.locator("#board")).to_have_attribute("data-premove", "")
        out_bob = next(f for f in frames(bob) if f["dir"] == "out" and f.get("move") == white)
        in_alice = next(f for f in frames(alice) if f["dir"] == "in" and f["type"] == "move" and f["move"] == white)
        out_alice = next(f for f in frames(alice) if f["dir"] == "out" and f.get("move") == black)
        in_bob = next(f for f in frames(bob) if f["dir"] == "in" and f["type"] == "move" and f["move"] == black)
        # Sent with the version of bob's move, the first thing alice's page sent after receiving it.
        assert out_alice["v"] == in_alice["v"]
        after = [f for f in frames(alice) if f["dir"] == "out" and f["t"] >= in_alice["t"]]
        assert after[0]["move"] == black, after[:3]
        round_trip.append(in_bob["t"] - out_bob["t"])
        reaction.append(out_alice["t"] - in_alice["t"])
        there.append(in_alice["t"] - out_bob["t"])
        back.append(in_bob["t"] - out_alice["t"])
    print(f"\npremove: bob's move left his page -> alice's premove arrived on it, ms: "
          f"{', '.join(f'{x:.1f}' for x in round_trip)} (median {statistics.median(round_trip):.1f})")
    print(f"premove: alice's page, bob's move received -> premove sent, ms: "
          f"{', '.join(f'{x:.1f}' for x in reaction)} (median {statistics.median(reaction):.1f})")
    print(f"premove: the two legs through the server (bob -> alice, alice -> bob), ms: "
          f"{', '.join(f'{x:.0f}+{y:.0f}' for x, y in zip(there, back, strict=True))}")
    # No person in the loop: her page answers in the same task as the event (well under a frame).
    assert max(reaction) < 100, reaction
    assert sent_moves(alice) == [FIRST] + [black for _, black in ROUNDS]
    expect(alice.locator("#move-list li")).to_have_count(6)
    assert alice.locator("#move-list").inner_text() == bob.locator("#move-list").inner_text()


def test_premove_made_illegal_is_dropped_with_the_reason_and_escape_cancels(new_context, server):
    alice, bob, _url = live_game(new_context, server)
    click(alice, "11-15")
    wait_ply((alice, bob), 1)
    # Escape cancels a queued premove; so does a click elsewhere on the page.
    queue_premove(alice, "9-13")
    alice.keyboard.press("Escape")
    expect(alice.locator("#board")).to_have_attribute("data-premove", "")
    expect(alice.locator("#board .sq.premove-route")).to_have_count(0)
    queue_premove(alice, "9-13")
    alice.locator("#moves-title").click()
    expect(alice.locator("#board")).to_have_attribute("data-premove", "")
    # Queued again, then bob offers a man: the capture 15x22 is compulsory, the premove is dropped.
    queue_premove(alice, "9-13")
    alice.screenshot(path="/tmp/board-premove.png")
    click(bob, "22-18")
    wait_ply((alice, bob), 2)
    game = Game.from_moves(["11-15", "22-18"])
    assert [str(m) for m in game.legal_moves()] == ["15x22"]
    expect(alice.locator("#status")).to_contain_text("Premove 9-13 cancelled")
    expect(alice.locator("#status")).to_contain_text("not a legal move")
    expect(alice.locator("#board")).to_have_attribute("data-premove", "")
    assert sent_moves(alice) == ["11-15"]
    expect(alice.locator("body")).to_have_attribute("data-turn", "B")
    # The turn is alice's as usual: she plays the capture herself.
    click(alice, "15x22")
    wait_ply((alice, bob), 3)


def test_premoves_setting_turns_them_off_and_is_remembered(new_context, server):
    alice, bob, _url = live_game(new_context, server)
    click(alice, "11-15")
    wait_ply((alice, bob), 1)
    # A premove by dragging: 9 onto 13, then bob's move sets it off.
    a, b = (square(alice, n).bounding_box() for n in (9, 13))
    alice.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    alice.mouse.down()
    alice.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=6)
    alice.mouse.up()
    expect(alice.locator("#board")).to_have_attribute("data-premove", "9-13")
    click(bob, "24-20")
    wait_ply((alice, bob), 3)
    assert sent_moves(alice) == ["11-15", "9-13"]
    alice.locator("#settings-summary").click()
    expect(alice.locator("#toggle-premoves")).to_be_checked()
    alice.locator("#toggle-premoves").uncheck()
    square(alice, 10).click()
    expect(alice.locator("#board .sq.premove-from")).to_have_count(0)
    square(alice, 14).click()
    expect(alice.locator("#board")).to_have_attribute("data-premove", "")
    alice.reload()
    expect(alice.locator("#connection")).to_have_attribute("data-state", "open")
    expect(alice.locator("#toggle-premoves")).not_to_be_checked()
    # Off in an untimed game whatever the setting: bob's page (premoves on) cannot queue there.
    untimed_alice, untimed_bob, _ = live_game(new_context, server, control="untimed")
    click(untimed_alice, "11-15")
    wait_ply((untimed_alice, untimed_bob), 1)
    click(untimed_bob, "22-18")
    wait_ply((untimed_alice, untimed_bob), 2)
    square(untimed_bob, 23).click()
    expect(untimed_bob.locator("#board .sq.premove-from")).to_have_count(0)
