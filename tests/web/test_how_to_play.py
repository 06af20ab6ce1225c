"""The "How to play" page: every diagram agrees with the rules, every board is drawn as its FEN says,
and the page is linked from the home and game pages."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from game.howto import DIAGRAMS, Diagram, square_xy
from game.rules import Position

pytestmark = pytest.mark.django_db(transaction=True)


def legal(fen: str) -> set[str]:
    return {str(m) for m in Position.from_fen(fen).legal_moves()}


@pytest.mark.parametrize("diagram", DIAGRAMS, ids=lambda d: d.key)
def test_stated_legal_moves_are_the_rules_legal_moves(diagram: Diagram):
    assert set(diagram.legal) == legal(diagram.fen)


@pytest.mark.parametrize("diagram", DIAGRAMS, ids=lambda d: d.key)
def test_arrows_are_stated_legal_moves(diagram: Diagram):
    assert set(diagram.arrows) <= diagram.legal


def test_diagram_keys_are_unique():
    assert len({d.key for d in DIAGRAMS}) == len(DIAGRAMS)


def test_square_geometry_follows_the_numbering():
    # docs/rules.md, "Board and numbering": 1 is b8, 4 is h8, 5 is a7, 29 is a1, 32 is g1.
    assert square_xy(1) == (1, 0) and square_xy(4) == (7, 0) and square_xy(5) == (0, 1)
    assert square_xy(29) == (0, 7) and square_xy(32) == (6, 7)


class Page(HTMLParser):
    """The boards of the page: per diagram its FEN, its pieces, its squares, its arrows and the
    moves its caption lists; plus every link."""

    def __init__(self):
        super().__init__()
        self.boards: dict[str, dict] = {}
        self.links: list[str] = []
        self.figure: str | None = None
        self.board: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "figure" and "hb-figure" in classes:
            self.figure = a["id"].removeprefix("diagram-")
        if tag == "svg" and "hb-board" in classes:
            key = a["data-diagram"]
            assert key not in self.boards, f"two boards for {key}"
            assert key == self.figure
            self.board = self.boards[key] = {"fen": a["data-fen"], "pieces": {}, "squares": [],
                                             "arrows": [], "listed": []}
        if self.board is None:
            return
        if tag == "rect" and "hb-sq" in classes:
            self.board["squares"].append((a["x"], a["y"], a.get("data-square"), "dark" in classes))
        if tag == "g" and "hb-piece" in classes:
            color = "b" if "black" in classes else "w" if "white" in classes else "?"
            assert ("king" in classes) != ("man" in classes)
            letter = color.upper() if "king" in classes else color
            square = int(a["data-square"])
            assert square not in self.board["pieces"]
            self.board["pieces"][square] = letter
            x, y = square_xy(square)
            assert a["transform"] == f"translate({x} {y})"
        if tag == "g" and "hb-arrow" in classes:
            self.board["arrows"].append(a["data-move"])
        if tag == "span" and "hb-move" in classes:
            self.board["listed"].append(a["data-move"])

    def handle_endtag(self, tag):
        if tag == "figure":
            self.figure = self.board = None


@pytest.fixture(scope="module")
def page() -> Page:
    response = Client().get("/how-to-play")
    assert response.status_code == 200
    parser = Page()
    parser.feed(response.content.decode())
    return parser


def test_page_answers_at_its_route():
    assert reverse("how_to_play") == "/how-to-play"
    response = Client().get("/how-to-play")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    assert b"<h1>How to play checkers</h1>" in response.content


def test_page_has_one_board_per_diagram(page):
    assert list(page.boards) == [d.key for d in DIAGRAMS]


@pytest.mark.parametrize("diagram", DIAGRAMS, ids=lambda d: d.key)
def test_board_shows_the_pieces_of_its_fen(page, diagram: Diagram):
    board = page.boards[diagram.key]
    position = Position.from_fen(diagram.fen)
    assert board["fen"] == position.fen()
    assert board["pieces"] == position.board()


@pytest.mark.parametrize("diagram", DIAGRAMS, ids=lambda d: d.key)
def test_board_has_the_64_squares_numbered_like_the_rules(page, diagram: Diagram):
    squares = page.boards[diagram.key]["squares"]
    assert len(squares) == 64
    dark = {int(n): (int(x), int(y)) for x, y, n, is_dark in squares if is_dark}
    assert dark == {n: square_xy(n) for n in range(1, 33)}
    assert all(n is None for _, _, n, is_dark in squares if not is_dark)


@pytest.mark.parametrize("diagram", DIAGRAMS, ids=lambda d: d.key)
def test_caption_lists_exactly_the_legal_moves(page, diagram: Diagram):
    board = page.boards[diagram.key]
    assert set(board["listed"]) == legal(diagram.fen)
    assert len(board["listed"]) == len(set(board["listed"]))
    assert board["arrows"] == list(diagram.arrows)


def test_page_says_whose_turn_and_when_no_move_is_left(page):
    html = Client().get("/how-to-play").content.decode()
    blocked = html[html.index('id="diagram-blocked"'):]
    blocked = blocked[:blocked.index("</figure>")]
    assert "White to move." in blocked and "No legal move." in blocked
    start = html[html.index('id="diagram-start"'):]
    assert "Black to move." in start[:start.index("</figure>")]


def test_links_from_home_and_game_pages():
    home = Page()
    home.feed(Client().get("/").content.decode())
    assert "/how-to-play" in home.links
    client = Client()
    response = client.post("/", {"name": "alice", "color": "B"})
    assert response.status_code == 302
    game = Page()
    game.feed(client.get(response["Location"]).content.decode())
    assert "/how-to-play" in game.links
