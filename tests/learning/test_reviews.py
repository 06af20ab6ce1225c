"""Reviews end to end: asked for over HTTP, queued once per game on RQ, run by a real burst worker
of the ``reviews`` queue, stored with the game; refused for a game in play; stable across runs; the
exact turning point named where the endgame database reaches."""

from __future__ import annotations

import re

import django_rq
import pytest
from django.conf import settings
from django.db import connections
from django.test import Client

from game import rules
from game.engine import native
from game.learning import judge
from game.learning.models import Review
from game.models import Game
from game.round import actions
from tests.ratings.helpers import account

pytestmark = [pytest.mark.django_db(transaction=True)]

ALICE, BOB = "a" * 32, "b" * 32


@pytest.fixture(autouse=True)
def empty_queue():
    queue = django_rq.get_queue("reviews")
    queue.empty()
    yield queue
    queue.empty()


def work() -> int:
    """Run every job of the ``reviews`` queue in a burst worker; returns how many there were."""
    queue = django_rq.get_queue("reviews")
    jobs = queue.count
    connections.close_all()  # the worker forks a work horse per job: it opens its own connections
    django_rq.get_worker("reviews").work(burst=True)
    assert queue.count == 0 and queue.failed_job_registry.count == 0
    return jobs


def played(moves: list[str], start_fen: str | None = None, resign: str | None = None) -> Game:
    """A game between alice (Black) and bob (White) played through the actions, ``resign``'s seat resigning."""
    game = actions.create_game(ALICE, "alice", "B", start_fen=start_fen)
    actions.join_game(game.id, BOB, "bob")
    for text in moves:
        game = Game.objects.get(pk=game.id)
        if game.status != Game.Status.ACTIVE:
            break
        player = ALICE if game.turn.value == "B" else BOB
        actions.play_move(game.id, player, text, game.version)
    if resign:
        actions.resign(game.id, resign)
    return Game.objects.get(pk=game.id)


def london(index: int, data_dir) -> list[str]:
    with (data_dir / "london1992.pdn").open() as handle:
        record = list(rules.read_games(handle))[index]
    return list(record.moves)


def test_a_review_is_queued_run_by_a_worker_and_shown(data_dir, three_pieces):
    game = played(london(3, data_dir), resign=BOB)  # London 1992, game 8: Tinsley resigned to Chinook
    assert game.status == Game.Status.FINISHED and game.ply == 51
    client = Client()
    client.get("/")
    response = client.post(f"/g/{game.id}/review")
    assert response.status_code == 202 and response.json()["status"] == "queued"
    assert client.get(f"/g/{game.id}/review").json()["status"] == "queued"
    assert work() == 1
    data = client.get(f"/g/{game.id}/review").json()
    assert data["status"] == "done" and data["done"] == data["total"] == 52
    assert 'id="review-chart"' in data["html"] and data["html"].count('class="chart-column"') == 52
    review = Review.objects.get(game_id=game.id)
    assert len(review.result["positions"]) == 52 and len(review.result["moves"]) == 51
    page = client.get(f"/g/{game.id}/").content.decode()
    assert 'id="review-chart"' in page and 'data-status="done"' in page
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"  # the chart's numbers are not localized: 60.0, never 60,0
    chart = client.get(f"/g/{game.id}/review").json()["html"].split("</svg>")[0]
    assert 'class="chart-middle"' in chart and not re.search(r'="-?[0-9]+,[0-9]', chart)


def test_a_review_asked_twice_runs_once(data_dir, three_pieces):
    game = played(london(3, data_dir)[:12], resign=ALICE)
    alice, bob, carol = Client(), Client(), Client()
    for client in (alice, bob, carol, carol):
        client.get("/")
        assert client.post(f"/g/{game.id}/review").status_code == 202
    assert django_rq.get_queue("reviews").count == 1
    assert work() == 1
    assert carol.post(f"/g/{game.id}/review").json()["status"] == "done"  # asked again: the stored one
    assert django_rq.get_queue("reviews").count == 0 and work() == 0


