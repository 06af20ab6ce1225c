"""Profiles and history: a player's page, its archive and PDN file, My games and its badge, the
leaderboards; on the real database (SQLite or PostgreSQL, whichever DATABASE_URL names)."""

from __future__ import annotations

import io
import re
import uuid
from datetime import timedelta
from html.parser import HTMLParser

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connection, connections
from django.test import AsyncClient, Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from game import rules
from game.models import Account, Game, Move, Rating, RatingChange
from game.profiles import pdn_file, reads
from game.rules import pdn

pytestmark = pytest.mark.django_db(transaction=True)

FINISHED, ACTIVE = Game.Status.FINISHED, Game.Status.ACTIVE
#: A short real game: three plies from the start (White to move after them).
OPENING = ["11-15", "23-19", "8-11"]


def account(username: str) -> Account:
    """A signed-up player (a user and its account, with a fresh player id)."""
    user = User.objects.create_user(username=username, password=None)
    found, _ = Account.objects.update_or_create(user=user, defaults={"player_id": uuid.uuid4().hex})
    return found


_clock = [timezone.now() - timedelta(days=400)]


def game(black: str, white: str, *, black_name: str = "", white_name: str = "", moves=(), result: str = "*",
         status: str = FINISHED, time_control: str = "5+3", rated: bool = False, black_diff: int | None = None,
         white_diff: int | None = None) -> Game:
    """A game row with real moves (``moves`` from the start), each game an hour after the last."""
    record = rules.Game.from_moves(list(moves))
    row = Game.objects.create(
        start_fen=rules.INITIAL_FEN, fen=record.position.fen(), ply=len(record.moves), status=status,
        result=result, black_player=black, white_player=white, black_name=black_name or black[:8],
        white_name=white_name or white[:8], time_control=time_control, rated=rated,
        black_rating_diff=black_diff, white_rating_diff=white_diff)
    for ply, (move, position) in enumerate(zip(record.moves, record.positions[1:], strict=True), start=1):
        Move.objects.create(game=row, ply=ply, notation=str(move), fen_after=position.fen())
    _clock[0] += timedelta(hours=1)
    Game.objects.filter(pk=row.pk).update(created_at=_clock[0], updated_at=_clock[0])
    row.refresh_from_db()
    return row


