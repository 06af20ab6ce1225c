"""HTTP pages: home, game page, join, the PDN file, the live games.  Each view makes one call to
an action (:mod:`game.round.actions`) or a read (:mod:`game.round.reads`)."""

from __future__ import annotations

import uuid
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render, resolve_url
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from game import http_limits
from game.accounts import identity
from game.clock import TimeControl
from game.computer import seat as computer_seat
from game.errors import ActionError
from game.forms import ComputerGameForm, JoinForm, NewGameForm
from game.i18n import computer_name, pool_label, time_control_label
from game.learning import boards, puzzles, review_views
from game.lobby.pairing import POOLS, QUICK_CONTROLS
from game.models import Account, Game, is_game_id
from game.names import display_name, guest_name
from game.people import tv
from game.players import computer_level
from game.profiles import pdn_file
from game.profiles.views import category_choices
from game.ratings import games as ratings
from game.ratings.categories import category_of
from game.round import actions, berserk, protocol, reads, takebacks
from game.round.fanout import publish_sync
from game.rules import INITIAL_FEN, Position, ballots
from game.rules.pdn import moves_to_pdn
from game.tournaments import arena
from game.tournaments.models import Tournament


def player_id(request) -> str:
    """The player id of this browser's session, created on first use (32 hex digits)."""
    pid = request.session.get("player_id")
    if not pid:
        pid = request.session["player_id"] = uuid.uuid4().hex
    return pid


def play_name(request, typed: str) -> str:
    """The name a form's game is played under (:func:`game.names.display_name`: ``typed``, already
    cleaned by the form's :class:`game.forms.NameField`, else the visitor's guest name). A typed
    name is remembered in the session for the next forms; an emptied box forgets it. Signed in, the
    account's username, whatever was typed (:func:`game.accounts.identity.seat_name`)."""
    signed_in = identity.account_name(request.session)
    if signed_in:
        return signed_in
    if typed:
        request.session["name"] = typed
    else:
        request.session.pop("name", None)  # emptied on purpose: a guest from now on
    return display_name(typed, player_id(request))


def posted_form(form_class, request):
    """``form_class`` bound to the request's POST data; signed in, its name box is locked (the game
    is played under the username whatever was sent, so the name sent is not checked)."""
    form = form_class(request.POST)
    if identity.account_name(request.session) and "name" in form.fields:
        form.fields["name"].disabled = True
    return form


def _guest_placeholder(form, request) -> None:
    """Show in the empty name box the guest name that leaving it empty plays under; signed in, the
    box shows the username and cannot be changed."""
    signed_in = identity.account_name(request.session)
    if signed_in:
        form.fields["name"].disabled = True
        form.initial["name"] = signed_in
        return
    form.fields["name"].widget.attrs["placeholder"] = guest_name(player_id(request))


@require_http_methods(["GET", "HEAD", "POST"])
def home(request):
    """GET: the home page with the new-game form.  POST: create the game and go to it (429 over
    the new-game limits, :mod:`game.http_limits`); a form with errors is shown again with them,
    status 400, as the site's other forms are.

    Every visit makes sure the session has a player id: the lobby socket ("Play online") needs one.
    """
    player_id(request)
    status = 200
    if request.method == "POST":
        status = 400    # unless the game is made: a redirect
        form = posted_form(NewGameForm, request)
        if form.is_valid():
            wait = http_limits.retry_after(http_limits.GAME_CREATE, player_id(request),
                                           http_limits.client_address(request))
            if wait is not None:
                return http_limits.page_refusal(wait)
            name = play_name(request, form.cleaned_data["name"])
            try:
                game = actions.create_game(player_id(request), name, form.cleaned_data["color"],
                                            time_control=form.cleaned_data["time_control"],
                                            ballot=form.cleaned_data["ballot_choice"],
                                            rated=form.cleaned_data["rated"])
            except ActionError as exc:   # the form checked it all; a refusal still shows as its error
                form.add_error(None, str(exc.message))
            else:
                return redirect("game", game_id=game.id)
    else:
        form = NewGameForm(initial={"name": request.session.get("name", "")})
    return render_home(request, form, status)


def render_home(request, form=None, status: int = 200, computer_form=None) -> HttpResponse:
    """The home page with ``form`` (the "Play a friend" form; a fresh one when None) and, when
    "Play the computer" was refused, its bound ``computer_form``, whose errors the panel shows
    beside what the visitor chose (``status`` 400 then)."""
    if form is None:
        form = NewGameForm(initial={"name": request.session.get("name", "")})
    _guest_placeholder(form, request)
    pools = [{"id": pool.id, "label": pool_label(pool.id)} for pool in POOLS.values()
             if not pool.rated and not pool.ballot]
    daily = puzzles.daily()
    return render(request, "home.html", {"form": form, "live_games": _live_games(), "pools": pools,
                                         "tv_game": _tv_mini(),
                                         "quick_pools": _quick_pools(),
                                         "computer_form": computer_form, "daily_puzzle": daily,
                                         "daily_board": boards.mini_board(daily.fen, flip=daily.fen.startswith("B"))
                                         if daily else None}, status=status)