def test_a_game_in_play_or_unknown_is_refused_with_a_code():
    game = played(["11-15", "23-19"])
    client = Client()
    response = client.post(f"/g/{game.id}/review")
    assert response.status_code == 409 and response.json()["error"] == "game_not_over"
    assert client.post("/g/zzzzzzzzzz/review").json()["error"] == "no_such_game"
    assert client.get("/g/zzzzzzzzzz/review").status_code == 404
    assert not Review.objects.exists() and django_rq.get_queue("reviews").count == 0


def test_a_rated_game_is_reviewed_when_it_ends():
    alice, bob = account("alice"), account("bob")
    game = actions.create_game(alice, "alice", "B", time_control="3d", rated=True)
    actions.join_game(game.id, bob, "bob")
    for mover, text in ((alice, "11-15"), (bob, "23-19"), (alice, "8-11"), (bob, "22-17")):
        actions.play_move(game.id, mover, text, Game.objects.get(pk=game.id).version)
    actions.resign(game.id, bob)
    assert Game.objects.get(pk=game.id).status == Game.Status.FINISHED
    assert Review.objects.get(game_id=game.id).requested_by == "auto"
    assert django_rq.get_queue("reviews").count == 1


def test_the_review_names_the_move_the_database_calls_losing(three_pieces):
    start = "B:WK4,8:BK2"  # a draw with best play (3 pieces); 2-6 walks into a loss in 31 plies
    line = ["2-6"] + [str(m) for m in native.endgame_line(
        rules.Position.from_fen(start).play(rules.Position.from_fen(start).parse_move("2-6")))]
    game = played(line, start_fen=start)
    assert game.status == Game.Status.FINISHED and game.result == "0-1"
    Client().post(f"/g/{game.id}/review")
    assert work() == 1
    result = Review.objects.get(game_id=game.id).result
    turning = result["turning_point"]
    assert turning == {"ply": 1, "move": "2-6", "side": "B", "before": "draw", "after": "loss", "winner": "W",
                       "plies": 31, "source": "database", "best": turning["best"]}
    assert turning["best"] != "2-6"
    first = result["moves"][0]
    assert first["threw"] == "draw" and first["mark"] == "blunder"
    html = Client().get(f"/g/{game.id}/review").json()["html"]
    assert "This position was a draw; after 1. 2-6" in html and "White wins by force (in 31 plies)" in html


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_chinook_v_tinsley_no_position_is_called_lost_by_the_database_and_none_is_named(index, data_dir,
                                                                                        three_pieces):
    """London 1992 never comes within the database's reach: every position has more pieces than it
    holds and no search proves a result, so the review names no move; had one been, it is the first
    whose position after it the database or a proof calls lost for its mover."""
    record = list(rules.read_games((data_dir / "london1992.pdn").open()))[index]
    game = rules.Game(rules.Position.initial(), automatic_draws=False)
    for token in record.moves:
        game.play(token)
    result = judge.review_game(game.positions[0], game.moves)
    assert all(native.endgame_verdict(p) is None for p in game.positions)
    called = next((m["ply"] for m in result["moves"] if m["exact_after"] == "loss"), None)
    assert (result["turning_point"] or {}).get("ply") == called


def test_the_marks_and_accuracy_are_the_same_on_every_run(data_dir, three_pieces):
    record = list(rules.read_games((data_dir / "london1992.pdn").open()))[3]
    game = rules.Game(rules.Position.initial())
    for token in record.moves:
        game.play(token)
    first, second = (judge.review_game(game.positions[0], game.moves) for _ in range(2))
    assert [(m["mark"], m["best"], m["loss"]) for m in first["moves"]] == \
           [(m["mark"], m["best"], m["loss"]) for m in second["moves"]]
    assert first["sides"] == second["sides"]
    assert first["effort"]["nodes"] == judge.REVIEW_NODES