def rating(player_id: str, category: str, value: float, deviation: float, games: int = 10) -> Rating:
    return Rating.objects.create(player_id=player_id, category=category, rating=value, deviation=deviation,
                                 games=games, wins=games // 2, losses=games - games // 2)


def html(response) -> str:
    return response.content.decode()


# --- the profile ---------------------------------------------------------------------------------


def test_profile_shows_ratings_chart_opponents_and_recent_games():
    alice, bob = account("alice"), account("Bob")
    rating(alice.player_id, "blitz", 1623.4, 60, games=12)
    rating(alice.player_id, "correspondence", 1480, 180, games=2)
    history = []
    for number, after in enumerate((1520, 1545, 1530, 1580, 1623)):
        g = game(alice.player_id, bob.player_id, black_name="alice", white_name="Bob", moves=OPENING,
                 result="1-0" if number % 2 == 0 else "0-1", rated=True, black_diff=8)
        history.append(RatingChange.objects.create(game=g, player_id=alice.player_id, category="blitz",
                                                   before=after - 10, after=after, deviation=80))
    game(alice.player_id, bob.player_id, black_name="alice", white_name="Bob", result="1/2-1/2", time_control="3d")
    game(alice.player_id, "0" * 32, black_name="alice", white_name="Guest 1234", result="0-1")

    page = Client().get("/@/ALICE")   # names are found whatever their case
    assert page.status_code == 200
    text = html(page)
    assert "<h1>alice</h1>" in text
    blitz = re.search(r'<tr data-category="blitz">(.*?)</tr>', text, re.S).group(1)
    assert ">1623<" in blitz and "<td>60</td>" in blitz and "<td>12</td>" in blitz and "<abbr" not in blitz
    correspondence = re.search(r'<tr data-category="correspondence">(.*?)</tr>', text, re.S).group(1)
    assert "1480<abbr" in correspondence   # provisional: RD 180 > 110

    chart = re.search(r'<svg class="rating-chart".*?</svg>', text, re.S).group(0)
    series = re.search(r'<g class="series series-blitz".*?</g>', chart, re.S).group(0)
    points = re.search(r'<polyline points="([^"]+)"', series).group(1).split()
    assert len(points) == 5 and series.count("<circle") == 5
    xs = [float(p.split(",")[0]) for p in points]
    ys = [float(p.split(",")[1]) for p in points]
    assert xs == sorted(xs) and len(set(xs)) == 5
    assert ys[3] > ys[4] and ys[1] < ys[2]     # up is a higher rating: 1580 -> 1623 climbs, 1545 -> 1530 drops
    assert "series-correspondence" not in chart  # a rating without history draws no line

    opponents = re.search(r'<table class="opponents".*?</table>', text, re.S).group(0)
    rows = re.findall(r"<tr><th scope=\"row\">(.*?)</th>\s*<td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>",
                      opponents)
    assert rows[0] == ('<a href="/@/Bob">Bob</a>', "6", "3", "2", "1")
    assert rows[1] == ("Guest 1234", "1", "0", "1", "0")
    recent = re.search(r'<table class="game-list" id="recent-games".*?</table>', text, re.S).group(0)
    assert recent.count('class="game-row') == 7
    assert "+8" in recent


def test_a_new_players_profile_says_it_has_no_games():
    account("newbie")
    text = html(Client().get("/@/newbie"))
    assert "No rated games yet." in text and "No games yet." in text and 'id="rating-chart"' not in text


def test_profile_reads_a_bounded_number_of_queries():
    alice = account("alice")
    opponents = [account(f"op{i}") for i in range(12)]
    for i in range(40):
        g = game(alice.player_id, opponents[i % 12].player_id, black_name="alice", white_name=f"op{i % 12}",
                 result="1-0", rated=True)
        RatingChange.objects.create(game=g, player_id=alice.player_id, category=("blitz", "rapid")[i % 2],
                                    before=1500, after=1500 + i, deviation=100)
    client = Client()
    client.get("/")   # the session
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/@/alice").status_code == 200
    # the account, ratings, 5 chart lines, opponents (grouped, 10 latest names, accounts), recent
    # games and their opponents' accounts, the badge
    assert len(queries) <= 25, [q["sql"][:120] for q in queries]


def test_profile_pages_speak_the_browsers_language():
    alice = account("alice")
    rating(alice.player_id, "rapid", 1500, 200)
    text = html(Client(headers={"accept-language": "fr"}).get("/@/alice"))
    assert "Cotes" in text and "Rapide" in text and "Résultats contre les adversaires" in text
    text = html(Client(headers={"accept-language": "es"}).get("/leaderboard?category=rapid"))
    assert "Clasificación" in text and "Rápida" in text


def test_unknown_player_is_404_and_odd_names_too():
    account("alice")
    client = Client()
    assert client.get("/@/nobody").status_code == 404
    assert client.get("/@/nobody/games").status_code == 404
    assert client.get("/@/nobody/games.pdn").status_code == 404
    assert client.get("/@/a%00b").status_code == 404
    assert client.get("/@/" + "x" * 300).status_code == 404


def test_a_deleted_players_games_keep_its_name():
    alice, carol = account("alice"), account("carol")
    game(alice.player_id, carol.player_id, black_name="alice", white_name="carol", result="1-0")
    carol.user.delete()
    assert not Account.objects.filter(player_id=carol.player_id).exists()
    text = html(Client().get("/@/alice"))
    assert "carol" in text and "/@/carol" not in text
    assert Client().get("/@/carol").status_code == 404


def test_profile_names_are_escaped():
    alice = account("alice")
    game(alice.player_id, "1" * 32, black_name="alice", white_name="<b>x</b>", result="1-0")
    text = html(Client().get("/@/alice"))
    assert "<b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt;" in text


# --- the archive ---------------------------------------------------------------------------------


def archive_rows(response) -> list[str]:
    table = re.search(r'<table class="game-list" id="archive".*?</table>', html(response), re.S)
    return re.findall(r'<a href="/g/([a-z0-9]+)/">', table.group(0)) if table else []


def test_archive_filters_by_result_opponent_control_and_rated():
    alice, bob = account("alice"), account("bob")
    won = game(alice.player_id, bob.player_id, black_name="alice", white_name="bob", result="1-0", rated=True)
    lost = game(bob.player_id, alice.player_id, black_name="bob", white_name="alice", result="1-0",
                time_control="3d")
    drawn = game(alice.player_id, "2" * 32, black_name="alice", white_name="Dora", result="1/2-1/2",
                 time_control="untimed")
    ongoing = game(alice.player_id, bob.player_id, black_name="alice", white_name="bob", status=ACTIVE,
                   time_control="1+0")
    game(bob.player_id, "3" * 32, black_name="bob", white_name="Eve", result="1-0")   # not alice's
    game(alice.player_id, "", black_name="alice", status=Game.Status.WAITING)             # never played
    client = Client()
    assert set(archive_rows(client.get("/@/alice/games"))) == {won.id, lost.id, drawn.id, ongoing.id}
    assert archive_rows(client.get("/@/alice/games?result=won")) == [won.id]
    assert archive_rows(client.get("/@/alice/games?result=lost")) == [lost.id]
    assert archive_rows(client.get("/@/alice/games?result=drawn")) == [drawn.id]
    assert set(archive_rows(client.get("/@/alice/games?opponent=BO"))) == {won.id, lost.id, ongoing.id}
    assert archive_rows(client.get("/@/alice/games?opponent=dor")) == [drawn.id]
    assert archive_rows(client.get("/@/alice/games?opponent=alice")) == []   # the opponent's name only
    assert archive_rows(client.get("/@/alice/games?control=correspondence")) == [lost.id]
    assert archive_rows(client.get("/@/alice/games?control=bullet")) == [ongoing.id]
    assert archive_rows(client.get("/@/alice/games?control=untimed")) == [drawn.id]
    assert archive_rows(client.get("/@/alice/games?control=blitz&rated=yes")) == [won.id]
    assert set(archive_rows(client.get("/@/alice/games?rated=no"))) == {lost.id, drawn.id, ongoing.id}
    assert archive_rows(client.get("/@/alice/games?result=won&opponent=dora")) == []


def test_archive_pages_hold_twenty_games_newest_first():
    alice = account("alice")
    made = [game(alice.player_id, "4" * 32, black_name="alice", white_name=f"op{i}", result="1-0").id
            for i in range(45)]
    newest_first = made[::-1]
    client = Client()
    first = client.get("/@/alice/games")
    assert archive_rows(first) == newest_first[:20]
    assert "45 games" in html(first) and 'rel="next" href="?page=2"' in html(first)
    assert archive_rows(client.get("/@/alice/games?page=2")) == newest_first[20:40]
    third = client.get("/@/alice/games?page=3&result=won")
    assert archive_rows(third) == newest_first[40:]
    assert 'rel="prev" href="?result=won&amp;page=2"' in html(third)


@pytest.mark.parametrize("query", ["page=abc", "page=-1", "page=0", "page=99999999999999999999999",
                                   "page=1e9", "page=%00", "page=2&page=x"])
def test_archive_odd_page_numbers_show_a_page(query):
    alice = account("alice")
    for _ in range(3):
        game(alice.player_id, "5" * 32, black_name="alice", white_name="x", result="1-0")
    response = Client().get(f"/@/alice/games?{query}")
    assert response.status_code == 200
    assert len(archive_rows(response)) == 3


@pytest.mark.parametrize("query", ["result=zzz", "control=zzz", "rated=maybe", "opponent=a%00b",
                                   "opponent=" + "x" * 200, "result=won&result=zzz"])
def test_archive_bad_filters_are_a_clean_400(query):
    alice = account("alice")
    game(alice.player_id, "5" * 32, black_name="alice", white_name="x", result="1-0")
    response = Client().get(f"/@/alice/games?{query}")
    assert response.status_code == 400
    assert 'id="archive-filters"' in html(response) and archive_rows(response) == []


async def download(url: str) -> str:
    """GET ``url`` through the ASGI handler, as Daphne serves it, and read the streamed PDN file."""
    response = await AsyncClient().get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-pdn")
    assert 'filename="checkers-alice.pdn"' in response["Content-Disposition"]
    assert response.streaming
    return b"".join([chunk async for chunk in response.streaming_content]).decode()


async def test_pdn_download_streams_every_game_and_parses_back():
    def setup():
        alice = account("alice")
        made = [game(alice.player_id, "6" * 32, black_name="alice", white_name=f"op{i}", moves=OPENING[:1 + i % 3],
                     result=("1-0", "0-1", "1/2-1/2")[i % 3], time_control=("5+3", "3d", "untimed")[i % 3])
                for i in range(7)]
        game(alice.player_id, "7" * 32, black_name="alice", white_name="live one", moves=OPENING, status=ACTIVE)
        return made

    made = await sync_to_async(setup)()
    try:
        text = await download("/@/alice/games.pdn")
    finally:
        await sync_to_async(connections.close_all)()   # the streaming thread's connection
    games = list(pdn.read_games(io.StringIO(text)))
    assert len(games) == 8
    for expected, read in zip(made, games, strict=False):
        assert read.tags["White"] == expected.white_name
        assert read.result == expected.result
        done = pdn.replay(read)
        assert done.rejection is None
        assert [str(m) for m in done.record.moves] == OPENING[:len(read.moves)]
    assert games[-1].tags["White"] == "live one" and games[-1].result == "*"


def test_pdn_batches_cover_every_game_once():
    alice = account("alice")
    made = {game(alice.player_id, "6" * 32, black_name="alice", moves=OPENING[:2], result="1-0").id
            for _ in range(3)}
    made |= {game("6" * 32, alice.player_id, white_name="alice", moves=OPENING[:2], result="0-1").id
             for _ in range(2)}
    # Games created in the same instant are told apart by their ids, whichever seat she held.
    Game.objects.filter(pk__in=made).update(created_at=timezone.now())
    batches, cursor = [], None
    while True:
        batch = pdn_file.batch(alice.player_id, "example.org", cursor, limit=2)
        batches.append(batch)
        if batch.cursor is None:
            break
        cursor = batch.cursor
    assert [b.games for b in batches] == [2, 2, 1]
    texts = "".join(b.text for b in batches)
    assert texts.count('[Site "example.org"]') == 5 and len(list(pdn.read_games(io.StringIO(texts)))) == 5


# --- My games and the badge ----------------------------------------------------------------------


def browser_id(client: Client) -> str:
    """The player id the site gave this browser's session on its first page."""
    client.get("/")
    return client.session["player_id"]


def test_my_games_lists_your_turn_first_correspondence_above_all_then_finished():
    client = Client()
    me = browser_id(client)
    other = "8" * 32
    waiting_live = game(me, other, white_name="live-mine", moves=OPENING[:2], status=ACTIVE)        # B to move
    not_mine = game(me, other, white_name="live-theirs", moves=OPENING[:1], status=ACTIVE)          # W to move
    waiting_corr = game(other, me, black_name="corr-mine", moves=OPENING[:1], status=ACTIVE, time_control="3d")
    corr_theirs = game(other, me, black_name="corr-theirs", moves=OPENING[:2], status=ACTIVE, time_control="1d")
    finished = game(me, other, white_name="done", result="0-1")
    invite = game(me, "", status=Game.Status.WAITING)      # nobody took the invite link yet
    game(other, "9" * 32, status=ACTIVE)  # not mine at all
    Game.objects.filter(pk=invite.pk).update(updated_at=timezone.now())   # the latest active: still last
    text = html(client.get("/games/mine"))
    ongoing = re.search(r'id="ongoing-games".*?</table>', text, re.S).group(0)
    order = re.findall(r'<a href="/g/([a-z0-9]+)/">', ongoing)
    assert order[:2] == [waiting_corr.id, waiting_live.id]
    assert set(order[2:4]) == {not_mine.id, corr_theirs.id}
    assert order[4:] == [invite.id]
    assert "Nobody yet" in ongoing and "Waiting for an opponent" in ongoing
    assert ongoing.count('class="game-row your-turn"') == 2
    done = re.search(r'id="finished-games".*?</table>', text, re.S).group(0)
    assert re.findall(r'<a href="/g/([a-z0-9]+)/">', done) == [finished.id]


def test_my_games_signed_in_are_the_accounts_on_any_browser():
    alice = account("alice")
    mine = game("8" * 32, alice.player_id, black_name="Bo", white_name="alice", moves=OPENING[:1], status=ACTIVE,
                time_control="3d")
    for _ in range(2):   # two devices
        client = Client()
        client.force_login(alice.user)
        text = html(client.get("/games/mine"))
        assert re.findall(r'<a href="/g/([a-z0-9]+)/">', text) == [mine.id]
        assert 'id="turn-badge" title="1 game waits for your move">1<' in text
        assert '<a href="/@/alice" id="my-profile-link">' in text


def test_my_games_of_a_new_browser_is_empty():
    response = Client().get("/games/mine")
    assert response.status_code == 200
    assert 'id="ongoing-games"' not in html(response) and 'id="turn-badge"' not in html(response)


def test_badge_counts_games_waiting_for_your_move_in_one_query():
    client = Client()
    me = browser_id(client)
    other = "8" * 32
    game(me, other, moves=OPENING[:2], status=ACTIVE)                       # Black (me) to move
    game(other, me, moves=OPENING[:1], status=ACTIVE, time_control="3d")   # White (me) to move
    game(other, me, moves=OPENING[:2], status=ACTIVE)                       # Black (other) to move
    game(me, other, moves=OPENING[:2], result="1-0")                        # over
    with CaptureQueriesContext(connection) as queries:
        assert reads.waiting_count(me) == 2
    assert len(queries) == 1
    with CaptureQueriesContext(connection) as queries:
        assert reads.waiting_count(None) == 0
    assert len(queries) == 0
    text = html(client.get("/how-to-play"))
    assert re.search(r'<span class="turn-badge" id="turn-badge" title="2 games wait for your move">2</span>', text)
    assert 'href="/games/mine"' in text


# --- leaderboards --------------------------------------------------------------------------------


def test_leaderboard_lists_established_players_best_first():
    names = {}
    for username, value, deviation in (("ann", 1900, 60), ("ben", 2100, 110), ("cid", 2300, 111),
                                       ("dee", 1700, 45)):
        names[username] = account(username)
        rating(names[username].player_id, "blitz", value, deviation)
    rating("a" * 32, "blitz", 2500, 50)                      # a guest (or a deleted account): no name
    rating(names["ann"].player_id, "rapid", 1600, 50)
    text = html(Client().get("/leaderboard?category=blitz"))
    board = re.search(r'<table class="leaders".*?</table>', text, re.S).group(0)
    assert re.findall(r'<a href="/@/(\w+)">', board) == ["ben", "ann", "dee"]   # cid is provisional
    assert "2100" in board and "2300" not in board and "2500" not in board
    rapid = html(Client().get("/leaderboard?category=rapid"))
    assert re.findall(r'<a href="/@/(\w+)">', re.search(r'<table class="leaders".*?</table>', rapid, re.S)
                      .group(0)) == ["ann"]
    assert Client().get("/leaderboard").status_code == 200


def test_leaderboard_holds_fifty():
    for i in range(55):
        rating(account(f"p{i:02d}").player_id, "classical", 1500 + i, 50)
    board = reads.leaderboard("classical")
    assert len(board) == 50 and board[0].name == "p54" and board[0].rank == 1 and board[-1].name == "p05"


@pytest.mark.parametrize("query", ["category=zzz", "category=%00", "category=" + "x" * 500])
def test_leaderboard_unknown_category_is_400(query):
    response = Client().get(f"/leaderboard?{query}")
    assert response.status_code == 400
    assert "Unknown category" in html(response)


# --- the pages' HTML -------------------------------------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
#: SVG elements the pages write self-closed.
SELF_CLOSED = {"line", "polyline", "circle"}


class Nesting(HTMLParser):
    """Every element the page opens is closed, in order; ids are unique."""

    def __init__(self):
        super().__init__()
        self.open: list[str] = []
        self.ids: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.ids += [value for name, value in attrs if name == "id"]
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.ids += [value for name, value in attrs if name == "id"]
        if tag not in VOID and tag not in SELF_CLOSED:
            self.errors.append(f"<{tag}/>")

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-1:]} at {self.getpos()}")
        else:
            self.open.pop()


