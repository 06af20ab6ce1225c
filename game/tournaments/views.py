"""The tournament pages and their actions.

- ``GET /tournaments``: upcoming, running and finished arenas; ``GET|POST /tournaments/new``: a
  signed-in player creates one (``sign_in_required`` otherwise).
- ``GET /tournaments/<id>``: the arena's page (countdown, standings, top games, buttons; a finished
  one's podium and games); its socket (:mod:`game.tournaments.socket`) keeps it live.
- ``GET /tournaments/<id>/invite/<token>``: a player-made tournament's invite link (its page, with
  a join that needs no password); ``POST /tournaments/<id>/invite``: its creator replaces it.
- ``POST /tournaments/<id>/join|withdraw|berserk|cancel``: the actions of
  :mod:`game.tournaments.arena`; a refusal is shown to its sender only (a message on the page it
  is sent back to); ``berserk`` sends the player back to their game.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.contrib import messages
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from game import http_limits
from game.accounts import identity
from game.errors import ActionError
from game.i18n import lazy_text
from game.names import display_name
from game.round import chat as game_chat
from game.round.fanout import publish_sync

from . import arena, chat, jobs, live, seeding, standings
from .forms import ArenaForm
from .models import Entry, Tournament

#: Finished arenas listed.
FINISHED_SHOWN = 20


def player_id(request) -> str:
    """The player id of this browser's session, created on first use (32 hex digits)."""
    pid = request.session.get("player_id")
    if not pid:
        pid = request.session["player_id"] = uuid.uuid4().hex
    return pid


def _name(request) -> str:
    return identity.account_name(request.session) or display_name(request.session.get("name"), player_id(request))


def _tournament_or_404(tournament_id: str) -> Tournament:
    found = Tournament.objects.filter(pk=tournament_id).first()
    if found is None:
        raise Http404("No such tournament")
    return found


@require_safe
def index(request):
    """Upcoming, running and finished arenas."""
    upcoming = Tournament.objects.filter(status=Tournament.Status.CREATED).order_by("starts_at")[:30]
    running = Tournament.objects.filter(status=Tournament.Status.STARTED).order_by("starts_at")
    finished = Tournament.objects.filter(status=Tournament.Status.FINISHED).order_by("-starts_at")[:FINISHED_SHOWN]
    return render(request, "tournaments/index.html", {
        "upcoming": upcoming, "running": running, "finished": finished,
        "signed_in": bool(identity.account_name(request.session))})


def new(request):
    """The form of a player-made arena, Swiss event or round robin; created, its page."""
    form = ArenaForm(request.POST or None)
    status = 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                tournament = arena.create(player_id(request), data["name"], data["time_control"], data["minutes"],
                                          timezone.now() + timedelta(minutes=data["starts_in"]),
                                          rated=data["rated"], password=data["password"],
                                          system=data["system"], rounds=data["rounds"],
                                          ballot=data["ballot"] or data["ballot_pairs"],
                                          ballot_pairs=data["ballot_pairs"])
                transaction.on_commit(lambda: jobs.schedule_tick(tournament))
        except ActionError as exc:
            form.add_error(None, exc.message)
            status = 400
        else:
            return redirect("tournament", tournament_id=tournament.id)
    elif request.method == "POST":
        status = 400
    return render(request, "tournaments/new.html", {
        "form": form, "signed_in": bool(identity.account_name(request.session))}, status=status)


@require_safe
def page(request, tournament_id: str):
    """A tournament's page (an arena's, a Swiss event's or a round robin's)."""
    return _page(request, _tournament_or_404(tournament_id))


@require_safe
def invite(request, tournament_id: str, token: str):
    """A player-made tournament's invite link: its page with a join that needs no password; a
    wrong or replaced link goes to the plain page with the refusal (``bad_invite``) shown."""
    tournament = _tournament_or_404(tournament_id)
    try:
        arena.check_invite(tournament, token)
    except ActionError as exc:
        messages.error(request, exc.message)
        return redirect("tournament", tournament_id=tournament.id)
    return _page(request, tournament, invite=token)


