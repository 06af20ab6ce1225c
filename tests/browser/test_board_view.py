"""What the board tells, in real browsers: the last move's route and captured pieces, flipping the
board, coordinates and square numbers (remembered), confirming moves, the sounds, and the page on
a phone held either way.

alice (Black) creates each game on the home page, bob joins through the invite link, carol
watches. Expected positions come from game.rules. Screenshots go to /tmp (board-*.png).
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from game.rules import Game
from tests.browser.seats import take_free_seat

SCREENSHOTS = Path("/tmp")
LANDSCAPE = {"width": 844, "height": 390}
PORTRAIT = {"width": 390, "height": 844}


def has_class(name: str):
    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")


def square(page: Page, n: int):
    return page.locator(f'#board [data-square="{n}"]')


def open_page(new_context, **options) -> Page:
    return new_context(**options).new_page()


def make_game(new_context, server, control="untimed", spectator=True, **options):
    """alice creates a ``control`` game as Black, bob joins, carol watches: their pages and the link."""
    alice = open_page(new_context, **options)
    alice.goto(server.url + "/")
    alice.get_by_label("Your name").fill("alice")
    alice.locator("#id_color label", has_text="Black (moves first)").click()
    alice.locator("#id_time_control").select_option(control)
    alice.locator("#create-game").click()
    expect(alice).to_have_url(re.compile(r"/g/[^/]+/$"))
    url = alice.locator("#invite-url").input_value()
    bob = open_page(new_context, **options)
    bob.goto(url)
    take_free_seat(bob, "bob")
    pages = [alice, bob]
    if spectator:
        carol = open_page(new_context)
        carol.goto(url)
        pages.append(carol)
    for page in pages:
        expect(page.locator("body")).to_have_attribute("data-status", "active")
        expect(page.locator("#connection")).to_have_attribute("data-state", "open")
    return pages, url


def click_move(page: Page, move: str) -> None:
    start, *landings = (int(n) for n in re.split(r"[-x]", move))
    square(page, start).click()
    expect(square(page, start)).to_have_class(has_class("selected"))
    for n in landings:
        square(page, n).click()


def play(pages, mover: Page, move: str) -> None:
    ply = int(mover.locator("body").get_attribute("data-ply"))
    click_move(mover, move)
    for page in pages:
        expect(page.locator("body")).to_have_attribute("data-ply", str(ply + 1))


def captured_squares(page: Page) -> dict[int, str]:
    """Squares marked captured, with the ghost's colour ("b"/"w", upper case for a king)."""
    return {int(k): v for k, v in page.evaluate("""() => Object.fromEntries(
      [...document.querySelectorAll('#board .sq.captured')].map((cell) => {
        const ghost = cell.querySelector('.captured-ghost');
        if (!ghost) return [cell.dataset.square, null];
        const letter = ghost.classList.contains('ghost-black') ? 'b' : 'w';
        return [cell.dataset.square, ghost.classList.contains('ghost-king') ? letter.toUpperCase() : letter];
      }))""").items()}


def test_last_move_shows_its_route_and_the_pieces_it_captured_until_the_next_move(new_context, server):
    (alice, bob, carol), _ = make_game(new_context, server)
    line = ["11-15", "22-18", "15x22"]
    play((alice, bob, carol), alice, line[0])
    play((alice, bob, carol), bob, line[1])
    for page in (alice, bob, carol):
        assert captured_squares(page) == {}
    play((alice, bob, carol), alice, line[2])
    game = Game.from_moves(line)
    assert game.position.piece_at(18) is None
    for page in (alice, bob, carol):
        # The white man taken on 18 is ghosted there, the route 15 -> 22 drawn.
        assert captured_squares(page) == {18: "w"}
        expect(square(page, 15)).to_have_class(has_class("last-from"))
        expect(square(page, 22)).to_have_class(has_class("last-to"))
        expect(page.locator("#board .arrow-last")).to_have_count(1)
        expect(square(page, 18)).to_have_attribute("aria-label", re.compile("captured by the last move"))
    carol.screenshot(path=str(SCREENSHOTS / "board-captured.png"))
    # White must take back: 25x18 or 26x17; the black man taken on 22 is ghosted now, 18 no more.
    legal = [str(m) for m in game.legal_moves()]
    assert "26x17" in legal, legal
    play((alice, bob, carol), bob, "26x17")
    for page in (alice, bob, carol):
        assert captured_squares(page) == {22: "b"}
    # A quiet move clears the marks.
    assert "9-14" in [str(m) for m in Game.from_moves([*line, "26x17"]).legal_moves()]
    play((alice, bob, carol), alice, "9-14")
    for page in (alice, bob, carol):
        assert captured_squares(page) == {}


