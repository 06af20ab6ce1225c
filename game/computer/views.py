"""Pages and JSON endpoints of the engine: "Play the computer" and the analysis board.

- ``POST /computer``: start a game against the computer (form fields ``level``
  1-9, ``color`` ``B``/``W``/``random``, optional ``name``) and go to it.
- ``GET /analysis`` (``?fen=...`` or ``?game=<id>``): the analysis board.
- ``GET /analysis/position?fen=...[&move=...]``: the position (after ``move``,
  when given) with its legal moves, or why it is refused; without the endgame database's
  verdict for a player in a game against a person (the search is closed to them: ``in_game``).
- ``GET /analysis/game/<id>``: a game's moves and the position after each, for
  the analysis board to step through (404 ``no_such_game`` when there is none).
- ``POST /analysis/pdn`` (JSON ``{"pdn": str}``, CSRF token in ``X-CSRFToken``): a
  pasted game record (PDN, or a bare list of moves) replayed by the rules, in the
  shape of ``/analysis/game/<id>``, or why it cannot be (400 ``bad_pdn``).
- ``POST /analysis/search`` (JSON ``{"fen": str, "time_ms": int}``, CSRF
  token in ``X-CSRFToken``): the engine's best move, score and line, searched
  in the analysis board's own engine pool (never the computer's) within at most
  :data:`~game.engine.ANALYSIS_MAX_MS`, and the exact ``verdict`` when the
  endgame database covers the position (as ``/analysis/position``), with the line
  of best play to the end of the game as ``pv`` for a win or a loss.

JSON errors are ``{"error": code, "message": text}`` with status 400
(``bad_fen``, ``malformed_move``, ``illegal_move``, ``ambiguous_move``,
``bad_request``, ``bad_time``, ``bad_pdn``), 403 (``in_game``), 404 (``no_such_game``), 429
(``rate_limited``: :mod:`game.http_limits`) or 503 (``busy``). See ``docs/protocol.md``.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

from asgiref.sync import sync_to_async
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from game import http_limits, rules
from game.computer.player import analysis_pool
from game.engine import ANALYSIS_MAX_MS, EngineBusy, levels, native
from game.errors import ActionError
from game.i18n import lazy_text, outcome_reason
from game.models import Game, Move, is_game_id
from game.round import actions, reads
from game.sockets import in_db_thread

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise

#: The analysis board's default thinking time (ms).
ANALYSIS_DEFAULT_MS = 1000
#: Longest FEN or move text accepted (characters).
MAX_TEXT = 200
#: Longest pasted game record accepted (characters): a long game with comments fits many times.
MAX_PDN_CHARS = 20_000


def _error(code: str, message: str | StrPromise, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": code, "message": message}, status=status)


def describe(position: rules.Position) -> dict:
    """The analysis board's view of a position.

    ``{"fen": str, "turn": "B"|"W", "legal": [str] (full notation), "over": bool,
    "winner": "B"|"W"|None, "reason": str|None, "verdict": {...}|None}``: a side to move without a
    legal move has lost; ``verdict`` is the exact result with best play when the endgame database
    covers the position (:func:`game.engine.native.endgame_verdict`), else None.
    """
    legal = position.legal_moves()
    info = {"fen": position.fen(), "turn": position.turn.value, "legal": [str(m) for m in legal],
            "over": not legal, "winner": None, "reason": None, "verdict": native.endgame_verdict(position)}
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
              "searchUrl": "/analysis/search", "gameUrl": "/analysis/game/", "pdnUrl": "/analysis/pdn",
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
    game = (Game.objects.filter(pk=game_id)
            .only("id", "start_fen", "fen", "ply", "status", "result", "black_name", "white_name").first())
    if game is None:
        return _error("no_such_game", _("There is no such game."), status=404)
    rows = list(Move.objects.filter(game_id=game.id, ply__lte=game.ply).order_by("ply")
                .values_list("notation", "fen_after"))
    return JsonResponse({"id": game.id, "start_fen": game.start_fen, "moves": [notation for notation, _ in rows],
                         "fens": [fen for _, fen in rows], "fen": game.fen, "status": game.status,
                         "result": game.result, "black": game.black_name or None,
                         "white": game.white_name or None})


def replay_pdn(text: str) -> dict:
    """The first game of a pasted record, replayed by the rules, for the analysis board.

    ``text``: PDN (tags, numbered moves, comments, variations, a result) or a bare list of moves
    (``11-15 23-19 8-11``), in full or unambiguous short notation. Returns ``{"id": None,
    "start_fen", "moves": [full notation], "fens": [the position after each ply], "fen", "status":
    None, "result": "1-0"|"0-1"|"1/2-1/2"|"*", "black": name|None, "white": name|None,
    "site_draw": {"ply": int, "termination": "repetition"|"forty_moves"}|None}``: a record from
    elsewhere plays on past a repetition or the forty-move count (over the board they are claimed,
    docs/rules.md "Records from elsewhere"), and ``site_draw`` is the ply after which the site
    would have declared that draw, when the record goes on past it.
    Raises :class:`ActionError` ``bad_pdn`` with the reason in words (no game, a bad FEN tag,
    the first move that cannot be played and why).
    """
    if len(text) > MAX_PDN_CHARS:
        raise ActionError("bad_pdn", lazy_text(_("A game record has at most %(max)s characters."),
                                               max=MAX_PDN_CHARS))
    record = next(rules.read_games(io.StringIO(text)), None)
    if record is None or (not record.moves and record.start_fen is None):
        raise ActionError("bad_pdn", _("No game was found in the text: paste a game record (PDN) "
                                       "or its moves, e.g. 1. 11-15 23-19 2. 8-11."))
    try:
        start = rules.Position.from_fen(record.start_fen or rules.INITIAL_FEN)
    except rules.InvalidFenError as exc:
        raise ActionError("bad_pdn", lazy_text(_("The game's FEN tag cannot be set up: %(reason)s."),
                                               reason=str(exc))) from None
    game = rules.Game(start, automatic_draws=False)  # a record may go on past a repetition
    for ply, token in enumerate(record.moves, start=1):
        try:
            game.play(token)
        except rules.RulesError as exc:
            raise ActionError("bad_pdn", lazy_text(
                _("Ply %(ply)s, “%(move)s”, cannot be played: %(reason)s."),
                ply=ply, move=token[:MAX_TEXT], reason=str(exc))) from None
    positions = game.positions
    result = record.result if record.result in ("1-0", "0-1", "1/2-1/2") else "*"
    return {"id": None, "start_fen": start.fen(), "moves": [str(m) for m in game.moves],
            "fens": [p.fen() for p in positions[1:]], "fen": positions[-1].fen(), "status": None,
            "result": result, "black": record.tags.get("Black") or None,
            "white": record.tags.get("White") or None,
            "site_draw": ({"ply": game.site_draw[0], "termination": game.site_draw[1].termination.value}
                          if game.site_draw and game.site_draw[0] < game.ply else None)}


@require_POST
def analysis_pdn(request):
    """JSON: a pasted game record (``{"pdn": str}``) as :func:`replay_pdn` gives it; 400
    ``bad_request`` for a body that is not such an object, ``bad_pdn`` for a record that cannot
    be replayed; 413 ``too_large`` for a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MB)."""
    try:
        raw = request.body
    except RequestDataTooBig:
        return _error("too_large", lazy_text(_("A game record has at most %(max)s characters."), max=MAX_PDN_CHARS),
                      status=413)
    try:
        body = json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError, RecursionError):
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("pdn"), str):
        return _error("bad_request", _("The request body must be a JSON object with the game record as \"pdn\"."))
    try:
        return JsonResponse(replay_pdn(body["pdn"]))
    except ActionError as exc:
        return _error(exc.code, exc.message)


@require_safe
def analysis_not_a_game(request, text: str):
    """JSON 404 ``no_such_game`` for ``/analysis/game/<text>`` where no game id can be: not looked up."""
    return _error("no_such_game", _("There is no such game."), status=404)


@require_safe
def analysis_position(request):
    """JSON: the position ``?fen=`` (after ``&move=``, when given) as :func:`describe` shows it, its
    ``verdict`` None for a player in a game against a person; 400 when refused."""
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
    info = describe(position)
    if info["verdict"] is not None and reads.playing_against_a_person(request.session.get("player_id")):
        info["verdict"] = None   # the database's result is the engine's answer: closed in play, as the search
    return JsonResponse(info)


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
    verdict, line = await sync_to_async(exact_result, thread_sensitive=False)(position, result["move"])
    if line:
        result["pv"] = line
    return JsonResponse({"fen": position.fen(), "turn": position.turn.value, **result, "verdict": verdict})


def exact_result(position: rules.Position, move: str | None) -> tuple[native.Verdict | None, list[str] | None]:
    """The endgame database's verdict on ``position`` and, for a win or a loss, the line of best play
    from the engine's ``move`` (full notation) to the end of the game, in full notation; ``(None, None)``
    beyond the database or without one, ``(verdict, None)`` for a draw or without a move."""
    verdict = native.endgame_verdict(position)
    if verdict is None or verdict["result"] == "draw" or move is None:
        return verdict, None
    first = position.parse_move(move)
    after = position.play(first)
    return verdict, [str(first)] + [str(m) for m in native.endgame_line(after, native.MAX_ENDGAME_LINE - 1)]
