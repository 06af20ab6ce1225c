"""The pages: creating a game, joining through the invite link, watching, reclaiming a seat."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import resolve, reverse

from game import views
from game.models import GAME_ID_ALPHABET, GAME_ID_LENGTH, Game, new_game_id
from game.round import handlers, protocol, watch

pytestmark = pytest.mark.django_db(transaction=True)


def config_of(response) -> dict:
    """The JSON config the game page passes to its script through ``json_script``."""
    html = response.content.decode()
    start = html.index('<script id="game-config" type="application/json">') + len(
        '<script id="game-config" type="application/json">')
    return json.loads(html[start:html.index("</script>", start)])


def create(client: Client, name="alice", color="B") -> Game:
    response = client.post("/", {"name": name, "color": color})
    assert response.status_code == 302
    game = Game.objects.get()
    assert response["Location"] == f"/g/{game.id}/"
    return game


def test_home_page_shows_new_game_form():
    response = Client().get("/")
    assert response.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in response.content
    assert b'id="create-game"' in response.content


def test_create_game_seats_creator_and_shows_invite():
    alice = Client()
    game = create(alice, color="W")
    assert game.white_name == "alice" and game.black_player == ""
    page = alice.get(f"/g/{game.id}/")
    assert page.status_code == 200
    assert config_of(page) == {"gameId": game.id, "wsPath": f"/ws/game/{game.id}/", "you": "W", "fixedPlies": 0,
                                "computerGrantsUpTo": 4, "protocol": protocol.page_constants()}
    assert f"http://testserver/g/{game.id}/".encode() in page.content
    assert b'id="join-game"' not in page.content


def test_game_page_is_given_the_protocols_constants():
    """The page's close codes, ping interval, actions, chat limits and error codes come from the server,
    the values the socket itself uses."""
    alice = Client()
    game = create(alice)
    page = alice.get(f"/g/{game.id}/")
    constants = config_of(page)["protocol"]
    assert constants["closeCodes"] == {"noSuchGame": 4404, "unavailable": 4503, "tooManySockets": 4429,
                                       "silent": 4408, "seatMoved": 4409}
    assert (protocol.CLOSE_NO_SUCH_GAME, protocol.CLOSE_TOO_MANY_SOCKETS) == (4404, 4429)
    assert constants["pingEveryMs"] == 3000
    # A page that pings on time is never taken for a dropped network.
    assert 3 * constants["pingEveryMs"] <= watch.SILENT_AFTER_S * 1000
    assert constants["actions"] == list(handlers.ACTIONS)
    assert constants["chatRooms"] == ["players", "spectators"]
    assert constants["chatMaxChars"] == 140
    assert f'id="chat-input" maxlength="{constants["chatMaxChars"]}"'.encode() in page.content
    assert (constants["firstMoveS"], constants["noProgressLimit"]) == (30, 80)
    assert constants["errors"] == {"chatPrefix": "chat_", "forecastPrefix": "forecast_",
                                   "shared": ["bad_message", "too_large", "not_seated", "not_started",
                                              "game_over", "busy", "unavailable"]}


def test_invalid_new_game_form_is_shown_again_and_creates_nothing():
    response = Client().post("/", {"name": "x" * 25, "color": "B"})
    assert response.status_code == 400
    assert Game.objects.count() == 0
    response = Client().post("/", {"name": "alice", "color": "purple"})
    assert response.status_code == 400
    assert Game.objects.count() == 0


def test_invite_link_join_then_third_visitor_watches():
    alice, bob, carol = Client(), Client(), Client()
    game = create(alice)
    page = bob.get(f"/g/{game.id}/")
    assert b'id="join-game"' in page.content
    assert config_of(page)["you"] is None
    response = bob.post(f"/g/{game.id}/join", {"name": "bob"})
    assert response.status_code == 302
    game.refresh_from_db()
    assert (game.white_name, game.status) == ("bob", "active")
    assert config_of(bob.get(f"/g/{game.id}/"))["you"] == "W"
    page = carol.get(f"/g/{game.id}/")
    assert b'id="join-game"' not in page.content
    assert config_of(page)["you"] is None
    carol.post(f"/g/{game.id}/join", {"name": "carol"})
    game.refresh_from_db()
    assert (game.black_name, game.white_name) == ("alice", "bob")
    # The same browser reopening the link gets its seat back.
    assert config_of(alice.get(f"/g/{game.id}/"))["you"] == "B"


def test_join_requires_csrf_token():
    alice, bob = Client(), Client(enforce_csrf_checks=True)
    game = create(alice)
    response = bob.post(f"/g/{game.id}/join", {"name": "bob"})
    assert response.status_code == 403
    game.refresh_from_db()
    assert game.white_player == ""


def test_display_name_is_escaped():
    alice = Client()
    create(alice, name="<img src=x onerror=1>")
    page = alice.get("/").content.decode()  # the form remembers the name
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=1&gt;" in page


def test_unknown_game_is_404():
    assert Client().get("/g/nosuchgame/").status_code == 404
    assert Client().post("/g/nosuchgame/join", {"name": "bob"}).status_code == 404


def test_game_routes_take_every_game_id():
    for game_id in (new_game_id(), GAME_ID_ALPHABET[:GAME_ID_LENGTH], GAME_ID_ALPHABET[-GAME_ID_LENGTH:]):
        for name, path, view in (("game", f"/g/{game_id}/", views.game_page),
                                 ("join", f"/g/{game_id}/join", views.join),
                                 ("game_pdn", f"/g/{game_id}.pdn", views.game_pdn)):
            match = resolve(path)
            assert (match.func, match.kwargs) == (view, {"game_id": game_id})
            assert reverse(name, args=[game_id]) == path


# What no game id can be: a NUL (PostgreSQL refuses it in text: a DataError, an HTTP 500), other
# characters, other lengths.
NOT_GAME_IDS = ["%00", "abc%00", "abcdefghi%00", "abcdefghij%00", "ABCDEFGHIJ", "abcdefghil", "abcdefghio",
                "abcdefghi", "abcdefghijk", "abcdefghij%0A", "%EF%BD%81bcdefghij", "nosuchgame"]


@pytest.mark.parametrize("game_id", NOT_GAME_IDS)
@pytest.mark.parametrize("method, template", [("get", "/g/{}/"), ("get", "/g/{}.pdn"), ("post", "/g/{}/join")])
def test_text_no_game_id_can_be_is_404_without_reaching_the_database(game_id, method, template):
    with CaptureQueriesContext(connection) as queries:
        response = getattr(Client(), method)(template.format(game_id), *([{"name": "bob"}] if method == "post" else []))
    assert response.status_code == 404
    assert queries.captured_queries == []


def test_pdn_download_replays_with_the_rules_cli(tmp_path):
    import subprocess
    import sys

    from game.round import actions

    game = actions.start_game(black=("a" * 32, "alice"), white=("b" * 32, "bob"))
    v = game.version
    for move in ["11-15", "24-20", "8-11", "28-24", "9-13", "22-18", "15x22", "25x18"]:
        v = actions.play_move(game.id, ("a" if v % 2 == 0 else "b") * 32, move, v).game.version
    actions.resign(game.id, "a" * 32)
    response = Client().get(f"/g/{game.id}.pdn")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="checkers-{game.id}.pdn"'
    text = response.content.decode()
    for tag in ('[Event "Casual game"]', '[Site "testserver"]', '[Black "alice"]', '[White "bob"]',
                '[Result "0-1"]', '[GameType "21"]'):
        assert tag in text
    assert "1. 11-15 24-20 2. 8-11 28-24 3. 9-13 22-18 4. 15x22 25x18 0-1" in " ".join(text.split())
    path = tmp_path / "game.pdn"
    path.write_text(text)
    run = subprocess.run([sys.executable, "-m", "game.rules", "replay", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 games, 1 replayed, 0 rejected" in run.stdout


def test_pdn_of_game_from_a_set_up_position_has_fen_tag():
    from game.round import actions

    game = actions.create_game("a" * 32, "alice", "B", start_fen="B:W29:B21,K22")
    text = Client().get(f"/g/{game.id}.pdn").content.decode()
    assert '[FEN "B:W29:B21,K22"]' in text


def test_live_games_lists_active_games_only():
    from game.round import actions

    active = actions.start_game(black=("a" * 32, "alice"), white=("b" * 32, "bob"))
    actions.create_game("c" * 32, "carol", "B")  # waiting: not listed
    data = Client().get("/games/live").json()
    assert data == {"games": [{"id": active.id, "black": "alice", "white": "bob", "ply": 0,
                               "spectators": 0, "control": "untimed", "label": "Untimed", "rating": None,
                               "black_computer": None, "white_computer": None}]}
    assert Client().get("/g/nosuchgame.pdn").status_code == 404


def test_live_games_name_the_computer_in_the_pages_language():
    from game.round import actions

    game = actions.start_game(black=("a" * 32, "alice"), white=("bot:2", "Computer (level 2)"))
    [listed] = Client(HTTP_ACCEPT_LANGUAGE="fr").get("/games/live").json()["games"]
    assert (listed["id"], listed["black"], listed["white"], listed["white_computer"]) == (
        game.id, "alice", "Ordinateur (niveau 2)", 2)
    page = Client(HTTP_ACCEPT_LANGUAGE="es").get("/").content.decode()
    assert '<span class="player-name">Ordenador (nivel 2)</span>' in page
    assert "Computer (level 2)" not in page


def test_join_with_too_long_a_name_shows_errors_and_keeps_seat_free():
    alice, bob = Client(), Client()
    game = create(alice)
    response = bob.post(f"/g/{game.id}/join", {"name": "x" * 25})
    assert response.status_code == 400
    assert b"Ensure this value has at most 24 characters" in response.content
    assert b'id="join-game"' in response.content
    game.refresh_from_db()
    assert (game.white_player, game.status) == ("", "waiting")


@pytest.mark.parametrize("fields, stored", [
    ({}, "untimed"),
    ({"time_control": "3+2"}, "3+2"),
    ({"time_control": "7d"}, "7d"),
    ({"time_control": "custom", "minutes": "12", "increment": "7"}, "12+7"),
])
def test_create_game_with_time_control(fields, stored):
    response = Client().post("/", {"name": "alice", "color": "B", **fields})
    assert response.status_code == 302
    game = Game.objects.get()
    assert game.time_control == stored


@pytest.mark.parametrize("fields", [
    {"time_control": "2+1"},
    {"time_control": "custom", "minutes": "0", "increment": "1"},
    {"time_control": "custom", "minutes": "5"},
])
def test_create_game_bad_time_control_refused(fields):
    response = Client().post("/", {"name": "alice", "color": "B", **fields})
    assert response.status_code == 400
    assert Game.objects.count() == 0


def test_live_games_leave_out_games_out_of_time_or_idle():
    """Only games really in play are listed: not a live game whose first-move window or clock ran
    out (the server ends those lazily), nor an untimed or live game idle for 15 minutes, nor a
    correspondence game whose side to move has used up its days."""
    from datetime import timedelta

    from django.utils import timezone

    from game.models import Game
    from game.round import actions, reads

    now = timezone.now()
    players = iter(range(100))

    def game(control="untimed", started_s=0, idle_s=None, **fields):
        n = next(players)
        made = actions.start_game(black=(f"b{n:031}", f"black{n}"), white=(f"w{n:031}", f"white{n}"),
                                   time_control=control, now=now - timedelta(seconds=started_s))
        updated = now - timedelta(seconds=started_s if idle_s is None else idle_s)
        Game.objects.filter(pk=made.pk).update(created_at=now - timedelta(seconds=started_s),
                                               updated_at=updated, **fields)
        return made.id

    moved = {"ply": 2, "fen": "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"}
    listed = [
        game("untimed", started_s=60),
        game("untimed", started_s=3600, idle_s=4 * 60),         # a move 4 minutes ago
        game("5+0", started_s=20),                               # first move due within 30 s
        game("1+0", started_s=50, black_ms=60_000, **moved),     # 10 s left
        game("1d", started_s=20 * 3600, idle_s=60, black_ms=86_400_000, **moved),
        game("7d", started_s=6 * 86400, idle_s=120, black_ms=7 * 86_400_000, **moved),
    ]
    left_out = [
        game("untimed", started_s=3600, idle_s=14 * 60),        # nobody has it open, no move for 14 minutes
        game("1d", started_s=20 * 3600, black_ms=86_400_000, **moved),  # in time, but nobody is there
        game("untimed", started_s=16 * 60),                      # both players left
        game("untimed", started_s=3600, idle_s=20 * 60),
        game("5+0", started_s=40),                               # nobody made the first move
        game("1+0", started_s=61, black_ms=60_000, **moved),     # Black's flag fell
        game("10+5", started_s=20 * 60, black_ms=30 * 60_000, **moved),  # in time, idle 20 minutes
        game("1d", started_s=25 * 3600, black_ms=86_400_000, **moved),
        game("3d", started_s=3600, black_ms=60_000, **moved),    # the move's allowance used up
    ]
    ids = [g["id"] for g in Client().get("/games/live").json()["games"]]
    assert sorted(ids) == sorted(listed)
    assert not set(ids) & set(left_out)
    assert Game.objects.filter(status=Game.Status.ACTIVE).count() == len(listed) + len(left_out)
    assert [g["id"] for g in reads.live_games(limit=2)] == [listed[2], listed[3]]


def test_pages_answer_head_as_get_without_a_body():
    """Monitors and link checkers send HEAD: every page that answers GET answers it too."""
    from game.round import actions

    game = actions.create_game("a" * 32, "alice", "B")
    client = Client()
    for path in ("/", f"/g/{game.id}/", f"/g/{game.id}.pdn", "/games/live", "/analysis",
                 "/how-to-play", f"/analysis/game/{game.id}"):
        get, head = client.get(path), client.head(path)
        assert (path, get.status_code, head.status_code) == (path, 200, 200)
        assert head.content == b"" and head["Content-Type"] == get["Content-Type"]
