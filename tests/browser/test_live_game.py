"""Live games in real browsers: Chromium pages of separate people on one Daphne server.

Every person is a browser context of their own (own cookies, so own session and
seat): alice creates the game as Black, bob joins through the invite link as
White, carol opens the same link afterwards and watches. Moves are played the
way people play them, by clicking squares (or with the keyboard), and every page
must show each move before the next one is played.

The expected boards and move lists come from the rules package (game.rules),
never from the site itself.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

from playwright.sync_api import Page, expect

from game.rules import Game, Termination, read_games
from tests.browser.seats import take_free_seat

DATA = Path(__file__).resolve().parents[1] / "data"
SCREENSHOTS = Path("/tmp")


def _first_oca_game() -> Game:
    with open(DATA / "OCA_2.0.pdn", encoding="utf-8") as handle:
        record = next(read_games(handle))
    return Game.from_moves(record.moves, start_fen=record.start_fen)


#: The first game of the OCA corpus (Manchester 1841, 44 plies), replayed by the rules for the
#: full notation of every move (the file has short forms such as "26x1" in places).
OCA_GAME = _first_oca_game()
OCA_MOVES = [str(move) for move in OCA_GAME.moves]

#: A short game from the start position that ends with White to move, a man left on 12 and no
#: legal move: Black wins. Found once by a beam search over game.rules' legal lines (ranking
#: positions by White's pieces and mobility); the replay below checks it still ends so.
BLOCKADE_MOVES = ["11-15", "22-18", "15x22", "26x17", "9-13", "31-26", "13x22x31", "24-19",
                  "31x24x15", "30-26", "12-16", "23-18", "15x22x31", "32-27", "31x24", "28x19x12",
                  "10-14", "21-17", "14x21x30", "29-25", "30x21"]
BLOCKADE_GAME = Game.from_moves(BLOCKADE_MOVES)  # raises if a move is illegal or the game ends early
assert BLOCKADE_GAME.outcome.termination is Termination.NO_MOVES
assert BLOCKADE_GAME.outcome.winner.value == "B"
assert BLOCKADE_GAME.position.pieces(BLOCKADE_GAME.position.turn) > 0

# The pieces on every dark square, read from the DOM: {"1": "b", "5": null, ...}.
BOARD_JS = """() => Object.fromEntries(
  [...document.querySelectorAll('#board [data-square]')].map((cell) => {
    const piece = cell.querySelector('.piece');
    if (!piece) return [cell.dataset.square, null];
    const letter = piece.classList.contains('black') ? 'b' : 'w';
    return [cell.dataset.square, piece.classList.contains('king') ? letter.toUpperCase() : letter];
  }))"""

# Display [row, column] of a board cell (0-based from the viewer's top left), or null.
CELL_POSITION_JS = """(cell) => {
  if (!cell) return null;
  const row = cell.parentElement;
  return [[...row.parentElement.children].indexOf(row), [...row.children].indexOf(cell)];
}"""


@dataclasses.dataclass
class Person:
    """One person's page, and the frames it sent on its game sockets (one per connection)."""

    name: str
    page: Page
    sent: list = dataclasses.field(default_factory=list)
    socket: object = None  # the page's latest game socket (a Playwright WebSocket)

    def watch(self, ws) -> None:
        if "/ws/game/" not in ws.url:
            return  # e.g. the home page's lobby socket
        self.socket = ws
        ws.on("framesent", lambda payload: self.sent.append(payload))

    def frames_of_type(self, kind: str) -> list[dict]:
        out = []
        for frame in self.sent:
            try:
                message = json.loads(frame)
            except (TypeError, ValueError):
                continue
            if isinstance(message, dict) and message.get("type") == kind:
                out.append(message)
        return out


@dataclasses.dataclass
class Table:
    """A started game: black and white players, the spectators, and the invite link."""

    url: str
    black: Person
    white: Person
    spectators: list

    @property
    def everyone(self) -> list[Person]:
        return [self.black, self.white, *self.spectators]

    @property
    def game_id(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]

    def mover(self, ply: int) -> Person:
        """Who plays ply ``ply`` (1-based) of a game from the start position: Black first."""
        return self.black if ply % 2 == 1 else self.white


def open_page(new_context, name: str) -> Person:
    page = new_context().new_page()
    person = Person(name, page)
    page.on("websocket", person.watch)
    return person


