"""Pages and JSON endpoints of the engine: "Play the computer" and the analysis board.

- ``POST /computer``: start a game against the computer (form fields ``level``
  1-5, ``color`` ``B``/``W``/``random``, optional ``name``) and go to it.
- ``GET /analysis`` (``?fen=...`` or ``?game=<id>``): the analysis board.
- ``GET /analysis/position?fen=...[&move=...]``: the position (after ``move``,
  when given) with its legal moves, or why it is refused.
- ``GET /analysis/game/<id>``: a game's moves and the position after each, for
  the analysis board to step through (404 ``no_such_game`` when there is none).
- ``POST /analysis/search`` (JSON ``{"fen": str, "time_ms": int}``, CSRF
  token in ``X-CSRFToken``): the engine's best move, score and line, searched
  in the analysis board's own engine pool (never the computer's) within at most
  :data:`~game.engine.ANALYSIS_MAX_MS`.

JSON errors are ``{"error": code, "message": text}`` with status 400
(``bad_fen``, ``malformed_move``, ``illegal_move``, ``ambiguous_move``,
``bad_request``, ``bad_time``), 403 (``in_game``), 404 (``no_such_game``), 429
(``rate_limited``: :mod:`game.http_limits`) or 503 (``busy``). See ``docs/protocol.md``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from asgiref.sync import sync_to_async
from django import forms
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from game import http_limits, rules
from game.computer import seat as computer_seat
from game.computer.player import analysis_pool
from game.engine import ANALYSIS_MAX_MS, LEVELS, EngineBusy, levels
from game.forms import NameField
from game.i18n import lazy_text, level_name, outcome_reason
from game.models import Game, Move, is_game_id
from game.round import actions, reads
from game.round.errors import ActionError
from game.sockets import in_db_thread
from game.views import player_id

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

_lazy_level_name = lazy(level_name, str)

#: The analysis board's default thinking time (ms).
ANALYSIS_DEFAULT_MS = 1000
#: Longest FEN or move text accepted (characters).
MAX_TEXT = 200


class ComputerGameForm(forms.Form):
    """Home page: a game against the computer."""

    name = NameField(label=_("Your name"), required=False)
    level = forms.TypedChoiceField(choices=[(lv.number, lazy_text("%(number)s · %(name)s", number=lv.number,
                                                                  name=_lazy_level_name(lv.number, lv.name)))
                                            for lv in LEVELS],
                                   coerce=int, initial=3, label=_("Level"))
    color = forms.ChoiceField(choices=[("random", _("Random")), ("B", _("Black")), ("W", _("White"))],
                              initial="random", label=_("Play as"))


@require_POST
def play_computer(request):
    """Start a game against the computer at the chosen level and colour, then show it (429 over
    the new-game limits, :mod:`game.http_limits`).

    The name defaults to the one the session remembers (or "Guest"). An
    invalid form gets status 400 with the reasons.
    """
    form = ComputerGameForm(request.POST)
    if not form.is_valid():
        reasons = "; ".join(f"{field}: {' '.join(str(e) for e in errors)}" for field, errors in form.errors.items())
        return HttpResponse(_("Cannot start the game (%(reasons)s).") % {"reasons": reasons}, status=400,
                            content_type="text/plain; charset=utf-8")
    wait = http_limits.retry_after(http_limits.GAME_CREATE, player_id(request),
                                   http_limits.client_address(request))
    if wait is not None:
        return http_limits.page_refusal(wait)
    name = form.cleaned_data["name"] or request.session.get("name") or str(_("Guest"))
    if form.cleaned_data["name"]:
        request.session["name"] = name
    black, white = computer_seat.seats(player_id(request), name, form.cleaned_data["color"],
                                  form.cleaned_data["level"])
    game = actions.start_game(black=black, white=white)
    return redirect("game", game_id=game.id)


def _error(code: str, message: str | StrPromise, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": code, "message": message}, status=status)


def describe(position: rules.Position) -> dict:
    """The analysis board's view of a position.

    ``{"fen": str, "turn": "B"|"W", "legal": [str] (full notation), "over": bool,
    "winner": "B"|"W"|None, "reason": str|None}``: a side to move without a
    legal move has lost.
    """
    legal = position.legal_moves()
    info = {"fen": position.fen(), "turn": position.turn.value, "legal": [str(m) for m in legal],
            "over": not legal, "winner": None, "reason": None}
    if not legal:
        termination = (rules.Termination.NO_PIECES if not position.pieces(position.turn)
                       else rules.Termination.NO_MOVES)
        outcome = rules.Outcome(termination, position.turn.opponent)
        info.update(winner=position.turn.opponent.value, reason=outcome_reason(outcome))
    return info


def _position(text) -> rules.Position:
    if not isinstance(text, str) or not text.strip():
        raise rules.InvalidFenError("a FEN is required, e.g. B:W21,22,23:B1,2,3")
    if len(text) > MAX_TEXT:
        raise rules.InvalidFenError(f"a FEN has at most {MAX_TEXT} characters")
    return rules.Position.from_fen(text)


def _initial(request) -> tuple[str, str | None, str | None]:
    """The FEN the analysis page starts from, an error to show (None when all is well), and the
    id of the game it comes from (None for a FEN or the start): the page loads that game's moves."""
    if request.GET.get("fen"):
        try:
            return _position(request.GET["fen"]).fen(), None, None
        except rules.InvalidFenError as exc:
            return rules.INITIAL_FEN, f"That position cannot be set up: {exc}.", None
    if request.GET.get("game"):
        game_id = request.GET["game"].strip().rstrip("/").rsplit("/", 1)[-1]
        # Text no game id can be is an unknown game, not looked up (PostgreSQL refuses a NUL in text).
        game = Game.objects.filter(pk=game_id).only("fen").first() if is_game_id(game_id) else None
        if game is None:
            return rules.INITIAL_FEN, str(_("There is no such game.")), None
        return game.fen, None, game.id
    return rules.INITIAL_FEN, None, None


