"""HTTP pages: home, game page, join, the PDN file, the live games.  Each view makes one call to
an action (:mod:`game.round.actions`) or a read (:mod:`game.round.reads`)."""

from __future__ import annotations

import uuid

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from game import http_limits
from game.forms import JoinForm, NewGameForm
from game.i18n import pool_label, time_control_label
from game.lobby.pairing import POOLS
from game.models import Game
from game.round import actions, reads
from game.round.errors import ActionError
from game.round.fanout import publish_sync


def player_id(request) -> str:
    """The player id of this browser's session, created on first use (32 hex digits)."""
    pid = request.session.get("player_id")
    if not pid:
        pid = request.session["player_id"] = uuid.uuid4().hex
    return pid


def home(request):
    """GET: the home page with the new-game form.  POST: create the game and go to it (429 over
    the new-game limits, :mod:`game.http_limits`).

    Every visit makes sure the session has a player id: the lobby socket ("Play online") needs one.
    """
    player_id(request)
    if request.method == "POST":
        form = NewGameForm(request.POST)
        if form.is_valid():
            wait = http_limits.retry_after(http_limits.GAME_CREATE, player_id(request),
                                           http_limits.client_address(request))
            if wait is not None:
                return http_limits.page_refusal(wait)
            name = form.cleaned_data["name"]
            request.session["name"] = name
            game = actions.create_game(player_id(request), name, form.cleaned_data["color"],
                                        time_control=form.cleaned_data["time_control"])
            return redirect("game", game_id=game.id)
    else:
        form = NewGameForm(initial={"name": request.session.get("name", "")})
    pools = [{"id": pool.id, "label": pool_label(pool.id)} for pool in POOLS.values()]
    return render(request, "home.html", {"form": form, "live_games": _live_games(), "pools": pools})


def _live_games() -> list[dict]:
    """:func:`game.round.reads.live_games` with each time control in the page's language."""
    games = reads.live_games()
    for game in games:
        if game.get("control"):
            game["label"] = time_control_label(game["control"])
    return games


def _game_or_404(game_id: str) -> Game:
    try:
        return Game.objects.get(pk=game_id)
    except Game.DoesNotExist:
        raise Http404("No such game") from None


def _render_game(request, game: Game, join_form: JoinForm | None = None, status: int = 200):
    pid = player_id(request)
    seat = game.seat_of(pid)
    if join_form is None and seat is None and game.status == Game.Status.WAITING:
        join_form = JoinForm(initial={"name": request.session.get("name", "")})
    config = {"gameId": game.id, "wsPath": f"/ws/game/{game.id}/", "you": seat.value if seat else None}
    return render(request, "game.html", {
        "game": game, "seat": seat, "join_form": join_form, "config": config,
        "invite_url": request.build_absolute_uri(f"/g/{game.id}/"),
    }, status=status)


@require_safe
def game_page(request, game_id):
    """The game page: board, players, move list; a join form while a seat is free."""
    return _render_game(request, _game_or_404(game_id))


@require_POST
def join(request, game_id):
    """Take the free seat of a waiting game, then show the game page.

    An invalid name shows the page again with the form's errors (status 400);
    a game whose seats are taken meanwhile simply shows the game to watch.
    """
    game = _game_or_404(game_id)
    form = JoinForm(request.POST)
    if not form.is_valid():
        return _render_game(request, game, join_form=form, status=400)
    name = form.cleaned_data["name"]
    request.session["name"] = name
    try:
        progress = actions.join_game(game_id, player_id(request), name)
    except ActionError:
        return redirect("game", game_id=game_id)
    publish_sync(game_id, progress.events)
    return redirect("game", game_id=game_id)


@require_safe
def game_pdn(request, game_id):
    """Download the game as a PDN file (``<id>.pdn``)."""
    try:
        text = reads.game_pdn(game_id, site=request.get_host())
    except ActionError:
        raise Http404("No such game") from None
    response = HttpResponse(text, content_type="application/x-pdn; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="checkers-{game_id}.pdn"'
    return response


@require_safe
def live_games(request):
    """JSON list of the games being played now: ``{"games": [...]}`` (see :func:`game.round.reads.live_games`)."""
    return JsonResponse({"games": _live_games()})
