"""The lessons' pages and endpoints, and the printable sheets.

- ``GET /learn``: the lessons, the endings, the puzzles and the printables, with what this browser
  (its account's, signed in) has finished.
- ``GET /learn/<key>``: a lesson's page.
- ``POST /learn/<key>/move`` (JSON ``{"step": int, "move": str}`` for a rules lesson, ``{"moves":
  [str], "move": str}`` for an ending; CSRF token in ``X-CSRFToken``): the move checked
  (:mod:`game.learning.lessons`); a finished lesson is stored for an account. 400 ``bad_request``,
  ``illegal_move`` (any move the rules refuse, with their reason), 404 ``no_such_lesson``, 409
  ``no_database`` (an ending without the endgame database on the server).
- ``GET /learn/print/<sheet>.pdf`` (``board``, ``pieces``, ``rules``): the printable sheets in the
  page's language (:mod:`game.learning.printables`).
"""

from __future__ import annotations

import json
import uuid

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from game.models import Account
from game.rules import Position, RulesError

from . import lessons, printables
from .models import LessonProgress


def _player(request) -> str:
    pid = request.session.get("player_id")
    if not pid:
        pid = request.session["player_id"] = uuid.uuid4().hex
    return pid


def _finished(player_id: str) -> set[str]:
    return set(LessonProgress.objects.filter(player_id=player_id).values_list("lesson", flat=True))


@require_safe
def index(request):
    """The lessons and what this browser's account has finished (a guest's ticks come from its browser)."""
    done = _finished(_player(request))
    items = [{"lesson": lesson, "done": lesson.key in done,
              "available": lesson.ending is None or lessons.ending_available(lesson)} for lesson in lessons.LESSONS]
    return render(request, "learning/lessons.html", {"items": items, "sheets": printables.SHEETS})


@require_safe
def lesson_page(request, key: str):
    """A lesson's page (404 for an unknown one)."""
    lesson = lessons.BY_KEY.get(key)
    if lesson is None:
        raise Http404("No such lesson")
    available = lesson.ending is None or lessons.ending_available(lesson)
    config = {"key": lesson.key, "moveUrl": f"/learn/{lesson.key}/move", "ending": lesson.ending is not None,
              "available": available}
    if lesson.ending is None:
        config["step"] = lessons.step_view(lesson, 0)
    elif available:
        position = Position.from_fen(lesson.ending)
        config["start"] = {"fen": lesson.ending, "turn": position.turn.value,
                           "legal": [str(m) for m in position.legal_moves()]}
    return render(request, "learning/lesson.html", {"lesson": lesson, "config": config, "available": available,
                                                    "done": lesson.key in _finished(_player(request))})


def _error(code: str, message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": code, "message": message}, status=status)


@require_POST
def lesson_move(request, key: str):
    """JSON: a learner's move checked (see the module docstring)."""
    lesson = lessons.BY_KEY.get(key)
    if lesson is None:
        return _error("no_such_lesson", _("There is no such lesson."), 404)
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError):
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("move"), str) or len(body["move"]) > 80:
        return _error("bad_request", _("Send the move as text, e.g. 9-14."))
    try:
        if lesson.ending is None:
            step = body.get("step")
            if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step < len(lesson.steps):
                return _error("bad_request", _("This lesson has no such step."))
            answer = lessons.check_step(lesson, step, body["move"])
        else:
            moves = body.get("moves", [])
            if not lessons.ending_available(lesson):
                return _error("no_database", _("This ending needs the endgame database, which this server lacks."), 409)
            if not isinstance(moves, list) or len(moves) > 400 or not all(isinstance(m, str) for m in moves):
                return _error("bad_request", _("Send the moves played so far as a list."))
            answer = lessons.ending_move(lesson, moves, body["move"])
            answer["done"] = answer["result"] == "won"
    except RulesError as exc:
        return _error("illegal_move", str(exc))
    except ValueError:
        return _error("bad_request", _("Those moves are not the ones played here: start again."))
    player = _player(request)
    if answer["done"] and Account.objects.filter(player_id=player).exists():
        LessonProgress.objects.get_or_create(player_id=player, lesson=lesson.key)
    return JsonResponse(answer)


@require_safe
def sheet(request, name: str):
    """A printable sheet as a PDF in the page's language; 404 for an unknown one."""
    if name not in printables.SHEETS:
        raise Http404("No such sheet")
    response = HttpResponse(printables.render(name, get_language() or "en"), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="checkers-{name}.pdf"'
    return response
