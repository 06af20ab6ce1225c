"""The analysis board's endpoints and the "Play the computer" form."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from game import players, rules
from game.computer import seat as computer
from game.models import Game
from game.round import actions

pytestmark = pytest.mark.django_db(transaction=True)


def search(client: Client, body, **headers):
    return client.post("/analysis/search", data=json.dumps(body) if not isinstance(body, bytes) else body,
                       content_type="application/json", **headers)


@pytest.mark.parametrize("fen", [
    "B:W1:B5",            # a white man on its crowning row
    "B:W21,21:B1",        # a repeated square
    "B:W40:B1",           # a square outside 1-32
    "B:W5:B5",            # a square held by both sides
    "X:W21:B1",           # a bad side to move
    "B:W21:B1;",          # stray characters
    "B:W\uff12\uff11:B1",  # fullwidth digits
    "B:W21:B1\xa0",       # a no-break space
])
def test_analysis_position_bad_fen_refused_with_the_rules_reason(fen):
    response = Client().get("/analysis/position", {"fen": fen})
    assert response.status_code == 400
    with pytest.raises(rules.InvalidFenError) as expected:
        rules.Position.from_fen(fen)
    assert response.json() == {"error": "bad_fen", "message": str(expected.value)}


def test_analysis_position_lists_legal_moves_and_plays_one():
    response = Client().get("/analysis/position", {"fen": rules.INITIAL_FEN, "move": "11-15"})
    assert response.status_code == 200
    after = rules.Position.initial().play(rules.Position.initial().parse_move("11-15"))
    assert response.json() == {"fen": after.fen(), "turn": "W", "legal": [str(m) for m in after.legal_moves()],
                               "over": False, "winner": None, "reason": None, "verdict": None}


def test_analysis_position_illegal_move_refused():
    response = Client().get("/analysis/position", {"fen": rules.INITIAL_FEN, "move": "11-14"})
    assert response.status_code == 400
    assert response.json()["error"] == "illegal_move"


def test_analysis_position_without_moves_names_the_winner():
    data = Client().get("/analysis/position", {"fen": "W:W:B1,2"}).json()
    assert (data["over"], data["winner"], data["legal"]) == (True, "B", [])
    assert data["reason"] == "White has no pieces left"


def test_analysis_search_returns_a_legal_best_move_and_line():
    fen = "B:W18,27:B14,K22"
    response = search(Client(), {"fen": fen, "time_ms": 200})
    assert response.status_code == 200
    data = response.json()
    position = rules.Position.from_fen(fen)
    assert data["move"] == "14x23x32" and data["mate"] == 1 and data["turn"] == "B"
    replay = position
    for move in data["pv"]:
        replay = replay.play(replay.parse_move(move))


@pytest.mark.parametrize(("body", "code"), [
    ({"fen": "B:W1:B5", "time_ms": 100}, "bad_fen"),
    ({"time_ms": 100}, "bad_fen"),
    ({"fen": rules.INITIAL_FEN, "time_ms": 0}, "bad_time"),
    ({"fen": rules.INITIAL_FEN, "time_ms": 60_000}, "bad_time"),
    ({"fen": rules.INITIAL_FEN, "time_ms": "1000"}, "bad_time"),
    ([1, 2], "bad_request"),
    (b"{not json", "bad_request"),
])
def test_analysis_search_bad_input_refused_with_code(body, code):
    response = search(Client(), body)
    assert response.status_code == 400
    assert response.json()["error"] == code
    assert response.json()["message"]


def test_analysis_search_bad_fen_message_is_the_rules_reason():
    data = search(Client(), {"fen": "B:W1:B5"}).json()
    assert data["message"] == "white man on its crowning row: 1"


def test_analysis_search_without_csrf_token_forbidden():
    response = search(Client(enforce_csrf_checks=True), {"fen": rules.INITIAL_FEN, "time_ms": 50})
    assert response.status_code == 403


def test_analysis_page_starts_from_a_game_or_a_fen():
    game = actions.create_game("a" * 32, "alice", "B")
    page = Client().get("/analysis", {"game": f"http://testserver/g/{game.id}/"})
    assert page.status_code == 200 and game.fen.encode() in page.content
    page = Client().get("/analysis", {"fen": "W:W21:B1"})
    assert b'"fen": "W:W21:B1"' in page.content
    page = Client().get("/analysis", {"fen": "B:W1:B5"})
    assert b"white man on its crowning row: 1" in page.content


@pytest.mark.parametrize("game", ["\x00", "abc\x00def", "abcdefghij\x00", "http://testserver/g/\x00/",
                                  "http://testserver/g/abcdefghi\x00/", "ABCDEFGHIJ", "abcdefghil", "nosuchgame",
                                  "\uff41bcdefghij", "   "])
def test_analysis_page_from_a_malformed_game_id_is_like_an_unknown_game(game):
    """Text no game id can be (a NUL: a DataError on PostgreSQL) is not looked up: "There is no such game"."""
    with CaptureQueriesContext(connection) as queries:
        page = Client().get("/analysis", {"game": game})
    assert page.status_code == 200
    assert b"There is no such game." in page.content
    assert rules.INITIAL_FEN.encode() in page.content
    assert not [q for q in queries.captured_queries if Game._meta.db_table in q["sql"]]


def test_play_computer_form_starts_a_game_against_the_computer():
    client = Client()
    client.get("/")
    response = client.post("/computer", {"name": "alice", "level": "4", "color": "W"})
    assert response.status_code == 302
    game = Game.objects.get()
    assert response["Location"] == f"/g/{game.id}/"
    assert (game.status, game.black_player, game.black_name) == ("active", "bot:4", "Computer (level 4)")
    assert game.white_name == "alice" and game.white_player == client.session["player_id"]
    assert players.computer_level(game.black_player) == 4


def test_play_computer_form_bad_level_refused():
    response = Client().post("/computer", {"level": "10", "color": "B"})
    assert response.status_code == 400
    assert not Game.objects.exists()


def test_home_page_offers_the_computer_levels():
    html = Client().get("/").content.decode()
    assert 'id="play-computer"' in html
    assert all(f'name="level" value="{n}"' in html for n in range(1, 10))
    assert 'name="level" value="10"' not in html


def test_analysis_search_closed_to_a_player_during_a_game_against_a_person():
    alice, bob = Client(), Client()
    alice.post("/", {"name": "alice", "color": "B"})
    game = Game.objects.get()
    bob.post(f"/g/{game.id}/join", {"name": "bob"})
    fen = "B:W18,27:B14,K22"
    for player in (alice, bob):
        response = search(player, {"fen": fen, "time_ms": 50})
        assert response.status_code == 403
        assert response.json()["error"] == "in_game"
    assert search(Client(), {"fen": fen, "time_ms": 50}).status_code == 200  # a spectator may
    actions.resign(game.id, alice.session["player_id"])
    assert search(alice, {"fen": fen, "time_ms": 50}).status_code == 200


def test_analysis_search_open_to_a_player_against_the_computer():
    player = Client()
    player.get("/")
    actions.start_game(black=(player.session["player_id"], "alice"), white=(computer.player_id(1), "Computer"))
    assert search(player, {"fen": "B:W18,27:B14,K22", "time_ms": 50}).status_code == 200


def test_analysis_search_deeply_nested_json_refused_not_crashed():
    response = search(Client(), b"[" * 100_000 + b"]" * 100_000)
    assert response.status_code == 400
    assert response.json()["error"] == "bad_request"


# ---- GET /analysis/game/<id>: a game's moves for the analysis board ----------------------------

#: Black's 11-15, then a capture each way: the stored moves are in full notation.
GAME_MOVES = ["11-15", "22-18", "15x22", "25x18", "8-11"]


def played_game(moves=GAME_MOVES):
    """A game between two people, ``moves`` played through the game's own actions."""
    black, white = "b" * 32, "w" * 32
    game = actions.start_game(black=(black, "alice"), white=(white, "bob"))
    for ply, move in enumerate(moves):
        game = actions.play_move(game.id, black if ply % 2 == 0 else white, move, game.version).game
    return game