def start_game(new_context, server, spectators=("carol",)) -> Table:
    """alice creates a game as Black on the home page, bob joins through the invite link, then the
    spectators open the same link (the seats are taken, so they get no join form)."""
    alice = open_page(new_context, "alice")
    alice.page.goto(server.url + "/")
    alice.page.get_by_label("Your name").fill("alice")
    # The radio button is drawn by its label (which covers it): click the label, as people do.
    alice.page.locator("#id_color label", has_text="Black (moves first)").click()
    expect(alice.page.locator("#id_color_1")).to_be_checked()
    alice.page.locator("#create-game").click()
    expect(alice.page).to_have_url(re.compile(r"/g/[^/]+/$"))
    expect(alice.page.locator("body")).to_have_attribute("data-status", "waiting")
    expect(alice.page.locator("body")).to_have_attribute("data-you", "B")
    expect(alice.page.locator("#join-form")).to_have_count(0)
    url = alice.page.locator("#invite-url").input_value()
    assert url.startswith(server.url + "/g/"), url

    bob = open_page(new_context, "bob")
    bob.page.goto(url)
    expect(bob.page.locator("#join-form")).to_be_visible()
    take_free_seat(bob.page, "bob")
    expect(bob.page.locator("body")).to_have_attribute("data-you", "W")
    for person in (alice, bob):
        expect(person.page.locator("body")).to_have_attribute("data-status", "active")
        expect(person.page.locator("#connection")).to_have_attribute("data-state", "open")
    expect(alice.page.locator("#invite")).to_be_hidden()

    watchers = []
    for name in spectators:
        watcher = open_page(new_context, name)
        watcher.page.goto(url)
        expect(watcher.page.locator("body")).to_have_attribute("data-status", "active")
        expect(watcher.page.locator("body")).to_have_attribute("data-you", "")
        expect(watcher.page.locator("#join-form")).to_have_count(0)
        expect(watcher.page.locator("#connection")).to_have_attribute("data-state", "open")
        watchers.append(watcher)
    return Table(url, alice, bob, watchers)


def squares_of(move: str) -> list[int]:
    return [int(n) for n in re.split(r"[-x]", move)]


def square(page: Page, n: int):
    return page.locator(f'#board [data-square="{n}"]')


def has_class(name: str):
    return re.compile(rf"(^|\s){re.escape(name)}(\s|$)")


def click_move(page: Page, move: str) -> None:
    """Click the start square, then every landing square in turn."""
    start, *landings = squares_of(move)
    square(page, start).click()
    expect(square(page, start)).to_have_class(has_class("selected"))
    for i, n in enumerate(landings):
        square(page, n).click()
        if i < len(landings) - 1:  # an unfinished multi-jump: the route waits for the next landing
            expect(square(page, n)).to_have_class(has_class("route-tip"))


def play_line(table: Table, moves: list[str], played: list[str] = (), how=click_move) -> Game:
    """Play ``moves`` after the ``played`` ones, each on its mover's page (by ``how``).

    After each move, every page must show the new ply and the rules' position before the next
    move is played. Returns the rules' record of the whole game.
    """
    game = Game.from_moves(list(played))
    for move in moves:
        ply = game.ply + 1
        mover = table.mover(ply)
        expect(mover.page.locator("body")).to_have_attribute("data-turn", game.position.turn.value)
        how(mover.page, move)
        game.play(move)
        board = game.position.board()
        for person in table.everyone:
            expect(person.page.locator("body")).to_have_attribute("data-ply", str(ply))
            assert dom_board(person.page) == board, f"{person.name}'s board after {ply}. {move}"
    return game


def dom_board(page: Page) -> dict[int, str]:
    cells = page.evaluate(BOARD_JS)
    assert len(cells) == 32, cells
    return {int(n): letter for n, letter in cells.items() if letter}


def move_list_lines(moves: list[str]) -> list[str]:
    """The move list as the page numbers it: "1. 11-15 24-20", Black's move first."""
    return [f"{i // 2 + 1}. " + " ".join(moves[i:i + 2]) for i in range(0, len(moves), 2)]


def assert_everyone_sees(table: Table, game: Game) -> None:
    """Every page shows the rules' position of ``game`` and its whole move list."""
    expected_moves = [str(move) for move in game.moves]
    lines = move_list_lines(expected_moves)
    board = game.position.board()
    for person in table.everyone:
        page = person.page
        expect(page.locator("body")).to_have_attribute("data-ply", str(game.ply))
        expect(page.locator("#move-list li")).to_have_text(lines)
        assert dom_board(page) == board, f"{person.name}'s board differs from the rules"
    texts = [person.page.locator("#move-list").inner_text() for person in table.everyone]
    assert len(set(texts)) == 1, texts


def server_moves(table: Table) -> list[str]:
    """The moves the server stored, from the game's PDN download."""
    response = table.black.page.request.get(f"{table.url.rstrip('/')}.pdn")
    assert response.ok, response.status
    record = next(read_games(io.StringIO(response.text())))
    return [str(move) for move in Game.from_moves(record.moves, start_fen=record.start_fen).moves]