def test_flip_coordinates_and_numbers_are_settings_and_remembered(new_context, server):
    (alice, bob, carol), _url = make_game(new_context, server)

    def top_left(page: Page, n: int) -> tuple[float, float]:
        box = square(page, n).bounding_box()
        return box["x"], box["y"]

    for page in (bob, carol):  # White at the bottom: square 1 (b8) in the top row
        expect(page.locator("#board")).to_have_attribute("data-orientation", "white")
    x1, y1 = top_left(carol, 1)
    x32, y32 = top_left(carol, 32)
    assert y1 < y32 and x1 < x32
    expect(carol.locator("#player-bottom")).to_contain_text("bob")
    # The settings panel is reached with the keyboard: Tab to its summary, Enter opens it.
    summary = carol.locator("#settings-summary")
    summary.focus()
    carol.keyboard.press("Enter")
    expect(carol.locator("#flip-board")).to_be_visible()
    carol.locator("#flip-board").focus()
    carol.keyboard.press("Enter")
    expect(carol.locator("#board")).to_have_attribute("data-orientation", "black")
    expect(carol.locator("#flip-board")).to_have_attribute("aria-pressed", "true")
    fx1, fy1 = top_left(carol, 1)
    assert fy1 > y32 - 1 and fx1 > x32 - 1, ((fx1, fy1), (x32, y32))  # square 1 went where 32 was
    expect(carol.locator("#player-bottom")).to_contain_text("alice")  # the bars follow the board
    # Only carol's board turned.
    expect(bob.locator("#board")).to_have_attribute("data-orientation", "white")
    # A player may flip too.
    alice.locator("#settings-summary").click()
    alice.locator("#flip-board").click()
    expect(alice.locator("#board")).to_have_attribute("data-orientation", "white")
    carol.screenshot(path=str(SCREENSHOTS / "board-flipped.png"))

    # Coordinates: on by default, files along the bottom edge and ranks on the left.
    expect(carol.locator("#toggle-coords")).to_be_checked()
    files = carol.locator("#board .coord-file")
    expect(files).to_have_count(8)
    # Drawn by CSS from data-coord (no text inside a square, whose label names it).
    coords = "(nodes) => nodes.map((n) => n.dataset.coord)"
    assert files.evaluate_all(coords) == list("hgfedcba")  # flipped: h on the left
    assert carol.locator("#board .coord-rank").evaluate_all(coords) == [str(n) for n in range(1, 9)]
    expect(files.first).to_be_visible()
    carol.locator("#toggle-coords").uncheck()
    expect(files.first).to_be_hidden()
    carol.locator("#toggle-numbers").check()
    expect(square(carol, 17).locator(".sq-num")).to_be_visible()

    carol.reload()
    expect(carol.locator("#connection")).to_have_attribute("data-state", "open")
    expect(carol.locator("#board")).to_have_attribute("data-orientation", "black")  # this tab remembers
    expect(carol.locator("#toggle-coords")).not_to_be_checked()
    expect(carol.locator("#board .coord-file").first).to_be_hidden()
    expect(carol.locator("#toggle-numbers")).to_be_checked()
    expect(square(carol, 17).locator(".sq-num")).to_be_visible()
    # Another tab of the same browser opens the game from the usual side.
    other = carol.context.new_page()
    other.goto(carol.url)
    expect(other.locator("#board")).to_have_attribute("data-orientation", "white")
    expect(other.locator("#toggle-numbers")).to_be_checked()


