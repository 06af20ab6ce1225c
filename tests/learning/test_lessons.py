"""Lessons: every board's accepted moves are legal and right by the rules (the draw lessons end in
the draw they teach); the endings are checked by the endgame database and answered with its
longest defence; a finished lesson is kept for an account; the pages and the printable sheets."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client

from game import rules
from game.engine import native
from game.learning import lessons
from game.learning.models import LessonProgress
from tests.ratings.helpers import account

RULES_STEPS = [(lesson, index) for lesson in lessons.LESSONS for index in range(len(lesson.steps))]


@pytest.mark.parametrize(("lesson", "index"), RULES_STEPS, ids=[f"{lesson.key}-{i}" for lesson, i in RULES_STEPS])
def test_every_answer_is_legal_and_right_and_the_other_moves_are_not(lesson, index):
    view = lessons.step_view(lesson, index)
    step = lesson.steps[index]
    assert step.answers <= set(view["legal"])
    for move in view["legal"]:
        assert lessons.check_step(lesson, index, move)["right"] is (move in step.answers)


def test_the_draw_lessons_draw_by_the_rules():
    draws = lessons.BY_KEY["draws"]
    assert "repetition" in lessons.check_step(draws, 0, "32-28")["message"]
    forty = draws.steps[1]
    game = rules.Game(rules.Position.from_fen(forty.fen))
    for move in forty.setup:
        game.play(move)
    assert game.no_progress_plies == 79 and game.outcome is None
    game.play("13-9")  # a king move instead: the eightieth ply without progress
    assert game.outcome.termination is rules.Termination.FORTY_MOVES


def post(client, key, body):
    return client.post(f"/learn/{key}/move", data=json.dumps(body), content_type="application/json")


def test_two_kings_against_one_is_won_by_best_play_and_lost_by_a_slip(three_pieces, db):
    lesson = lessons.BY_KEY["two_kings"]
    client = Client()
    moves: list[str] = []
    position = rules.Position.from_fen(lesson.ending)
    while True:
        best = str(native.endgame_line(position, 1)[0])
        answer = post(client, "two_kings", {"moves": moves, "move": best}).json()
        if answer["result"] != "continue":
            break
        moves = answer["moves"]
        position = rules.Position.from_fen(answer["fen"])
    assert answer["result"] == "won" and answer["done"] and len(answer["moves"]) <= 31
    slip = post(client, "two_kings", {"moves": [], "move": "5-9"}).json()  # lets the king out: a draw
    assert slip["result"] in ("lost", "continue")
    tampered = post(client, "two_kings", {"moves": ["1-6", "32-28"], "move": "6-10"})
    assert tampered.status_code == 400 and tampered.json()["error"] == "bad_request"


def test_a_slip_in_an_ending_is_named_by_the_database(three_pieces, db):
    start = rules.Position.from_fen(lessons.BY_KEY["two_kings"].ending)
    losing = [str(m) for m in start.legal_moves()
              if (native.endgame_verdict(start.play(m)) or {}).get("winner") != "B"]
    for move in losing:
        assert post(Client(), "two_kings", {"moves": [], "move": move}).json()["result"] == "lost"


@pytest.mark.django_db
def test_a_finished_lesson_is_kept_for_an_account_and_bad_input_is_refused():
    player = account("dora")
    client = Client()
    session = client.session
    session["player_id"] = player
    session.save()
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key
    assert post(client, "multi_jump", {"step": 0, "move": "9x18x27"}).json()["done"]
    assert LessonProgress.objects.filter(player_id=player, lesson="multi_jump").exists()
    assert 'data-lesson="multi_jump" data-done="1"' in client.get("/learn").content.decode()
    for body, code in (({"step": 0, "move": "9-13"}, "illegal_move"), ({"step": 5, "move": "9x18x27"}, "bad_request"),
                       ({"move": 3}, "bad_request"), ({"step": True, "move": "9x18x27"}, "bad_request")):
        response = post(client, "multi_jump", body)
        assert response.status_code == 400 and response.json()["error"] == code
    assert post(client, "nope", {"step": 0, "move": "1-5"}).status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["en", "fr", "es"])
def test_the_pages_and_the_printable_sheets(language):
    client = Client(headers={"accept-language": language})
    assert client.get("/learn").status_code == 200
    for lesson in lessons.LESSONS:
        assert client.get(f"/learn/{lesson.key}").status_code == 200
    for sheet in ("board", "pieces", "rules"):
        response = client.get(f"/learn/print/{sheet}.pdf")
        assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
        assert response.content.startswith(b"%PDF-") and len(response.content) > 1000
    assert client.get("/learn/print/other.pdf").status_code == 404
