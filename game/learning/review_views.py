"""The review's endpoint and the panel the game page shows.

- ``POST /g/<id>/review`` (CSRF token in ``X-CSRFToken``): ask for the game's review; 202 with the
  state below. Refusals ``{"error": code, "message"}``: 404 ``no_such_game``, 409
  ``game_not_over`` (waiting or in play), 409 ``nothing_to_review``, 429 ``too_many_reviews``.
- ``GET /g/<id>/review``: ``{"status": "none"|"queued"|"running"|"done"|"failed", "done": int,
  "total": int (positions scored of all), "ahead": int|None (reviews before it in the queue),
  "html": the panel's body once done, "marks": {ply: {"mark", "best"}}}``; 404 ``no_such_game``.
"""

from __future__ import annotations

from typing import Any

from django.http import JsonResponse
from django.template.loader import render_to_string
from django.views.decorators.http import require_http_methods

from game.errors import ActionError, no_such_game
from game.models import Game, is_game_id

from . import judge, reviews
from .chart import chart
from .models import Review

_STATUS = {"no_such_game": 404, "game_not_over": 409, "nothing_to_review": 409, "too_many_reviews": 429}


def _move_label(ply: int, first_black: bool) -> str:
    """``12.`` or ``12...`` and the move number of ``ply`` in a game whose first ply is Black's when
    ``first_black`` (a FEN start with White to move shifts it)."""
    offset = 0 if first_black else 1
    number = (ply + offset + 1) // 2
    black = (ply + offset) % 2 == 1
    return f"{number}." if black else f"{number}..."


def panel_context(review: Review, game: Game) -> dict[str, Any]:
    """What ``learning/review_result.html`` shows for a finished review."""
    result = review.result or {}
    first_black = game.start_fen.startswith("B")
    moves = [{**m, "label": _move_label(m["ply"], first_black),
              "fen_before": result["positions"][m["ply"] - 1]["fen"]} for m in result.get("moves", [])]
    turning = result.get("turning_point")
    if turning:
        turning = {**turning, "label": _move_label(turning["ply"], first_black),
                   "winner_name": "Black" if turning["winner"] == "B" else "White"}
    return {"game": game, "review": review, "chart": chart(result), "moves": moves,
            "marked": [m for m in moves if m["mark"] or m["threw"]], "sides": result.get("sides", {}),
            "turning": turning, "effort": result.get("effort", {}), "thresholds": dict(judge.THRESHOLDS)}


def state(game: Game, request=None) -> dict[str, Any]:
    """The review's state as ``GET /g/<id>/review`` answers it (a game not finished has none, unread)."""
    review = Review.objects.filter(game_id=game.id).first() if game.status == Game.Status.FINISHED else None
    if review is None:
        return {"status": "none", "done": 0, "total": game.ply + 1, "ahead": None}
    data: dict[str, Any] = {"status": review.status, "done": review.done, "total": review.total or game.ply + 1,
                            "ahead": reviews.queue_position(game.id) if review.status == Review.Status.QUEUED else None}
    if review.status == Review.Status.DONE and review.result:
        data["html"] = render_to_string("learning/review_result.html", panel_context(review, game), request=request)
        data["marks"] = {m["ply"]: {"mark": m["mark"] or ("blunder" if m["threw"] else None), "best": m["best"]}
                         for m in review.result["moves"] if m["mark"] or m["threw"]}
    return data


def _error(exc: ActionError) -> JsonResponse:
    return JsonResponse({"error": exc.code, "message": exc.message}, status=_STATUS.get(exc.code, 400))


@require_http_methods(["GET", "HEAD", "POST"])
def review(request, game_id: str):
    """``GET``: the review's state; ``POST``: ask for it (see the module docstring)."""
    if request.method == "POST":
        player = request.session.get("player_id") or ""
        try:
            reviews.request_review(game_id, player or f"anon:{request.META.get('REMOTE_ADDR', '')}"[:32])
        except ActionError as exc:
            return _error(exc)
    game = Game.objects.filter(pk=game_id).first() if is_game_id(game_id) else None
    if game is None:
        return _error(no_such_game())
    return JsonResponse(state(game, request), status=202 if request.method == "POST" else 200)