def test_the_pages_are_well_nested_html_with_unique_ids():
    alice, bob = account("alice"), account("bob")
    rating(alice.player_id, "blitz", 1600, 60)
    g = game(alice.player_id, bob.player_id, black_name="alice", white_name="bob", result="1-0", rated=True)
    RatingChange.objects.create(game=g, player_id=alice.player_id, category="blitz", before=1590, after=1600,
                                deviation=60)
    game(bob.player_id, alice.player_id, black_name="bob", white_name="alice", moves=OPENING[:1], status=ACTIVE)
    client = Client()
    client.force_login(alice.user)
    for path in ("/@/alice", "/@/alice/games", "/@/alice/games?result=zzz", "/games/mine",
                 "/leaderboard?category=blitz", "/leaderboard?category=zzz"):
        text = html(client.get(path))
        assert text.startswith("<!doctype html>"), path
        page = Nesting()
        page.feed(text)
        page.close()
        assert page.errors == [] and page.open == [], (path, page.errors, page.open)
        assert len(page.ids) == len(set(page.ids)), (path, sorted(page.ids))


def test_my_games_names_an_untimed_game_once_and_a_timed_one_with_its_control():
    client = Client()
    me = browser_id(client)
    untimed = game(me, "8" * 32, white_name="slow", moves=OPENING[:2], status=ACTIVE, time_control="untimed")
    blitz = game(me, "8" * 32, white_name="fast", moves=OPENING[:2], status=ACTIVE, time_control="5+0")
    text = html(client.get("/games/mine"))
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr class="game-row[^"]*">\s*<td><a href="/g/([a-z0-9]+)/">'
                                                           r'.*?</tr>', text, re.S)}
    cells = {gid: re.findall(r"<td>(.*?)</td>", row, re.S)[2] for gid, row in rows.items()}
    assert cells[untimed.id].strip() == "Untimed"                       # it said "Untimed untimed"
    assert cells[blitz.id].strip() == 'Blitz <span class="seat-note">5+0</span>'