def test_confirm_moves_holds_the_move_until_confirmed(new_context, server):
    (alice, bob), _ = make_game(new_context, server, spectator=False)
    # Off by default on a desktop in an untimed game.
    alice.locator("#settings-summary").click()
    expect(alice.locator("#toggle-confirm")).not_to_be_checked()
    alice.locator("#toggle-confirm").check()
    click_move(alice, "11-15")
    expect(alice.locator("#confirm-move")).to_be_visible()
    expect(alice.locator("#confirm-move-text")).to_have_text("Play 11-15?")
    expect(alice.locator("#board")).to_have_class(has_class("confirming"))
    expect(alice.locator("body")).to_have_attribute("data-ply", "0")
    alice.locator("#confirm-move-no").click()
    expect(alice.locator("#confirm-move")).to_be_hidden()
    expect(alice.locator("body")).to_have_attribute("data-ply", "0")
    click_move(alice, "11-15")
    alice.keyboard.press("Escape")
    expect(alice.locator("#confirm-move")).to_be_hidden()
    click_move(alice, "11-15")
    alice.locator("#confirm-move-yes").click()
    for page in (alice, bob):
        expect(page.locator("body")).to_have_attribute("data-ply", "1")
    expect(alice.locator("#confirm-move")).to_be_hidden()


def test_confirm_moves_is_on_by_default_in_correspondence_games_on_touch_screens(new_context, server):
    (alice, bob), _ = make_game(new_context, server, control="1d", spectator=False, has_touch=True,
                                is_mobile=True)
    alice.locator("#settings-summary").click()
    expect(alice.locator("#toggle-confirm")).to_be_checked()
    start, end = 11, 15
    square(alice, start).tap()
    square(alice, end).tap()
    expect(alice.locator("#confirm-move")).to_be_visible()
    expect(alice.locator("body")).to_have_attribute("data-ply", "0")
    alice.locator("#confirm-move-yes").tap()
    for page in (alice, bob):
        expect(page.locator("body")).to_have_attribute("data-ply", "1")


def test_sounds_are_made_in_the_page_and_follow_the_volume(new_context, server):
    (alice, bob, carol), _ = make_game(new_context, server, control="3+2")
    sound_js = """async ([volume, muted]) => {
      const s = window.checkers.sound;
      const out = {};
      for (const name of ['move', 'capture', 'yourTurn', 'gameStart', 'gameEnd', 'drawOffer', 'lowTime'])
        out[name] = await s.peak(name, volume, muted);
      return out;
    }"""
    loud = alice.evaluate(sound_js, [0.7, False])
    assert set(loud) == {"move", "capture", "yourTurn", "gameStart", "gameEnd", "drawOffer", "lowTime"}
    assert all(peak > 0.05 for peak in loud.values()), loud
    quiet = alice.evaluate(sound_js, [0.2, False])
    assert all(quiet[k] < loud[k] for k in loud), (quiet, loud)
    assert all(v == 0 for v in alice.evaluate(sound_js, [0.7, True]).values())
    assert all(v == 0 for v in alice.evaluate(sound_js, [0, False]).values())

    def played(page: Page) -> list[str]:
        return page.evaluate("() => window.checkers.sound.played.map((p) => p.name)")

    # The cues: a move, a capture, the opponent's draw offer, the end of the game.
    play((alice, bob, carol), alice, "11-15")
    play((alice, bob, carol), bob, "22-18")
    assert played(alice)[-1] == "move" and played(carol)[-1] == "move"
    play((alice, bob, carol), alice, "15x22")
    assert played(bob)[-1] == "capture"
    bob.locator("#offer-draw").click()
    expect(alice.locator("#draw-offer-box")).to_be_visible()
    expect(alice.locator("body")).to_have_attribute("data-last-sound", "drawOffer")
    alice.locator("#resign").click()
    alice.locator("#resign-confirm").click()
    for page in (alice, bob, carol):
        expect(page.locator("body")).to_have_attribute("data-last-sound", "gameEnd")
    # Heard only after a gesture on the page (browsers' rule); alice clicked, so hers were audible.
    assert alice.evaluate("() => window.checkers.sound.played.some((p) => p.audible)")
    # Volume and mute are remembered.
    alice.locator("#settings-summary").click()
    alice.locator("#sound-volume").fill("30")
    alice.locator("#sound-mute").check()
    alice.reload()
    expect(alice.locator("#sound-volume")).to_have_value("30")
    expect(alice.locator("#sound-mute")).to_be_checked()
    assert alice.evaluate("() => window.checkers.sound.volume") == 0.3
    expect(alice.locator("#low-time-rule")).to_contain_text("a tenth of the start time or under 20 seconds")