def sync_barrier(person: Person) -> None:
    """Return once every frame this page sent so far has been reported to the test.

    Frames leave a websocket in order: send a ping from the page and wait for its ``framesent``.
    """
    with person.socket.expect_event("framesent", predicate=lambda payload: '"ping"' in payload):
        assert person.page.evaluate("() => window.checkers.socket.send({type: 'ping'})")


def sent_moves(person: Person) -> list[str]:
    """The moves this page has sent so far."""
    sync_barrier(person)
    return [frame["move"] for frame in person.frames_of_type("move")]


# ---------------------------------------------------------------------------------------------


def test_invited_game_played_by_clicks_shows_same_final_board_everywhere(new_context, server):
    assert len(OCA_MOVES) == 44
    table = start_game(new_context, server)
    for person in table.everyone:
        expect(person.page.locator("#move-list li")).to_have_count(0)
        assert dom_board(person.page) == Game().position.board()

    play_line(table, OCA_MOVES)

    assert_everyone_sees(table, OCA_GAME)
    assert server_moves(table) == OCA_MOVES
    for person in table.everyone:
        expect(person.page.locator("body")).to_have_attribute("data-status", "active")
        expect(person.page.locator("#result-banner")).to_be_hidden()
    # Each page sent exactly the moves of its own seat, once each.
    assert sent_moves(table.black) == OCA_MOVES[0::2]
    assert sent_moves(table.white) == OCA_MOVES[1::2]
    assert sent_moves(table.spectators[0]) == []
    for person in table.everyone:
        path = SCREENSHOTS / f"browser-final-{person.name}.png"
        person.page.screenshot(path=str(path))


def test_game_ending_without_legal_move_shows_result_and_stops_input(new_context, server):
    table = start_game(new_context, server)

    play_line(table, BLOCKADE_MOVES)

    assert_everyone_sees(table, BLOCKADE_GAME)
    outcome = BLOCKADE_GAME.outcome
    assert outcome.reason == "White has no legal move"
    personal = {table.black.name: "You won!", table.white.name: "You lost."}
    for person in table.everyone:
        page = person.page
        banner = page.locator("#result-banner")
        expect(banner).to_be_visible()
        expect(banner).to_have_attribute("data-winner", "black")
        expect(banner.locator(".result-headline")).to_have_text("Black wins (alice)")
        expect(banner.locator(".result-reason")).to_have_text(outcome.reason)
        expect(banner.locator(".result-score")).to_have_text(outcome.result)
        if person.name in personal:
            expect(banner.locator(".result-personal")).to_have_text(personal[person.name])
        else:
            expect(banner.locator(".result-personal")).to_have_count(0)
        expect(page.locator("body")).to_have_attribute("data-status", "finished")
        expect(page.locator("#board")).to_have_class(has_class("over"))
        expect(page.locator("#board")).not_to_have_class(has_class("interactive"))

    # White is to move and still has its man on 12: clicking it (and around it) does nothing,
    # for its player and for the winner alike.
    assert BLOCKADE_GAME.position.piece_at(12) == "w"
    for person, squares in ((table.white, [12, 8, 3]), (table.black, [1, 5, 21])):
        page = person.page
        sent_before = sent_moves(person)
        for n in squares:
            square(page, n).click()
            expect(page.locator("#board .sq.selected")).to_have_count(0)
            expect(page.locator("#board .sq.dest")).to_have_count(0)
        assert sent_moves(person) == sent_before, f"{person.name} sent a move after the end"
    for person in table.everyone:
        expect(person.page.locator("body")).to_have_attribute("data-ply", str(len(BLOCKADE_MOVES)))
    assert server_moves(table) == BLOCKADE_MOVES


def test_server_restart_mid_game_reconnects_and_continues(new_context, own_server):
    table = start_game(new_context, own_server)
    before, after = OCA_MOVES[:6], OCA_MOVES[6]  # the seventh ply is a capture, 15x22
    play_line(table, before)

    own_server.stop(kill=True)
    for person in table.everyone:
        expect(person.page.locator("#connection")).not_to_have_attribute("data-state", "open")
        expect(person.page.locator("#connection")).to_be_visible()
    # Down, the mover's board takes no input.
    expect(table.black.page.locator("#board")).not_to_have_class(has_class("interactive"))

    own_server.start()
    for person in table.everyone:
        expect(person.page.locator("#connection")).to_have_attribute("data-state", "open")
        expect(person.page.locator("#connection")).to_be_hidden()
    assert_everyone_sees(table, Game.from_moves(before))

    play_line(table, [after], played=before)

    played = before + [after]
    assert_everyone_sees(table, Game.from_moves(played))
    assert server_moves(table) == played
    # Nothing was sent twice across the reconnect: each player sent each of its moves once.
    assert sent_moves(table.black) == played[0::2]
    assert sent_moves(table.white) == played[1::2]