def _page(request, tournament: Tournament, invite: str = ""):
    pid = player_id(request)
    data = standings.public(tournament.id)
    entry = Entry.objects.filter(tournament=tournament, player_id=pid).first()
    mine = arena.current_pairing(tournament.id, pid) if entry else None
    you = standings.row_key(tournament.id, pid)
    over = tournament.status == Tournament.Status.FINISHED
    is_creator = tournament.created_by == pid
    open_ = tournament.status in (Tournament.Status.CREATED, Tournament.Status.STARTED)
    return render(request, "tournaments/page.html", {
        "tournament": tournament, "data": data, "entry": entry, "mine": mine, "you": you,
        "rounds_event": tournament.system != Tournament.System.ARENA,
        "podium": data["standings"][:3] if over else [],
        "games": standings.games_of(tournament.id) if over else [],
        "is_creator": is_creator, "invite": invite,
        "invite_url": request.build_absolute_uri(reverse("tournament_invite", args=[tournament.id, tournament.invite]))
        if is_creator and open_ and tournament.invite else "",
        "late_entry": seeding.late_entry_open(tournament) and entry is None,
        # A rated event takes accounts only (arena.join): a guest is sent to sign in instead of a Join that fails.
        "guest_refused": tournament.rated and entry is None and not identity.account_name(request.session),
        "chat": chat.history(tournament.id, chat.blocked(pid)), "chat_max": game_chat.MAX_CHARS,
        "config": {"id": tournament.id, "wsPath": f"/ws/tournament/{tournament.id}/", "you": you,
                   "secondsLeft": data["seconds_left"], "status": tournament.status},
    })


def _act(request, tournament_id: str, action) -> bool:
    try:
        action()
    except ActionError as exc:
        messages.error(request, exc.message)
        return False
    live.changed(tournament_id)
    return True


@require_POST
def join(request, tournament_id: str):
    """Join (or come back).  A passworded arena's joins count against
    :data:`game.http_limits.TOURNAMENT_JOIN` (each hashes the password tried): over it, refused
    with a message saying when to try again, before any password is checked."""
    pid, name = player_id(request), _name(request)
    password = request.POST.get("password", "")[:60]
    token = request.POST.get("invite", "")[:64]
    if Tournament.objects.filter(pk=tournament_id).exclude(password="").exists():
        wait = http_limits.retry_after(http_limits.TOURNAMENT_JOIN, pid, http_limits.client_address(request))
        if wait is not None:
            messages.error(request, str(lazy_text(_("Too many tries to join this tournament; try again in "
                                                    "%(seconds)s s."), seconds=wait)))
            return redirect("tournament", tournament_id=tournament_id)
    _act(request, tournament_id, lambda: arena.join(tournament_id, pid, name, password, invite=token))
    return redirect("tournament", tournament_id=tournament_id)


@require_POST
def withdraw(request, tournament_id: str):
    """Withdraw (pause)."""
    pid = player_id(request)
    _act(request, tournament_id, lambda: arena.withdraw(tournament_id, pid))
    return redirect("tournament", tournament_id=tournament_id)


@require_POST
def berserk(request, tournament_id: str):
    """Berserk in one's game in play; back to that game (or to the arena when refused)."""
    pid = player_id(request)
    pairing = arena.current_pairing(tournament_id, pid)

    def act():
        progress = arena.berserk(tournament_id, pid)
        publish_sync(progress.game.id, progress.events)

    if _act(request, tournament_id, act) and pairing is not None:
        return redirect("game", game_id=pairing.game_id)
    return redirect("tournament", tournament_id=tournament_id)


@require_POST
def new_invite(request, tournament_id: str):
    """The creator replaces the invite link (the old one admits nobody any more)."""
    pid = player_id(request)
    _act(request, tournament_id, lambda: arena.reset_invite(tournament_id, pid))
    return redirect("tournament", tournament_id=tournament_id)


@require_POST
def cancel(request, tournament_id: str):
    """The creator cancels before the start."""
    pid = player_id(request)
    _act(request, tournament_id, lambda: arena.cancel(tournament_id, pid))
    return redirect("tournament", tournament_id=tournament_id)