def _quick_pools() -> list[dict]:
    """The quick-pairing buttons of "Play online": ``[{"id": "5+3", "label": "5+3", "kind": "Blitz"}]``, the
    pool of each of :data:`game.lobby.pairing.QUICK_CONTROLS`, its control in words (``"3 days"``) and its
    rating category, in the page's language."""
    kinds = dict(category_choices())
    buttons = []
    for control in QUICK_CONTROLS:
        days = TimeControl.parse(control).days
        label = ngettext("%(days)s day", "%(days)s days", days) % {"days": days} if days else control
        buttons.append({"id": control, "label": label, "kind": kinds.get(category_of(control) or "", "")})
    return buttons


def _live_games() -> list[dict]:
    """:func:`game.round.reads.live_games` with each time control and the computer's name in the page's language."""
    games = reads.live_games()
    for game in games:
        if game.get("control"):
            game["label"] = time_control_label(game["control"])
        for color in ("black", "white"):
            if game.get(f"{color}_computer"):
                game[color] = computer_name(game[f"{color}_computer"])
    return games


def _game_or_404(game_id: str) -> Game:
    try:
        return Game.objects.get(pk=game_id)
    except Game.DoesNotExist:
        raise Http404("No such game") from None


def _render_game(request, game: Game, join_form: JoinForm | None = None, status: int = 200,
                 template: str = "game.html", extra: dict | None = None):
    """The game page of ``game`` (``template``: the TV page shows a game as the game page does, with
    ``extra`` in its context)."""
    pid = player_id(request)
    seat = game.seat_of(pid)
    pairing = arena.of_game(game.id)
    # A rated game's free seat is for accounts: a guest is asked to sign in instead.
    sign_in_to_join = (seat is None and game.status == Game.Status.WAITING and game.rated
                       and not ratings.is_account(pid))
    if join_form is None and seat is None and game.status == Game.Status.WAITING and not sign_in_to_join:
        join_form = JoinForm(initial={"name": request.session.get("name", "")})
    if join_form is not None:
        _guest_placeholder(join_form, request)
    config = {"gameId": game.id, "wsPath": f"/ws/game/{game.id}/", "you": seat.value if seat else None,
              "fixedPlies": takebacks.fixed_plies(game), "computerGrantsUpTo": takebacks.COMPUTER_GRANTS_UP_TO,
              "protocol": protocol.page_constants()}
    return render(request, template, {
        **(extra or {}),
        "game": game, "seat": seat, "join_form": join_form, "config": config,
        "ballot": ballots.ballot(game.ballot) if game.ballot is not None else None,
        "invite_url": request.build_absolute_uri(f"/g/{game.id}/"),
        "game_over": game.status == Game.Status.FINISHED, "review_state": review_views.state(game, request),
        "sign_in_url": (f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': f'/g/{game.id}/'})}"
                        if sign_in_to_join else None),
        "arena": pairing,
        # the ply at which the seat's own first move ends its berserk (arena_game.js hides the button)
        "berserk_until": (berserk.first_move_ply(game, seat) if seat is not None and pairing is not None
                          and pairing.tournament.system == Tournament.System.ARENA
                          and berserk.possible(game, seat) else None),
        "challengeable": _challengeable(request, game, pid),
    }, status=status)


def _challengeable(request, game: Game, pid: str) -> list[str]:
    """The usernames of the accounts seated in ``game`` that its signed-in viewer may challenge (from
    the game page, by their profile's challenge form); none for a guest."""
    if not identity.account_name(request.session):
        return []
    seated = [p for p in (game.black_player, game.white_player) if p and p != pid]
    return list(Account.objects.filter(player_id__in=seated).order_by("user__username")
                .values_list("user__username", flat=True))


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
    form = posted_form(JoinForm, request)
    if not form.is_valid():
        return _render_game(request, game, join_form=form, status=400)
    name = play_name(request, form.cleaned_data["name"])
    try:
        progress = actions.join_game(game_id, player_id(request), name)
    except ActionError:   # taken meanwhile, or rated and this is a guest: the page says what to do
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


@require_POST
def play_computer(request):
    """Start a game against the computer at the chosen level and colour, then show it (429 over
    the new-game limits, :mod:`game.http_limits`).

    An empty name plays under the visitor's guest name, as on every form
    (:func:`game.names.display_name`). An invalid form gets the home page again, status 400, with
    the reasons in the "Play the computer" panel and the visitor's choices kept.
    """
    form = posted_form(ComputerGameForm, request)
    if not form.is_valid():
        return render_home(request, status=400, computer_form=form)
    wait = http_limits.retry_after(http_limits.GAME_CREATE, player_id(request),
                                   http_limits.client_address(request))
    if wait is not None:
        return http_limits.page_refusal(wait)
    name = play_name(request, form.cleaned_data["name"])
    black, white = computer_seat.seats(player_id(request), name, form.cleaned_data["color"],
                                  form.cleaned_data["level"])
    try:
        game = actions.start_game(black=black, white=white, ballot=form.cleaned_data["ballot_choice"])
    except ActionError as exc:   # the form checked it all; a refusal still shows as its error
        form.add_error(None, str(exc.message))
        return render_home(request, status=400, computer_form=form)
    return redirect("game", game_id=game.id)


