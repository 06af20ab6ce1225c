"""The profile pages: ``/@/<username>`` (its games' part), its archive and PDN file, ``/games/mine``, ``/leaderboard``.
Each view reads through :mod:`game.profiles.reads`; none changes anything."""

from __future__ import annotations

from django import forms
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_safe

from game.clock import CORRESPONDENCE, STANDARD
from game.i18n import time_control_label
from game.models import Account
from game.profiles import downloads, reads
from game.profiles import search as game_search

#: Games on each page of an archive.
ARCHIVE_PAGE = 20


def viewer_id(request) -> str | None:
    """The player id of this browser (its session's, which a signed-in browser shares with its
    account), or None before it has one.  Creates nothing."""
    pid = request.session.get("player_id")
    return pid if isinstance(pid, str) and pid else None


def _account_or_404(username: str) -> Account:
    account = reads.account_named(username)
    if account is None:
        raise Http404("No such player")
    return account


def category_choices() -> list[tuple[str, object]]:
    """The rating categories in words, :data:`game.profiles.reads.CATEGORIES` order."""
    return [("bullet", _("Bullet")), ("blitz", _("Blitz")), ("rapid", _("Rapid")),
            ("classical", _("Classical")), ("correspondence", _("Correspondence"))]


class ArchiveFilters(forms.Form):
    """The archive's filters, from the query string; every field may be left empty."""

    opponent = forms.CharField(label=_("Opponent"), required=False, max_length=40, strip=True)
    result = forms.ChoiceField(label=_("Result"), required=False, choices=[
        ("", _("Any result")), (reads.WON, _("Won")), (reads.LOST, _("Lost")), (reads.DRAWN, _("Drawn"))])
    control = forms.ChoiceField(label=_("Time control"), required=False, choices=[
        ("", _("Any time control")), *category_choices(), ("untimed", _("Untimed"))])
    rated = forms.ChoiceField(label=_("Rated"), required=False, choices=[
        ("", _("Rated or casual")), ("yes", _("Rated")), ("no", _("Casual"))])


def profile_context(username: str) -> dict:
    """What a player's page shows of its games: ratings per category, the rating chart, results
    against its most played opponents, its latest games.  Raises Http404 for a name no account
    has.  The page itself is :func:`game.people.views.profile`, which adds the player's people."""
    account = _account_or_404(username)
    pid = account.player_id
    return {
        "account": account, "name": account.user.username,
        "ratings": reads.ratings(pid), "chart": reads.chart(pid),
        "categories": dict(category_choices()),
        "opponents": reads.opponents(pid), "recent": reads.recent_games(pid),
        "challenge_controls": [(control, time_control_label(control))
                               for control in ("untimed", *STANDARD, *CORRESPONDENCE)],
    }


@require_safe
def games(request, username):
    """The player's game archive, 20 games a page, newest first, with the filters of
    :class:`ArchiveFilters`.  Filters that do not validate show the page with their errors and
    no games (400); a page number that is not one shows the first or the last page."""
    account = _account_or_404(username)
    form = ArchiveFilters(request.GET)
    context = {"account": account, "name": account.user.username, "form": form,
               "categories": dict(category_choices())}
    if not form.is_valid():
        return render(request, "profiles/games.html", {**context, "page": None}, status=400)
    data = form.cleaned_data
    found = reads.archive(account.player_id, result=data["result"], opponent=data["opponent"],
                          category=data["control"], rated={"yes": True, "no": False}.get(data["rated"]))
    page = Paginator(found, ARCHIVE_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "profiles/games.html", {
        **context, "page": page, "lines": reads.game_lines(page.object_list, account.player_id),
        "query": query.urlencode(),
    })


@require_safe
def games_pdn(request, username):
    """All of the player's games as one PDN file, oldest first (:mod:`game.profiles.downloads`:
    counted per session and address, at most so many at once, streamed a batch at a time off the
    event loop, whole or visibly cut).  404 for a name no account has."""
    account = _account_or_404(username)
    return downloads.response(request, viewer_id(request), account.player_id,
                              f"checkers-{account.user.username}.pdn")


@require_safe
def search(request):
    """Game search (:mod:`game.profiles.search`): finished games of every player by the filters
    of the query string, :data:`game.profiles.search.PAGE_SIZE` a page, with a link to their PDN
    file.  Filters that do not validate show the form with their errors and no games (400)."""
    form = game_search.SearchForm(request.GET)
    if not form.is_valid():
        return render(request, "profiles/search.html", {"form": form, "page": None}, status=400)
    page = Paginator(game_search.games(form.cleaned_data), game_search.PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "profiles/search.html", {
        "form": form, "page": page, "names": game_search.names(list(page.object_list)),
        "query": query.urlencode(), "max_results": game_search.MAX_RESULTS, "max_pdn": game_search.MAX_PDN_GAMES})


@require_safe
def search_pdn(request):
    """The PDN file of a search's first :data:`game.profiles.search.MAX_PDN_GAMES` games, newest
    first; counted as an archive download (:func:`game.profiles.downloads.refused`: 429 over the
    rate).  Filters that do not validate: 400."""
    form = game_search.SearchForm(request.GET)
    if not form.is_valid():
        return HttpResponse(str(_("Those filters are not valid.")) + "\n", status=400,
                            content_type="text/plain; charset=utf-8")
    refusal = downloads.refused(request, viewer_id(request))
    if refusal is not None:
        return refusal
    response = HttpResponse(game_search.pdn_text(form.cleaned_data, request.get_host()),
                            content_type="application/x-pdn; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="checkers-search.pdn"'
    return response


@require_safe
def my_games(request):
    """"My games" for this browser's player id: games in play (those waiting for its move first,
    correspondence ones above all), then its finished games."""
    pid = viewer_id(request)
    ongoing, finished = reads.my_games(pid) if pid else ([], [])
    return render(request, "profiles/my_games.html", {
        "ongoing": ongoing, "finished": finished, "categories": dict(category_choices())})


@require_safe
def leaderboard(request):
    """The leaderboard of one category (``?category=``, blitz by default): its best 50 players
    with a non-provisional rating.  An unknown category is a 400 page."""
    category = request.GET.get("category") or "blitz"
    names = dict(category_choices())
    if category not in names:
        return render(request, "profiles/leaderboard.html", {
            "categories": names, "category": None, "leaders": []}, status=400)
    return render(request, "profiles/leaderboard.html", {
        "categories": names, "category": category, "leaders": reads.leaderboard(category)})


class _Once:
    """A callable that computes ``compute()`` on its first call and returns that ever after: the
    template language calls a callable variable, so the query runs only on a page that shows the
    badge, and once however often the page names it."""

    def __init__(self, compute):
        self._compute = compute
        self._done = False
        self._value = None

    def __call__(self):
        if not self._done:
            self._value, self._done = self._compute(), True
        return self._value


def badge(request) -> dict:
    """Template context: ``your_turn_count``, the number of games waiting for this browser's move
    (:func:`game.profiles.reads.waiting_count`: one indexed query, run when a page shows it)."""
    return {"your_turn_count": _Once(lambda: reads.waiting_count(viewer_id(request)))}
