"""Puzzles: the shipped set (sampled here, every one with ``-m heavy``), moves checked on the server
with nothing of the solution sent before it is played, Glicko-2 for accounts, guests unrated, the
streak, the history, the puzzle of the day."""

from __future__ import annotations

import json
import random
import re

import pytest
from django.conf import settings
from django.test import Client

from game.learning import mining, puzzle_store
from game.learning.models import Puzzle, PuzzleAttempt, PuzzleSolver
from tests.ratings.helpers import account

SHIPPED = list(puzzle_store.read())


def test_at_least_a_thousand_puzzles_ship_each_with_its_source():
    assert len(SHIPPED) >= 1000
    assert len({p["id"] for p in SHIPPED}) == len(SHIPPED) == len({(p["fen"], tuple(p["line"])) for p in SHIPPED})
    for puzzle in SHIPPED:
        assert puzzle["source"].split(" ")[0] in ("OCA_2.0.pdn", "inferno.pdn", "london1992.pdn")
        assert "ply" in puzzle["source"] and puzzle["line"] and len(puzzle["line"]) % 2 == 1
        assert puzzle["id"] == mining.puzzle_id(puzzle["fen"], puzzle["line"])


@pytest.mark.parametrize("puzzle", random.Random(2026).sample(SHIPPED, 8) if len(SHIPPED) >= 8 else SHIPPED,
                         ids=lambda p: p["id"])
def test_a_sample_of_the_shipped_puzzles_is_legal_and_unique_as_stated(puzzle):
    assert mining.verify(puzzle) == []


@pytest.mark.heavy
@pytest.mark.parametrize("puzzle", SHIPPED, ids=lambda p: p["id"])
def test_every_shipped_puzzle_is_legal_and_unique_as_stated(puzzle):
    assert mining.verify(puzzle) == []


def post(client, puzzle_id, body):
    return client.post(f"/puzzles/{puzzle_id}/move", data=json.dumps(body), content_type="application/json")


@pytest.fixture
def puzzle(db):
    """A shipped puzzle of two solver moves or more (stored by the migrations)."""
    return next(Puzzle.objects.get(pk=p["id"]) for p in SHIPPED if len(p["line"]) >= 3)


def signed_in(username: str) -> tuple[Client, str]:
    player = account(username)
    client = Client()
    session = client.session
    session["player_id"] = player
    session.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key  # a signed-cookie session
    return client, player


@pytest.mark.django_db
def test_the_page_holds_the_position_and_never_the_solution(puzzle):
    client = Client()
    page = client.get(f"/puzzles/{puzzle.id}").content.decode()
    config = page.split('id="puzzle-config" type="application/json">')[1].split("</script>")[0]
    data = json.loads(config)["puzzle"]
    assert data["fen"] == puzzle.fen and data["last_move"] == puzzle.last_move
    assert set(data) == {"id", "fen", "before", "last_move", "turn", "legal", "rating", "themes", "source", "plays"}
    assert "refutations" not in page and " ".join(puzzle.line) not in page


@pytest.mark.django_db
def test_an_account_solving_a_puzzle_gains_and_the_puzzle_loses(puzzle):
    client, player = signed_in("alice")
    rating = puzzle.rating
    for step in range(0, len(puzzle.line), 2):
        answer = post(client, puzzle.id, {"move": puzzle.line[step]}).json()
        if step + 2 < len(puzzle.line):
            assert answer["result"] == "continue" and answer["reply"] == puzzle.line[step + 1]
            assert answer["solution"] is None and answer["legal"]
    assert answer["result"] == "won" and answer["solution"] == puzzle.line and answer["rating"]["diff"] > 0
    assert PuzzleSolver.objects.get(player_id=player).rating > 1500
    assert Puzzle.objects.get(pk=puzzle.id).rating < rating and Puzzle.objects.get(pk=puzzle.id).plays == 1
    again = post(client, puzzle.id, {"move": puzzle.line[0], "step": 0}).json()
    assert again["practice"] and again["rating"] is None
    assert PuzzleSolver.objects.get(player_id=player).plays == 1


@pytest.mark.django_db
def test_a_wrong_move_shows_the_refutation_and_counts_as_the_attempt(puzzle):
    client, player = signed_in("bob")
    wrong = next(m for m in json.loads(client.get(f"/puzzles/{puzzle.id}").content.decode()
                                       .split('id="puzzle-config" type="application/json">')[1]
                                       .split("</script>")[0])["puzzle"]["legal"] if m != puzzle.line[0])
    answer = post(client, puzzle.id, {"move": wrong}).json()
    assert answer["result"] == "lost" and answer["solution"] == puzzle.line
    assert answer["refutation"] == puzzle.refutations["0"][wrong]
    assert answer["rating"]["diff"] < 0
    # Trying the right move afterwards is practice: the attempt stays lost and the ratings stay.
    retry = post(client, puzzle.id, {"move": puzzle.line[0], "step": 0}).json()
    assert retry["practice"] and retry["rating"] is None
    assert PuzzleAttempt.objects.get(player_id=player).result == "lost"
    assert post(client, puzzle.id, {"move": puzzle.line[0]}).json()["error"] == "bad_request"