@require_safe
def analysis_page(request):
    """The analysis board, starting from ``?fen=``, from the current position of ``?game=``, or the start."""
    fen, error, game_id = _initial(request)
    config = {"fen": fen, "error": error, "game": game_id, "positionUrl": "/analysis/position",
              "searchUrl": "/analysis/search", "gameUrl": "/analysis/game/",
              "defaultMs": ANALYSIS_DEFAULT_MS, "maxMs": ANALYSIS_MAX_MS, "initialFen": rules.INITIAL_FEN}
    return render(request, "analysis.html", {"config": config})


@require_safe
def analysis_game(request, game_id: str):
    """JSON: a game for the analysis board to step through.

    ``{"id", "start_fen", "moves": [full notation], "fens": [the position after each ply],
    "fen": the current position, "status"}``; 404 ``no_such_game`` for an unknown id. Only what
    the game's page shows anyone (its moves), so it is open to all, players included. The moves
    are those up to the game row's ply, so they agree with its ``fen`` even while a move is stored.
    """
    game = Game.objects.filter(pk=game_id).only("id", "start_fen", "fen", "ply", "status").first()
    if game is None:
        return _error("no_such_game", _("There is no such game."), status=404)
    rows = list(Move.objects.filter(game_id=game.id, ply__lte=game.ply).order_by("ply")
                .values_list("notation", "fen_after"))
    return JsonResponse({"id": game.id, "start_fen": game.start_fen, "moves": [notation for notation, _ in rows],
                         "fens": [fen for _, fen in rows], "fen": game.fen, "status": game.status})


@require_safe
def analysis_not_a_game(request, text: str):
    """JSON 404 ``no_such_game`` for ``/analysis/game/<text>`` where no game id can be: not looked up."""
    return _error("no_such_game", _("There is no such game."), status=404)


@require_safe
def analysis_position(request):
    """JSON: the position ``?fen=`` (after ``&move=``, when given) as :func:`describe` shows it; 400 when refused."""
    try:
        position = _position(request.GET.get("fen"))
    except rules.InvalidFenError as exc:
        return _error("bad_fen", str(exc))
    text = request.GET.get("move")
    if text:
        try:
            position = position.play(actions.parse_move(position, text[:MAX_TEXT]))
        except ActionError as exc:  # ambiguous_move, malformed_move, illegal_move
            return _error(exc.code, exc.message)
    return JsonResponse(describe(position))


@require_POST
async def analysis_search(request):
    """JSON: the engine's analysis of ``{"fen", "time_ms"}`` (see the module docstring)."""
    try:
        body = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _error("bad_request", _("The request body must be a JSON object."))
    if not isinstance(body, dict):
        return _error("bad_request", _("The request body must be a JSON object."))
    try:
        position = _position(body.get("fen"))
    except rules.InvalidFenError as exc:
        return _error("bad_fen", str(exc))
    time_ms = body.get("time_ms", ANALYSIS_DEFAULT_MS)
    if not isinstance(time_ms, int) or isinstance(time_ms, bool) or not 1 <= time_ms <= ANALYSIS_MAX_MS:
        return _error("bad_time", lazy_text(_("time_ms must be a whole number of milliseconds from 1 to %(max)s."),
                                            max=ANALYSIS_MAX_MS))
    player = await request.session.aget("player_id")
    wait = await sync_to_async(http_limits.retry_after, thread_sensitive=False)(
        http_limits.ANALYSIS, player, http_limits.client_address(request))
    if wait is not None:
        return http_limits.json_refusal(wait)
    if await in_db_thread(reads.playing_against_a_person)(player):
        return _error("in_game", _("You are playing a game: the engine opens again when it ends."),
                      status=403)
    try:
        result = await analysis_pool().run(levels.analyse, position.fen(), time_ms)
    except EngineBusy:
        return _error("busy", _("The engine is busy; try again in a moment."), status=503)
    return JsonResponse({"fen": position.fen(), "turn": position.turn.value, **result})
