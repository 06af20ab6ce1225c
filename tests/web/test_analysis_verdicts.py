"""The analysis board's exact verdicts: ``/analysis/position`` and ``/analysis/search`` give the endgame
database's result with best play for a position it covers, nothing beyond it or without a database,
and refuse bad input as before."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from game import rules
from game.engine import native
from game.models import Game
from game.round import actions

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(not native.available(), reason="the compiled core is not built")]

TWO_KINGS = "B:WK32:BK1,K5"  # two black kings against one, Black to move: Black wins in 31 plies


@pytest.fixture(scope="module")
def three_pieces(tmp_path_factory):
    """This process's searches and verdicts use a database of every position with at most 3 pieces."""
    path = tmp_path_factory.mktemp("endgames") / "endgames-3.bin"
    native.build_endgames(3, path)
    native.load_endgames(path)
    yield path
    native.unload_endgames()


def search(body):
    return Client().post("/analysis/search", data=json.dumps(body), content_type="application/json")


@pytest.mark.parametrize(("fen", "verdict"), [
    (TWO_KINGS, {"result": "win", "winner": "B", "plies": 31}),
    ("W:WK32:BK1,K5", {"result": "loss", "winner": "B", "plies": 32}),  # White to move loses, one ply later
    ("B:WK32:BK1", {"result": "draw", "winner": None, "plies": None}),  # a king against a king
    ("W:W18:B14", {"result": "win", "winner": "W", "plies": 1}),      # 18x9 takes Black's last piece
])
def test_the_position_gives_the_exact_verdict(three_pieces, fen, verdict):
    response = Client().get("/analysis/position", {"fen": fen})
    assert response.status_code == 200
    assert response.json()["verdict"] == verdict


def test_a_move_played_gives_the_verdict_of_the_position_after_it(three_pieces):
    data = Client().get("/analysis/position", {"fen": TWO_KINGS, "move": "5-9"}).json()
    assert data["turn"] == "W" and data["verdict"]["winner"] == "B"
    assert data["verdict"]["result"] == "loss" and data["verdict"]["plies"] >= 30


def test_a_player_in_a_game_against_a_person_gets_no_verdict_until_it_ends(three_pieces):
    alice, bob = Client(), Client()
    alice.post("/", {"name": "alice", "color": "B"})
    game = Game.objects.get()
    bob.post(f"/g/{game.id}/join", {"name": "bob"})
    for player in (alice, bob):
        data = player.get("/analysis/position", {"fen": TWO_KINGS, "move": "5-9"}).json()
        assert data["verdict"] is None and data["turn"] == "W" and data["legal"]   # the board, not the answer
    assert Client().get("/analysis/position", {"fen": TWO_KINGS}).json()["verdict"]["winner"] == "B"  # a spectator
    actions.resign(game.id, alice.session["player_id"])
    assert alice.get("/analysis/position", {"fen": TWO_KINGS}).json()["verdict"]["plies"] == 31


def test_a_position_beyond_the_database_has_no_verdict(three_pieces):
    data = Client().get("/analysis/position", {"fen": "B:WK32,K28:BK1,K5"}).json()  # 4 pieces
    assert data["verdict"] is None and not data["over"]


def test_the_search_gives_the_verdict_beside_its_move(three_pieces):
    response = search({"fen": TWO_KINGS, "time_ms": 200})
    assert response.status_code == 200
    data = response.json()
    assert data["verdict"] == {"result": "win", "winner": "B", "plies": 31}
    assert data["move"] and data["turn"] == "B"
    # The line is best play to the end: 31 plies, the last taking White's last piece.
    assert len(data["pv"]) == 31 and data["pv"][0] == data["move"]
    position = rules.Position.from_fen(TWO_KINGS)
    for move in data["pv"]:
        position = position.play(position.parse_move(move))
    assert not position.pieces(rules.Color.WHITE)
    draw = search({"fen": "B:WK32:BK1", "time_ms": 100}).json()
    assert draw["verdict"]["result"] == "draw" and draw["move"]
    beyond = search({"fen": "B:W18,27:B14,K22", "time_ms": 100}).json()
    assert beyond["verdict"] is None and beyond["move"] == "14x23x32"


@pytest.mark.parametrize(("body", "code"), [
    ({"fen": "B:W1:B5", "time_ms": 100}, "bad_fen"),
    ({"fen": TWO_KINGS, "time_ms": 0}, "bad_time"),
    ({"fen": TWO_KINGS, "time_ms": "200"}, "bad_time"),
])
def test_bad_input_is_still_refused(three_pieces, body, code):
    response = search(body)
    assert response.status_code == 400 and response.json()["error"] == code
    refused = Client().get("/analysis/position", {"fen": "B:WK32:BK1,K1"})
    assert refused.status_code == 400 and refused.json()["error"] == "bad_fen"
    illegal = Client().get("/analysis/position", {"fen": TWO_KINGS, "move": "1-10"})
    assert illegal.status_code == 400 and illegal.json()["error"] == "illegal_move"


def test_without_a_database_nothing_changes(three_pieces, tmp_path, monkeypatch):
    monkeypatch.setattr(native, "ENDGAME_DIR", tmp_path / "none")
    native.unload_endgames()
    try:
        response = Client().get("/analysis/position", {"fen": TWO_KINGS})
        assert response.status_code == 200 and response.json()["verdict"] is None
        assert native.endgame_pieces() == 0
        data = search({"fen": TWO_KINGS, "time_ms": 100}).json()
        assert data["verdict"] is None and data["move"]
    finally:
        native.load_endgames(three_pieces)