@pytest.mark.django_db
def test_a_guest_plays_unrated_and_bad_input_changes_nothing(puzzle):
    client = Client()
    client.get("/puzzles")
    for body, code in (({"move": "1-2"}, "illegal_move"), ({"move": "zz"}, "malformed_move"), ({}, "bad_request"),
                       ({"move": 5}, "bad_request"), ([], "bad_request")):
        response = post(client, puzzle.id, body)
        assert response.status_code == 400 and response.json()["error"] == code
    assert not PuzzleAttempt.objects.exists()
    assert post(client, "nope", {"move": "1-2"}).status_code == 404
    answer = post(client, puzzle.id, {"move": puzzle.line[0]}).json()
    assert answer["rating"] is None and not PuzzleAttempt.objects.get().rated
    assert not PuzzleSolver.objects.exists()


@pytest.mark.django_db
def test_the_streak_goes_on_with_each_solved_puzzle_and_ends_at_the_first_miss():
    client = Client()
    best = 0
    for round_ in range(3):
        page = client.get("/puzzles/streak").content.decode()
        data = json.loads(page.split('id="puzzle-config" type="application/json">')[1].split("</script>")[0])
        current = Puzzle.objects.get(pk=data["puzzle"]["id"])
        if round_ < 2:
            for step in range(0, len(current.line), 2):
                answer = post(client, current.id, {"move": current.line[step], "streak": True}).json()
            assert answer["streak"] == {"streak": round_ + 1, "best": round_ + 1}
            best = round_ + 1
        else:
            wrong = next(m for m in data["puzzle"]["legal"] if m != current.line[0])
            answer = post(client, current.id, {"move": wrong, "streak": True}).json()
            assert answer["streak"] == {"streak": 0, "best": best}
    assert not PuzzleAttempt.objects.filter(rated=True).exists()


@pytest.mark.django_db
def test_the_history_and_the_puzzle_of_the_day(puzzle):
    client, _player = signed_in("carol")
    for step in range(0, len(puzzle.line), 2):
        post(client, puzzle.id, {"move": puzzle.line[step]})
    assert puzzle.id in client.get("/puzzles/history").content.decode()
    assert puzzle.id in Client().get("/@/carol/puzzles").content.decode()
    assert 'href="/@/carol/puzzles"' in Client().get("/@/carol").content.decode()  # the profile links to it
    assert Client().get("/@/nobody/puzzles").status_code == 404
    home = Client().get("/").content.decode()
    assert 'id="daily-puzzle"' in home
    french = Client()
    french.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    board = french.get("/").content.decode().split('id="daily-puzzle"', 1)[1]
    assert 'class="db-piece' in board and not re.search(r'="-?[0-9]+,[0-9]', board)  # 0.5, never 0,5


@pytest.mark.django_db(transaction=True)
def test_the_command_mines_the_sites_finished_games_into_the_database():
    """A site game that reaches a shipped puzzle's position (the puzzle taken out of the database
    first) gives it back, its source the site's game."""
    from django.core.management import call_command

    from game.models import Game
    from game.round import actions

    shipped = next(p for p in SHIPPED if len(p["line"]) == 1)
    Puzzle.objects.filter(pk=shipped["id"]).delete()
    game = actions.create_game("a" * 32, "alice", "B", start_fen=shipped["before"])
    actions.join_game(game.id, "b" * 32, "bob")
    for text in [shipped["last_move"], *shipped["line"]]:
        row = Game.objects.get(pk=game.id)
        actions.play_move(game.id, "a" * 32 if row.turn.value == "B" else "b" * 32, text, row.version)
    row = Game.objects.get(pk=game.id)
    if row.status == Game.Status.ACTIVE:
        actions.resign(game.id, "a" * 32 if row.turn.value == "B" else "b" * 32)
    call_command("make_puzzles", "--site", "--days", "1", "--save", "--workers", "1")
    found = Puzzle.objects.get(pk=shipped["id"])
    assert found.source.startswith(f"the site's game {game.id} (alice v bob), ply 1: {shipped['last_move']}")
    assert found.line == shipped["line"]


def test_the_puzzle_pages_from_line_is_a_sentence_in_the_pages_language(db):
    london = next(p for p in SHIPPED if p["source"].startswith("london1992.pdn") and " in place of 1" in p["source"])
    nobody = next(p for p in SHIPPED if p["source"].startswith("inferno.pdn game 1 (Red v White"))
    page = Client().get(f"/puzzles/{london['id']}").content.decode()
    source = re.search(r'id="puzzle-source">([^<]*)<', page).group(1)
    assert source.startswith("A game between ") and ", London, 1992. At ply " in source
    assert ".pdn" not in source and "in place of the game&#x27;s 1" in source
    french = Client().get(f"/puzzles/{london['id']}", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "Une partie entre Chinook" in french or "Une partie entre M Tinsley" in french
    assert "Au demi-coup" in french and "au lieu du coup de la partie" in french
    spanish = Client().get(f"/puzzles/{nobody['id']}", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    line = re.search(r'id="puzzle-source">([^<]*)<', spanish).group(1)
    assert line.startswith("Una partida tomada de Inferno of Checkers. En la media jugada ") and "Red" not in line