def test_analysis_game_gives_the_moves_and_the_position_after_each():
    game = played_game()
    response = Client().get(f"/analysis/game/{game.id}")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    data = response.json()
    position, fens = rules.Position.initial(), []
    for move in GAME_MOVES:
        position = position.play(position.parse_move(move))
        fens.append(position.fen())
    assert data == {"id": game.id, "start_fen": rules.INITIAL_FEN, "moves": GAME_MOVES, "fens": fens,
                    "fen": fens[-1], "status": "active", "result": "*", "black": "alice", "white": "bob"}
    game.refresh_from_db()
    assert data["fen"] == game.fen


def test_analysis_game_moves_are_stored_in_full_notation_and_the_end_shows():
    game = played_game(["11-15", "22-18", "15-22", "25-18"])  # the captures given in short form
    actions.resign(game.id, "w" * 32)
    data = Client().get(f"/analysis/game/{game.id}").json()
    assert data["moves"] == ["11-15", "22-18", "15x22", "25x18"]
    assert data["status"] == "finished" and data["fen"] == data["fens"][-1]
    assert data["result"] == "1-0"  # White resigned


def test_analysis_game_before_any_move_is_its_start():
    game = actions.create_game("a" * 32, "alice", "B", start_fen="W:W30:B1,K5")
    data = Client().get(f"/analysis/game/{game.id}").json()
    assert data == {"id": game.id, "start_fen": "W:W30:B1,K5", "moves": [], "fens": [], "fen": "W:W30:B1,K5",
                    "status": "waiting", "result": "*", "black": "alice", "white": None}