def test_the_computer_is_named_in_the_pages_language_on_my_games_and_the_profile():
    alice = account("alice")
    game(alice.player_id, "bot:3", white_name="Computer (level 3)", moves=OPENING, result="0-1",
         time_control="untimed")
    client = Client(headers={"accept-language": "fr"})
    client.force_login(alice.user)
    for page in ("/games/mine", "/@/alice", "/@/alice/games"):
        text = html(client.get(page))
        assert "Ordinateur (niveau 3)" in text and "Computer (level 3)" not in text, page
    text = html(Client(headers={"accept-language": "es"}).get("/@/alice"))
    assert "Ordenador (nivel 3)" in text and "Computer (level 3)" not in text


def test_the_chart_runs_from_the_first_game_thinned_evenly(monkeypatch):
    alice, bob = account("alice"), account("bob")
    for number in range(1, 11):
        g = game(alice.player_id, bob.player_id, result="1-0", rated=True)
        RatingChange.objects.create(game=g, player_id=alice.player_id, category="blitz", before=1500,
                                    after=1500 + number, deviation=100)
    assert [after for _, after in reads.chart_rows(alice.player_id, "blitz")] == [1500 + n for n in range(1, 11)]
    monkeypatch.setattr(reads, "CHART_POINTS", 4)
    assert [after for _, after in reads.chart_rows(alice.player_id, "blitz")] == [1501, 1504, 1507, 1510]
    monkeypatch.setattr(reads, "CHART_POINTS", 3)
    assert [after for _, after in reads.chart_rows(alice.player_id, "blitz")] == [1501, 1505, 1509, 1510]
