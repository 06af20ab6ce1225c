"""The puzzle pages and their one endpoint.

- ``GET /puzzles``: a puzzle for this browser (never attempted, near its rating); ``GET
  /puzzles/<id>``: that one; ``GET /puzzles/streak``: streak mode (rising ratings, unrated, until
  the first wrong move).
- ``POST /puzzles/<id>/move`` (JSON ``{"move": str, "step"?: int, "streak"?: bool}``, CSRF token in
  ``X-CSRFToken``): the move checked on the server (:func:`game.learning.puzzles.play`); 400
  ``bad_request``, ``malformed_move``, ``illegal_move``, ``ambiguous_move``; 404 ``no_such_puzzle``.
- ``GET /@/<name>/puzzles``: an account's puzzle rating and history (``/puzzles/history``: this
  browser's own).
"""

from __future__ import annotations

import json
import uuid

from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST, require_safe

from game.errors import ActionError
from game.models import Account

from . import puzzles, sources
from .themes import THEMES

_STATUS = {"no_such_puzzle": 404}


def _player(request) -> str:
    pid = request.session.get("player_id")
    if not pid:
        pid = request.session["player_id"] = uuid.uuid4().hex
    return pid


def _page(request, puzzle, streak: bool = False, status: int = 200):
    player = _player(request)
    rated = puzzles.is_account(player)
    context = {"puzzle": puzzle, "rated": rated, "streak": streak, "themes": THEMES,
               "source": sources.describe(puzzle.source) if puzzle else "",
               "solver": puzzles.solver(player) if rated else None,
               "streak_state": {"streak": (request.session.get("puzzle_streak") or {}).get("count", 0),
                                "best": request.session.get("puzzle_best_streak", 0)}}
    context["config"] = {"puzzle": puzzles.public(puzzle) if puzzle else None, "streak": streak,
                         "moveUrl": f"/puzzles/{puzzle.id}/move" if puzzle else None}
    return render(request, "learning/puzzle.html", context, status=status)


@require_safe
def puzzle_next(request):
    """A puzzle this browser has not tried, near its rating."""
    return _page(request, puzzles.next_for(_player(request)))


@require_safe
def puzzle_page(request, puzzle_id: str):
    """The puzzle ``puzzle_id`` (404 for an unknown one)."""
    try:
        puzzle = puzzles.get(puzzle_id)
    except ActionError:
        raise Http404("No such puzzle") from None
    return _page(request, puzzle)


@require_safe
def streak_page(request):
    """Streak mode: the session's next streak puzzle."""
    return _page(request, puzzles.streak_next(request.session), streak=True)


@require_POST
def puzzle_move(request, puzzle_id: str):
    """JSON: a solver's move checked (see the module docstring)."""
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError):
        body = None
    if not isinstance(body, dict):
        return JsonResponse({"error": "bad_request", "message": "The request body must be a JSON object."}, status=400)
    player = _player(request)
    streak = body.get("streak") is True
    try:
        answer = puzzles.play(player, puzzle_id, body.get("move"), body.get("step"), streak=streak)
    except ActionError as exc:
        return JsonResponse({"error": exc.code, "message": exc.message}, status=_STATUS.get(exc.code, 400))
    if streak and not answer["practice"] and answer["result"] in ("won", "lost"):
        answer["streak"] = puzzles.streak_result(request.session, player, puzzle_id, answer["result"])
    return JsonResponse(answer)


def _history(request, player_id: str, name: str | None):
    rated = puzzles.is_account(player_id)
    return render(request, "learning/puzzle_history.html", {
        "name": name, "solver": puzzles.solver(player_id) if rated else None,
        "attempts": puzzles.history(player_id)})


@require_safe
def my_history(request):
    """This browser's puzzle history (its account's when signed in)."""
    return _history(request, _player(request), None)


@require_safe
def account_history(request, username: str):
    """An account's puzzle rating and history; 404 for an unknown name."""
    account = Account.objects.filter(user__username__iexact=username).select_related("user").first()
    if account is None:
        raise Http404("No such player")
    return _history(request, account.player_id, account.user.username)