def inside(box: dict, viewport: dict) -> bool:
    return (box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= viewport["width"] + 0.5
            and box["y"] + box["height"] <= viewport["height"] + 0.5)


def test_phone_landscape_shows_the_whole_board_and_both_bars_and_portrait_the_header(new_context, server):
    (alice, _bob, _carol), url = make_game(new_context, server, control="3+2")
    phone = open_page(new_context, has_touch=True, is_mobile=True)
    phone.set_viewport_size(LANDSCAPE)
    # alice's seat on a phone: the same session in a phone-sized page.
    phone.context.add_cookies(alice.context.cookies())
    phone.goto(url)
    expect(phone.locator("body")).to_have_attribute("data-you", "B")
    expect(phone.locator("#clock-top")).to_be_visible()
    assert phone.evaluate("() => window.scrollY") == 0
    boxes = {name: phone.locator(sel).bounding_box() for name, sel in (
        ("board", "#board"), ("top bar", "#player-top"), ("bottom bar", "#player-bottom"),
        ("top clock", "#clock-top"), ("bottom clock", "#clock-bottom"))}
    phone.screenshot(path=str(SCREENSHOTS / "board-phone-landscape.png"))
    print("\nlandscape 844x390:", {k: (round(b["x"]), round(b["y"]), round(b["width"]), round(b["height"]))
                                  for k, b in boxes.items()})
    for name, box in boxes.items():
        assert inside(box, LANDSCAPE), (name, box)
    assert boxes["board"]["width"] >= 240, boxes["board"]
    expect(phone.locator("#player-top")).to_contain_text("bob")
    expect(phone.locator("#player-bottom")).to_contain_text("alice")

    phone.set_viewport_size(PORTRAIT)
    phone.reload()
    expect(phone.locator("#connection")).to_have_attribute("data-state", "open")
    phone.screenshot(path=str(SCREENSHOTS / "board-phone-portrait.png"))
    header = phone.locator(".site-header")
    assert inside(header.bounding_box(), PORTRAIT), header.bounding_box()
    for part in (".brand", ".site-nav", ".language-picker select"):
        box = phone.locator(f".site-header {part}").bounding_box()
        assert box and inside(box, PORTRAIT), (part, box)
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= PORTRAIT["width"]
    board = phone.locator("#board").bounding_box()
    assert inside(board, PORTRAIT) and board["width"] >= 340, board


def test_a_correspondence_clock_and_the_home_page_fit_a_phone(new_context, server):
    """On a 390-px phone a correspondence clock shows its hours whole ("23:59:58", not "3:59:58"
    cut by its box), and the home page, rated pools and all, does not scroll sideways."""
    (alice, bob), _ = make_game(new_context, server, control="1d", spectator=False)
    for page in (alice, bob):
        page.set_viewport_size(PORTRAIT)
    clock = alice.locator("#clock-bottom")
    expect(clock).to_have_text(re.compile(r"^2\d:\d\d:\d\d$"))
    # The clock's text right-aligned: cut digits would stick out on the left of its box.
    fits = alice.evaluate("""() => [...document.querySelectorAll('.clock:not([hidden])')].map(c => {
        const range = document.createRange(); range.selectNodeContents(c);
        const text = range.getBoundingClientRect(), box = c.getBoundingClientRect();
        return [c.textContent, text.left >= box.left - 0.5 && text.right <= box.right + 0.5]; })""")
    assert all(ok for _, ok in fits), fits
    assert alice.evaluate("() => document.documentElement.scrollWidth") <= PORTRAIT["width"]
    bob.goto(server.url + "/")
    assert bob.evaluate("() => document.documentElement.scrollWidth") <= PORTRAIT["width"]