def keyboard_move(page: Page, move: str) -> None:
    """Play ``move`` on ``page`` with the arrow keys and Enter on the focused board."""
    board = page.locator("#board")
    board.focus()
    cursor = page.locator("#board .sq.cursor")
    if cursor.count() == 0:
        board.press("ArrowUp")  # the first arrow key only shows the cursor
    for n in squares_of(move):
        row, col = cursor.evaluate(CELL_POSITION_JS)
        target_row, target_col = square(page, n).evaluate(CELL_POSITION_JS)
        vertical = "ArrowDown" if target_row > row else "ArrowUp"
        horizontal = "ArrowRight" if target_col > col else "ArrowLeft"
        for _ in range(abs(target_row - row)):
            board.press(vertical)
        for _ in range(abs(target_col - col)):
            board.press(horizontal)
        expect(square(page, n)).to_have_class(has_class("cursor"))
        board.press("Enter")


def test_keyboard_arrows_and_enter_play_moves(new_context, server):
    table = start_game(new_context, server, spectators=())
    moves = ["11-15", "22-18", "15x22"]  # Black on a turned board, White, then Black's capture

    play_line(table, moves, how=keyboard_move)

    assert_everyone_sees(table, Game.from_moves(moves))
    assert sent_moves(table.black) == ["11-15", "15x22"]
    assert sent_moves(table.white) == ["22-18"]


def test_board_orientation_and_square_numbers_follow_viewer(new_context, server):
    table = start_game(new_context, server)

    def box(page, n):
        return square(page, n).bounding_box()

    for person, bottom in ((table.black, "B"), (table.white, "W"), (table.spectators[0], "W")):
        page = person.page
        # The names of the squares whatever the side (docs/rules.md, "Board and numbering": 1 = b8, 4 = h8,
        # 5 = a7, 29 = a1, 32 = g1).
        for n, name in ((1, "b8"), (4, "h8"), (5, "a7"), (29, "a1"), (32, "g1")):
            expect(square(page, n)).to_have_attribute("data-name", name)
        one, four, twenty_nine, thirty_two = (box(page, n) for n in (1, 4, 29, 32))
        # A dark square is in each player's near-left corner: a1 (29) for White, h8 (4) for Black.
        corner = page.locator("#board .board-row").last.locator(".sq").first
        if bottom == "W":
            expect(page.locator("#board")).to_have_attribute("data-orientation", "white")
            assert thirty_two["y"] > one["y"] and twenty_nine["x"] < thirty_two["x"]
            assert one["x"] < four["x"]
            expect(corner).to_have_attribute("data-square", "29")
            expect(page.locator("#player-bottom")).to_contain_text("bob")
            expect(page.locator("#player-top")).to_contain_text("alice")
        else:
            expect(page.locator("#board")).to_have_attribute("data-orientation", "black")
            assert one["y"] > thirty_two["y"] and four["x"] < one["x"]
            assert thirty_two["x"] < twenty_nine["x"]
            expect(corner).to_have_attribute("data-square", "4")
            expect(page.locator("#player-bottom")).to_contain_text("alice")
            expect(page.locator("#player-top")).to_contain_text("bob")
        # White's men start on 21-32, the bottom half for White's side of the table.
        white_man = box(page, 22)
        black_man = box(page, 11)
        assert (white_man["y"] > black_man["y"]) == (bottom == "W")

    # Square numbers: off at first; the toggle shows them on that page only, and it sticks.
    carol = table.spectators[0].page
    for person in table.everyone:
        expect(person.page.locator("#toggle-numbers")).not_to_be_checked()
        expect(square(person.page, 17).locator(".sq-num")).to_be_hidden()
    carol.locator("#settings-summary").click()  # the toggle lives in the board settings panel
    carol.locator("#toggle-numbers").check()
    expect(carol.locator("#board")).to_have_class(has_class("show-numbers"))
    numbers = carol.locator("#board .sq-num")
    expect(numbers).to_have_count(32)
    for n in (1, 17, 32):
        expect(square(carol, n).locator(".sq-num")).to_be_visible()
        expect(square(carol, n).locator(".sq-num")).to_have_text(str(n))
    expect(square(table.black.page, 17).locator(".sq-num")).to_be_hidden()
    carol.reload()
    expect(carol.locator("#toggle-numbers")).to_be_checked()
    expect(square(carol, 17).locator(".sq-num")).to_be_visible()
    carol.locator("#toggle-numbers").uncheck()
    expect(square(carol, 17).locator(".sq-num")).to_be_hidden()
    expect(carol.locator("#board")).not_to_have_class(has_class("show-numbers"))
