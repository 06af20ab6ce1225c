"""Game actions in real browsers: draw offers, resignation, abort, rematch, replay, PDN download,
and the home page's list of games being played now.

Every game is made the way people make one: alice creates it on the home page as Black, bob opens
the invite link in a browser context of his own and joins as White, carol (a third context)
opens the link afterwards and watches. Expected positions come from the rules package
(game.rules), never from the site itself.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from game.rules import Game
from tests.browser.seats import take_free_seat

ROOT = Path(__file__).resolve().parents[2]
#: Screenshots of each control state go here when CHECKERS_SCREENSHOTS is set (a directory).
SCREENSHOTS = os.environ.get("CHECKERS_SCREENSHOTS")

#: A legal opening from the start position: a man move each, then a capture each.
OPENING = ["11-15", "22-18", "15x22", "26x17"]

# The pieces on every dark square as the board shows them: {"1": "b", "5": null, "30": "W", ...}.
BOARD_JS = """() => Object.fromEntries(
  [...document.querySelectorAll('#board [data-square]')].map((cell) => {
    const piece = cell.querySelector('.piece');
    if (!piece) return [cell.dataset.square, null];
    const letter = piece.classList.contains('black') ? 'b' : 'w';
    return [cell.dataset.square, piece.classList.contains('king') ? letter.toUpperCase() : letter];
  }))"""


def pieces_of(fen: str) -> dict:
    """The board of a PDN FEN in the shape of BOARD_JS ({"1": "b", ...}, None on empty squares)."""
    board = {str(n): None for n in range(1, 33)}
    for part in fen.split(":")[1:]:
        color = part[0].lower()
        for token in filter(None, (t.strip() for t in part[1:].split(","))):
            king = token.startswith("K")
            board[token.lstrip("K")] = color.upper() if king else color
    return board


def positions_after(moves: list[str]) -> list[dict]:
    """The board after each ply of ``moves`` from the start position (index 0: the start)."""
    return [pieces_of(position.fen()) for position in Game.from_moves(moves).positions]


@dataclasses.dataclass
class Table:
    url: str
    alice: Page  # Black, created the game
    bob: Page  # White, joined through the invite link
    carol: Page | None  # a spectator

    @property
    def players(self) -> list[Page]:
        return [self.alice, self.bob]

    @property
    def everyone(self) -> list[Page]:
        return [self.alice, self.bob] + ([self.carol] if self.carol else [])

    @property
    def game_id(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]


def new_page(new_context) -> Page:
    return new_context().new_page()


def create_game(server, page: Page, name: str = "alice") -> str:
    """Create a game on the home page as Black; returns the invite link."""
    page.goto(server.url + "/")
    page.fill("#id_name", name)
    page.click("label[for=id_color_1]")  # Black (moves first)
    page.click("#create-game")
    page.wait_for_url(re.compile(r"/g/\w+/$"))
    expect(page.locator("body[data-status=waiting]")).to_be_attached()
    return page.locator("#invite-url").input_value()


def join_game(page: Page, url: str, name: str = "bob") -> None:
    page.goto(url)
    take_free_seat(page, name)
    expect(page.locator("body[data-status=active][data-you=W]")).to_be_attached()


def start(server, new_context, spectator: bool = True, names=("alice", "bob")) -> Table:
    alice = new_page(new_context)
    url = create_game(server, alice, names[0])
    bob = new_page(new_context)
    join_game(bob, url, names[1])
    expect(alice.locator("body[data-status=active][data-you=B]")).to_be_attached()
    carol = None
    if spectator:
        carol = new_page(new_context)
        carol.goto(url)
        expect(carol.locator("body[data-status=active][data-you='']")).to_be_attached()
    return Table(url, alice, bob, carol)


def play(table: Table, moves: list[str], first_ply: int = 1) -> None:
    """Play ``moves`` by clicking their squares, each seen by everyone before the next."""
    for ply, move in enumerate(moves, start=first_ply):
        page = table.alice if ply % 2 == 1 else table.bob
        expect(page.locator("#board.interactive")).to_be_attached()
        for square in re.split(r"[-x]", move):
            page.click(f"#sq-{square}")
        for viewer in table.everyone:
            expect(viewer.locator(f"body[data-ply='{ply}']")).to_be_attached()


def resign(page: Page) -> None:
    page.click("#resign")
    page.click("#resign-confirm")


def shot(page: Page, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"))


def expect_board(page: Page, board: dict) -> None:
    """Wait until the board shows ``board`` (from positions_after)."""
    page.wait_for_function(f"(want) => JSON.stringify(({BOARD_JS})()) === JSON.stringify(want)",
                           arg=board, timeout=10_000)


def expect_no_game_actions(page: Page) -> None:
    for selector in ("#offer-draw", "#accept-draw", "#decline-draw", "#resign", "#resign-confirm", "#abort",
                     "#abort-confirm"):
        expect(page.locator(selector)).to_be_hidden()


# ---- draws -------------------------------------------------------------------------------------


def test_draw_offered_and_accepted_everyone_sees_the_draw(server, new_context):
    t = start(server, new_context)
    play(t, OPENING[:2])

    t.alice.click("#offer-draw")
    expect(t.bob.locator("#accept-draw")).to_be_visible()
    expect(t.bob.locator("#decline-draw")).to_be_visible()
    expect(t.bob.locator("#draw-offer-box")).to_contain_text("alice offers a draw")
    expect(t.alice.locator("#draw-pending")).to_contain_text("Draw offered by you")
    expect(t.alice.locator("#offer-draw")).to_be_disabled()
    expect(t.alice.locator("#accept-draw")).to_be_hidden()
    expect(t.carol.locator("#draw-pending")).to_have_text("Draw offered by alice")
    expect(t.carol.locator("#accept-draw")).to_be_hidden()
    expect(t.carol.locator("#offer-draw")).to_be_hidden()
    shot(t.bob, "draw-offer-received")
    shot(t.alice, "draw-offer-pending")

    t.bob.click("#accept-draw")
    for page in t.everyone:
        banner = page.locator("#result-banner")
        expect(banner).to_be_visible()
        expect(banner).to_contain_text("Draw")
        expect(banner).to_contain_text("1/2-1/2")
        expect(banner).to_contain_text("agreement")
        expect(page.locator("body[data-status=finished]")).to_be_attached()
        expect(page.locator("#board.interactive")).to_have_count(0)
        expect_no_game_actions(page)
        expect(page.locator("#draw-pending")).to_be_hidden()
    expect(t.carol.locator("#rematch")).to_be_hidden()
    shot(t.carol, "draw-agreed-spectator")


def test_draw_declined_then_move_played_offerer_told(server, new_context):
    t = start(server, new_context, spectator=False)
    # White offers on Black's turn (from the keyboard); Black declines and plays on.
    t.bob.focus("#offer-draw")
    t.bob.keyboard.press("Enter")
    expect(t.bob.locator("#draw-pending")).to_be_focused()     # not the page's body: the offer pending
    expect(t.alice.locator("#decline-draw")).to_be_visible()
    t.alice.focus("#decline-draw")
    t.alice.keyboard.press("Enter")

    expect(t.alice.locator("#draw-offer-box")).to_be_hidden()
    expect(t.alice.locator("#offer-draw")).to_be_focused()     # the button that took the offer's place
    expect(t.bob.locator("#status")).to_contain_text("alice declined the draw offer")
    hint = t.bob.locator("#draw-hint")
    expect(hint).to_be_visible()
    expect(hint).to_have_text("Your draw offer was declined. You can offer a draw again after 3 more moves of yours.")
    expect(t.bob.locator("#offer-draw")).to_be_disabled()
    shot(t.bob, "draw-declined-offerer")

    play(t, OPENING[:1])
    for page in t.players:
        expect(page.locator("body[data-status=active]")).to_be_attached()
        expect(page.locator("#result-banner")).to_be_hidden()
    expect(t.bob.locator("#board.interactive")).to_be_attached()
    # The move makes the notice old news: the status line is free for what matters now.
    expect(t.bob.locator("#status")).not_to_contain_text("declined the draw offer", timeout=500)
    expect(t.bob.locator("#draw-hint")).to_contain_text("after 3 more moves of yours")  # 6 plies after ply 0: ply 6
    expect(t.alice.locator("#offer-draw")).to_be_enabled()  # only the decliner's opponent waits

    # The note counts down in bob's own moves and goes away once he may offer again (ply 6).
    play(t, OPENING[1:] + ["8-11"], first_ply=2)
    expect(t.bob.locator("#draw-hint")).to_have_text(
        "Your draw offer was declined. You can offer a draw again after 1 more move of yours.")
    play(t, ["24-19"], first_ply=6)
    expect(t.bob.locator("#draw-hint")).to_be_hidden()
    expect(t.bob.locator("#offer-draw")).to_be_enabled()
    for page in t.players:
        expect(page.locator("#game-actions")).not_to_contain_text("ply")


# ---- compulsory captures -------------------------------------------------------------------------


def test_compulsory_capture_rings_the_pieces_that_can_take_and_explains_a_stuck_piece(server, new_context):
    t = start(server, new_context, spectator=False)
    play(t, OPENING[:2])  # 11-15 22-18: Black's only move is 15x22
    expect(t.alice.locator("#board .sq.must-capture")).to_have_count(1)
    expect(t.alice.locator("#sq-15")).to_have_class(re.compile(r"\bmust-capture\b"))
    expect(t.bob.locator("#board .sq.must-capture")).to_have_count(0)  # not his turn
    t.alice.click("#sq-9")  # a man that cannot capture: a hint instead of nothing
    status = t.alice.locator("#status")
    expect(status).to_have_text("You must capture: the highlighted pieces can.")
    expect(status).to_have_class(re.compile(r"\bwarn\b"))
    expect(t.alice.locator("#board .sq.selected")).to_have_count(0)
    shot(t.alice, "must-capture")

    play(t, OPENING[2:3], first_ply=3)
    expect(t.alice.locator("#board .sq.must-capture")).to_have_count(0)
    takers = {str(m).split("x")[0] for m in Game.from_moves(OPENING[:3]).positions[-1].legal_moves()}
    for n in takers:  # 25x18 and 26x17
        expect(t.bob.locator(f"#sq-{n}")).to_have_class(re.compile(r"\bmust-capture\b"))
    expect(t.bob.locator("#board .sq.must-capture")).to_have_count(len(takers))


# ---- resignation and abort ------------------------------------------------------------------------


def test_resignation_needs_confirmation_and_everyone_sees_the_winner(server, new_context):
    t = start(server, new_context)
    play(t, OPENING[:2])

    t.alice.click("#resign")
    expect(t.alice.locator("#resign-confirm")).to_be_visible()
    expect(t.alice.locator("#resign")).to_be_hidden()
    shot(t.alice, "resign-confirm")
    t.alice.click("#resign-cancel")  # changed her mind: nothing was sent
    expect(t.alice.locator("#resign")).to_be_visible()
    expect(t.alice.locator("#resign-confirm")).to_be_hidden()
    expect(t.bob.locator("body[data-status=active]")).to_be_attached()

    resign(t.alice)
    for page in t.everyone:
        banner = page.locator("#result-banner")
        expect(banner).to_contain_text("White wins (bob)")
        expect(banner).to_contain_text("Black resigned")
        expect(banner).to_contain_text("0-1")
        expect_no_game_actions(page)
    expect(t.bob.locator("#result-banner")).to_contain_text("You won!")
    expect(t.alice.locator("#result-banner")).to_contain_text("You lost.")
    expect(t.carol.locator("#result-banner .result-personal")).to_have_count(0)
    shot(t.bob, "resigned-winner")


def test_abort_before_both_sides_moved_shows_aborted_game(server, new_context):
    alice = new_page(new_context)
    url = create_game(server, alice)
    expect(alice.locator("#abort")).to_be_visible()  # while waiting for an opponent
    expect(alice.locator("#offer-draw")).to_be_hidden()
    expect(alice.locator("#resign")).to_be_hidden()
    bob = new_page(new_context)
    join_game(bob, url)
    carol = new_page(new_context)
    carol.goto(url)
    t = Table(url, alice, bob, carol)
    play(t, OPENING[:1])
    expect(bob.locator("#abort")).to_be_visible()  # White has not moved yet
    bob.click("#abort")  # asks first, as resigning does
    expect(bob.locator("#abort-confirm")).to_be_visible()
    expect(bob.locator("#abort")).to_be_hidden()
    bob.click("#abort-cancel")  # changed his mind: nothing was sent
    expect(bob.locator("#abort-confirm")).to_be_hidden()
    expect(alice.locator("body[data-status=active]")).to_be_attached()
    bob.click("#abort")
    shot(bob, "abort-confirm")
    bob.click("#abort-confirm")
    for page in t.everyone:
        expect(page.locator("#result-banner")).to_contain_text("Game aborted")
        expect(page.locator("body[data-status=aborted]")).to_be_attached()
        expect_no_game_actions(page)
    # Who aborted: by name for the others, "you" for bob himself.
    expect(alice.locator("#result-banner .result-reason")).to_have_text("Aborted by bob")
    expect(carol.locator("#result-banner .result-reason")).to_have_text("Aborted by bob")
    expect(bob.locator("#result-banner .result-reason")).to_have_text("Aborted by you")
    # A page opened afterwards has only the snapshot: it says what the server's state says.
    carol.reload()
    expect(carol.locator("body[data-status=aborted]")).to_be_attached()
    expect(carol.locator("#result-banner")).to_contain_text("Game aborted")
    expect(carol.locator("#result-banner .result-reason")).not_to_contain_text("Aborted by")
    expect(carol.locator("#analyse-link")).to_have_text("Analyse the game")   # one move to look at


def test_a_game_aborted_before_any_move_offers_no_review_nor_analysis(server, new_context):
    alice = new_page(new_context)
    url = create_game(server, alice)
    bob = new_page(new_context)
    join_game(bob, url)
    expect(alice.locator("body[data-status=active]")).to_be_attached()
    alice.click("#abort")
    alice.click("#abort-confirm")
    for page in (alice, bob):
        expect(page.locator("body[data-status=aborted]")).to_be_attached()
        expect(page.locator("#result-banner")).to_contain_text("Game aborted")
        expect(page.locator("#review")).to_be_hidden()          # nothing to review or analyse
        expect(page.locator("#analyse-row")).to_be_hidden()
    bob.reload()    # the page served afterwards says the same
    expect(bob.locator("body[data-status=aborted]")).to_be_attached()
    expect(bob.locator("#review")).to_be_hidden()
    expect(bob.locator("#analyse-row")).to_be_hidden()


# ---- rematch ---------------------------------------------------------------------------------------


def test_rematch_declined_then_taken_by_both_players_moves_them_with_colours_swapped(server, new_context):
    t = start(server, new_context)
    play(t, OPENING[:2])
    resign(t.bob)
    expect(t.alice.locator("#result-banner")).to_contain_text("Black wins (alice)")
    expect(t.carol.locator("#rematch")).to_be_hidden()

    # bob proposes, alice declines: bob is told and may propose again.
    t.bob.click("#rematch")
    expect(t.alice.locator("#accept-rematch")).to_be_visible()
    t.alice.click("#decline-rematch")
    expect(t.bob.locator("#rematch-note")).to_contain_text("alice declined the rematch")
    expect(t.bob.locator("#rematch")).to_be_enabled()
    expect(t.alice.locator("#rematch-offer-box")).to_be_hidden()

    t.alice.click("#rematch")
    expect(t.alice.locator("#rematch")).to_be_disabled()
    expect(t.alice.locator("#rematch-note")).to_contain_text("Waiting for bob")
    expect(t.bob.locator("#rematch-offer-box")).to_contain_text("alice wants a rematch")
    expect(t.carol.locator("#rematch-note")).to_contain_text("Rematch proposed by alice")
    shot(t.bob, "rematch-offer-received")
    t.bob.click("#accept-rematch")

    link = t.carol.locator("#rematch-link")
    expect(link).to_have_text("Watch the rematch")
    href = link.get_attribute("href")
    assert re.fullmatch(r"/g/\w+/", href) and href != f"/g/{t.game_id}/"
    shot(t.carol, "rematch-spectator-link")

    for page in t.players:
        expect(page).to_have_url(server.url + href)
    expect(t.alice.locator("body[data-status=active][data-you=W]")).to_be_attached()  # was Black
    expect(t.bob.locator("body[data-status=active][data-you=B]")).to_be_attached()
    expect(t.bob.locator("#player-bottom")).to_contain_text("bob")
    expect(t.bob.locator("#board.interactive")).to_be_attached()  # Black moves first

    t.carol.click("#rematch-link")
    expect(t.carol).to_have_url(server.url + href)
    expect(t.carol.locator("body[data-status=active][data-you='']")).to_be_attached()


# ---- spectators and the home page --------------------------------------------------------------------


def test_spectator_finds_the_game_on_the_home_page_list_and_watches(server, new_context):
    carol = new_page(new_context)
    carol.goto(server.url + "/")
    expect(carol.locator("#live-section")).to_be_visible()

    t = start(server, new_context, spectator=False, names=("<i>ann</i>", "bo & b"))
    play(t, OPENING[:1])

    # The list refreshes itself (every 5 s) with the new game; names are text, never HTML.
    entry = carol.locator(f"#live-games li a[href='/g/{t.game_id}/']")
    expect(entry).to_be_visible()
    expect(entry).to_contain_text("<i>ann</i>")
    expect(entry).to_contain_text("bo & b")
    expect(entry.locator("i")).to_have_count(0)
    expect(entry.locator(".live-moves")).to_have_text("1 move")
    shot(carol, "home-live-games")

    entry.click()
    expect(carol).to_have_url(t.url)
    expect(carol.locator("body[data-status=active][data-you='']")).to_be_attached()
    expect(carol.locator("#join-form")).to_have_count(0)
    expect_board(carol, positions_after(OPENING[:1])[1])
    for page in t.players:
        expect(page.locator("#audience")).to_have_text("1 spectator watching")
    # Fair play: the spectator may open the analysis board (in a new tab); the players, in their
    # game in progress, have no link to it.
    expect(carol.locator("#analyse-link")).to_be_visible()
    expect(carol.locator("#analyse-link")).to_have_attribute("target", "_blank")
    for page in t.players:
        expect(page.locator("#analyse-link")).to_be_hidden()

    # Server-rendered on a fresh visit, with the spectator counted.
    dave = new_page(new_context)
    dave.goto(server.url + "/")
    entry = dave.locator(f"#live-games li a[href='/g/{t.game_id}/']")
    expect(entry.locator(".live-watching")).to_have_text("1 watching")
    expect(entry.locator(".player-name").first).to_have_text("<i>ann</i>")


# ---- replay and PDN ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(server, browser):
    """One game played to the end in the browsers (OPENING, then bob resigns), shared by the
    replay and PDN tests, which only look at it."""
    contexts = []

    def context():
        ctx = browser.new_context(viewport={"width": 1100, "height": 850})
        ctx.set_default_timeout(10_000)
        contexts.append(ctx)
        return ctx

    t = start(server, context)
    play(t, OPENING)
    resign(t.bob)
    for page in t.everyone:
        expect(page.locator("#result-banner")).to_contain_text("1-0")
    yield t
    for ctx in contexts:
        ctx.close()


def test_replay_steps_through_a_finished_game(finished):
    t = finished
    boards = positions_after(OPENING)
    page = t.carol
    expect(page.locator("#result-banner")).to_be_visible()
    expect_board(page, boards[4])
    expect(page.locator("#replay-next")).to_be_disabled()

    page.click("#replay-first")
    expect(page.locator("body[data-shown-ply='0']")).to_be_attached()
    expect_board(page, boards[0])
    expect(page.locator("#replay-prev")).to_be_disabled()
    for ply in (1, 2):
        page.click("#replay-next")
        expect(page.locator(f"body[data-shown-ply='{ply}']")).to_be_attached()
        expect_board(page, boards[ply])
    expect(page.locator("#replay-status")).to_contain_text("2 of 4 moves")
    expect(page.locator("#move-list .ply.current")).to_have_text(OPENING[1])
    shot(page, "replay-finished")

    page.click("#move-list [data-ply='3']")
    expect_board(page, boards[3])
    page.keyboard.press("ArrowLeft")
    expect_board(page, boards[2])
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator("body[data-shown-ply='4']")).to_be_attached()
    expect_board(page, boards[4])
    expect(page.locator("#replay-status")).to_be_hidden()
    page.click("#replay-prev")
    page.click("#replay-last")
    expect_board(page, boards[4])
    expect(page.locator("#back-to-game")).to_be_hidden()  # the game is over: nothing to go back to


def test_replay_during_a_live_game_turns_input_off_until_back_to_the_game(server, new_context):
    t = start(server, new_context, spectator=False)
    play(t, OPENING[:3])
    boards = positions_after(OPENING)
    bob = t.bob  # White to move
    expect(bob.locator("#board.interactive")).to_be_attached()

    bob.click("#replay-prev")
    expect_board(bob, boards[2])
    expect(bob.locator("#back-to-game")).to_be_visible()
    expect(bob.locator("#board.interactive")).to_have_count(0)
    expect(bob.locator("#board.replaying")).to_be_attached()
    shot(bob, "replay-live")
    bob.click("#sq-26")  # no selection while an earlier position is shown
    expect(bob.locator("#board .sq.selected")).to_have_count(0)

    bob.click("#back-to-game")
    expect(bob.locator("#back-to-game")).to_be_hidden()
    expect_board(bob, boards[3])
    expect(bob.locator("#board.interactive")).to_be_attached()
    # A new move arrives while alice looks at the start position: she stays there.
    t.alice.click("#replay-first")
    expect_board(t.alice, boards[0])
    for square in re.split(r"[-x]", OPENING[3]):
        bob.click(f"#sq-{square}")
    expect(t.alice.locator("body[data-ply='4']")).to_be_attached()
    expect(t.alice.locator("#move-list [data-ply='4']")).to_have_text(OPENING[3])
    expect(t.alice.locator("body[data-shown-ply='0']")).to_be_attached()
    expect_board(t.alice, boards[0])
    t.alice.click("#back-to-game")
    expect_board(t.alice, boards[4])
    expect(t.alice.locator("#board.interactive")).to_be_attached()

    # And back to the past: input stays off until she returns.
    t.alice.click("#replay-first")
    expect(t.alice.locator("#back-to-game")).to_be_visible()
    expect_board(t.alice, boards[0])
    expect(t.alice.locator("#board.interactive")).to_have_count(0)  # her turn, but input is off
    t.alice.click("#back-to-game")
    expect(t.alice.locator("#board.interactive")).to_be_attached()
    expect_board(t.alice, boards[4])


def test_downloaded_pdn_of_a_browser_game_replays_with_the_rules_cli(finished, tmp_path):
    t = finished
    link = t.alice.locator("#download-pdn")
    expect(link).to_have_attribute("href", f"/g/{t.game_id}.pdn")
    with t.alice.expect_download() as info:
        link.click()
    path = tmp_path / "game.pdn"
    info.value.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert '[Black "alice"]' in text and '[White "bob"]' in text and '[Result "1-0"]' in text
    assert all(move in text for move in OPENING)

    proc = subprocess.run([sys.executable, "-m", "game.rules", "replay", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 replayed" in proc.stdout


# ---- the forty-move warning ------------------------------------------------------------------------


def test_no_progress_warning_shows_from_60_plies(server, new_context):
    page = new_page(new_context)
    create_game(server, page)
    expect(page.locator("#no-progress")).to_be_hidden()
    # Reaching 60 plies without a capture or man move takes a long king ending; give the page the
    # state the server sends then (the warning is drawn from state.status and no_progress alone).
    for plies, text in ((59, None), (60, "draw in 10 moves"), (75, "draw in 3 moves unless")):
        page.evaluate("(n) => { const c = window.checkers.ctrl;"
                      " c.setState({...c.state, status: 'active', no_progress: n}); c.redraw(); }", plies)
        if text is None:
            expect(page.locator("#no-progress")).to_be_hidden()
        else:
            expect(page.locator("#no-progress")).to_contain_text(text)
            expect(page.locator("#no-progress")).to_contain_text("unless a capture or man move")
    shot(page, "no-progress")