@require_safe
def tournament_pdn(request, tournament_id):
    """Every game of a finished arena as one PDN file (``arena-<id>.pdn``), oldest first, each
    written from its stored row and moves as a player's archive is (:mod:`game.profiles.pdn_file`),
    its Event the arena's name.  404 for an arena that is not finished."""
    tournament = arena.finished_or_none(tournament_id)
    if tournament is None:
        raise Http404("No such finished tournament")
    site = request.get_host()
    rows = list(Game.objects.filter(pairing__tournament_id=tournament.id, status=Game.Status.FINISHED)
                .order_by("created_at", "id").values_list(*pdn_file.FIELDS))
    parts = []
    for start in range(0, len(rows), pdn_file.BATCH_GAMES):
        chunk = rows[start:start + pdn_file.BATCH_GAMES]
        moves = pdn_file.moves_of([row[0] for row in chunk])
        for row in chunk:
            tags = {**pdn_file.tags_of(row, site), "Event": tournament.name}
            position = Position.from_fen(row[pdn_file.FIELDS.index("start_fen")] or INITIAL_FEN)
            parts.append(moves_to_pdn(moves[row[0]], position.fen(), position.turn, tags["Result"], tags) + "\n")
    response = HttpResponse("".join(parts), content_type="application/x-pdn; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="arena-{tournament.id}.pdn"'
    return response


def _channel_labels() -> list[dict[str, str]]:
    """The TV channels in words, as the TV page's tabs list them: ``[{"id", "label", "url"}]``."""
    kinds = dict(category_choices())
    return [{"id": channel, "label": str(kinds.get(channel, _("Top rated"))),
             "url": reverse("tv") if channel == tv.TOP else reverse("tv_channel", args=[channel])}
            for channel in tv.CHANNELS]


def _tv_game(channel: str, after: str | None) -> Game | None:
    """The game channel ``channel`` shows now (:func:`game.people.tv.pick`), never ``after``."""
    chosen = tv.pick(channel, after)
    return Game.objects.filter(pk=chosen["id"]).first() if chosen else None


def _after(request) -> str | None:
    """The query's ``after`` when it is a game id (anything else is ignored)."""
    after = request.GET.get("after", "")
    return after if is_game_id(after) else None


@require_safe
def tv_page(request, channel: str = tv.TOP):
    """TV (``/tv``, ``/tv/<category>``; ``/tv/top`` is ``/tv``): the game the channel shows, on the game page as a
    spectator sees it, with the channels' tabs; the page goes to the channel's next game when it
    ends (``static/js/tv.js``).  ``?after=<id>``: never that game (the one the page showed).  404
    for a channel that is not one of :data:`game.people.tv.CHANNELS`."""
    if channel not in tv.CHANNELS:
        raise Http404("No such TV channel")
    labels = _channel_labels()
    context = {"tv_channel": channel, "tv_channels": labels,
               "tv_label": next(c["label"] for c in labels if c["id"] == channel),
               "tv_url": next(c["url"] for c in labels if c["id"] == channel)}
    game = _tv_game(channel, _after(request))
    if game is None:
        return render(request, "tv_empty.html", context)
    return _render_game(request, game, template="tv.html", extra=context)


@require_safe
def tv_game(request):
    """``GET /tv/game?channel=<channel>&after=<id>``: the game channel ``channel`` (default
    :data:`game.people.tv.TOP`) shows now, never ``after``: ``{"channel", "game": {"id", "black",
    "white", "control", "label", "rating", "url"} | null}``.  A channel that does not exist: 404
    ``no_such_channel``; an ``after`` that is no game id: 400 ``bad_game_id``."""
    channel = request.GET.get("channel", tv.TOP)
    if channel not in tv.CHANNELS:
        return JsonResponse({"error": "no_such_channel", "message": _("No such TV channel.")}, status=404)
    after = request.GET.get("after")
    if after is not None and not is_game_id(after):
        return JsonResponse({"error": "bad_game_id", "message": _("That is not a game id.")}, status=400)
    chosen = tv.pick(channel, after)
    if chosen is not None:
        chosen = {**chosen, "label": time_control_label(chosen["control"]) if chosen["control"] else "",
                  "url": reverse("game", args=[chosen["id"]])}
    return JsonResponse({"channel": channel, "game": chosen})


def _tv_mini() -> dict | None:
    """The home page's TV board: the top channel's game, its position drawn small
    (:func:`game.learning.boards.mini_board`, White at the bottom as a spectator sees it), its
    players' names with their ratings in a rated game (``"alice (1512)"``; the computer's in the
    page's language); None when no game is in play."""
    game = _tv_game(tv.TOP, None)
    if game is None:
        return None
    def seat(player: str | None, name: str, rating: int | None) -> str:
        level = computer_level(player)
        return computer_name(level) if level else f"{name} ({rating})" if rating else name

    return {"id": game.id, "board": boards.mini_board(game.fen),
            "black": seat(game.black_player, game.black_name, game.black_rating),
            "white": seat(game.white_player, game.white_name, game.white_rating)}