def test_analysis_game_is_open_to_the_games_own_players():
    """Its moves are what the game's page shows anyone: the players may load them too."""
    game = played_game()
    alice = Client()
    alice.get("/")
    response = alice.get(f"/analysis/game/{game.id}")
    assert response.status_code == 200 and response.json()["moves"] == GAME_MOVES


@pytest.mark.parametrize("game_id", ["abcdefghij", "nosuchgame", "ABCDEFGHIJ", "abc", "%00", "a/b", "abcdefghi%00"])
def test_analysis_game_unknown_is_a_json_404_and_a_non_id_is_not_looked_up(game_id):
    with CaptureQueriesContext(connection) as queries:
        response = Client().get(f"/analysis/game/{game_id}")
    assert response.status_code == 404
    assert response.json() == {"error": "no_such_game", "message": "There is no such game."}
    looked_up = [q for q in queries.captured_queries if Game._meta.db_table in q["sql"]]
    assert bool(looked_up) == (game_id == "abcdefghij")


def test_analysis_page_from_a_game_names_it_for_the_page_to_load():
    game = played_game()
    config = Client().get("/analysis", {"game": f"http://testserver/g/{game.id}/"}).context["config"]
    assert (config["game"], config["gameUrl"]) == (game.id, "/analysis/game/")
    game.refresh_from_db()
    assert config["fen"] == game.fen
    assert Client().get("/analysis", {"fen": "W:W21:B1"}).context["config"]["game"] is None


# ---- POST /analysis/pdn: a pasted game record for the analysis board ----------------------------

def pdn(client: Client, body):
    return client.post("/analysis/pdn", data=json.dumps(body) if not isinstance(body, bytes) else body,
                       content_type="application/json")


def test_a_pasted_pdn_is_replayed_by_the_rules_into_full_notation():
    text = (Path(__file__).resolve().parents[1] / "data" / "OCA_2.0.pdn").read_text(encoding="utf-8")
    record = next(rules.read_games(io.StringIO(text)))
    expected = rules.Game.from_moves(record.moves, start_fen=record.start_fen)
    response = pdn(Client(), {"pdn": text[:text.index("[Event", 10)]})
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["moves"] == [str(m) for m in expected.moves]
    assert data["fens"] == [p.fen() for p in expected.positions[1:]]
    assert (data["id"], data["status"], data["start_fen"]) == (None, None, rules.INITIAL_FEN)
    assert data["fen"] == expected.position.fen()
    assert (data["result"], data["black"], data["white"]) == ("0-1", "Moorhead, W.", "Wyllie, J.")


def test_a_bare_list_of_moves_and_a_fen_tag_are_read():
    data = pdn(Client(), {"pdn": "11-15 23-19 8-11"}).json()
    assert data["moves"] == ["11-15", "23-19", "8-11"] and data["result"] == "*"
    data = pdn(Client(), {"pdn": '[FEN "W:W18:B14."]\n1... 18x9 1-0'}).json()
    assert (data["start_fen"], data["moves"], data["fen"], data["result"]) == ("W:W18:B14", ["18x9"], "B:W9:B", "1-0")


@pytest.mark.parametrize("body, code, words", [
    ({"pdn": ""}, "bad_pdn", "No game was found"),
    ({"pdn": "[Event \"x\"]"}, "bad_pdn", "No game was found"),
    ({"pdn": "1. 11-15 23-19 2. 11-15"}, "bad_pdn", "Ply 3, “11-15”, cannot be played"),
    ({"pdn": "hello there"}, "bad_pdn", "Ply 1, “hello”, cannot be played"),
    ({"pdn": '[FEN "B:W33:B1"] 1. 1-5'}, "bad_pdn", "The game's FEN tag cannot be set up"),
    ({"pdn": "11-15 " * 5000}, "bad_pdn", "at most 20000 characters"),
    ({"pdn": 12}, "bad_request", "JSON object"),
    ([1, 2], "bad_request", "JSON object"),
    (b"\xff\xfe not json", "bad_request", "JSON object"),
    ({"pdn": "\x00\ud800"}, "bad_pdn", "cannot be played"),
])
def test_a_bad_record_is_refused_with_its_reason_and_nothing_stored(body, code, words):
    before = Game.objects.count()
    response = pdn(Client(), body)
    assert response.status_code == 400, response.content
    data = response.json()
    assert data["error"] == code, data
    assert words in data["message"], data
    assert Game.objects.count() == before


def test_a_body_over_the_upload_limit_is_refused_in_json_without_an_error_report(caplog):
    response = pdn(Client(), {"pdn": "11-15 " * 600_000})
    assert response.status_code == 413, response.content
    assert response.json()["error"] == "too_large"
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]


def test_pasting_a_pdn_needs_the_csrf_token():
    response = Client(enforce_csrf_checks=True).post("/analysis/pdn", data=json.dumps({"pdn": "11-15"}),
                                                     content_type="application/json")
    assert response.status_code == 403
