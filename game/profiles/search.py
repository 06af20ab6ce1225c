"""Game search (``/games/search``): the finished games of every player, filtered, newest first.

Filters (every one may be left empty): ``player`` and ``opponent`` (account user names, any case:
the games of the player, or between the two), ``result`` (the player's won / lost / drawn, or
Black or White won), a date range (the day the game started, from and to, inclusive), a time
control (``5+3``, ``1d``, ``untimed``), rated or casual, with a 3-move ballot or from the free
start, and a length in plies (at least, at most).

Query cost: finished games only, newest first, through the indexes that exist: a player's games
by ``(black_player, -created_at)`` and ``(white_player, -created_at)``, everyone's by
``(status, -created_at)``; the other filters are checked on the rows those give.  A search
reaches :data:`MAX_RESULTS` games at most (the paginator counts a ``LIMIT`` subquery, never the
whole table), shown :data:`PAGE_SIZE` a page; the PDN file of a search holds its first
:data:`MAX_PDN_GAMES` games.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from django import forms
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game.clock import TimeControl, TimeControlError
from game.models import Account, Game
from game.profiles import pdn_file
from game.profiles.reads import DRAWN, LOST, WON, account_named, result_q, seats_q

#: Games on each page of the results.
PAGE_SIZE = 20
#: Games a search reaches at most (50 pages).
MAX_RESULTS = 1000
#: Games the PDN file of a search holds at most (the newest first).
MAX_PDN_GAMES = 500
#: Plies a game may be searched by at most.
MAX_PLIES = 10_000
BLACK_WON, WHITE_WON = "black", "white"


class SearchForm(forms.Form):
    """The search's filters, from the query string."""

    player = forms.CharField(label=_("Player"), required=False, max_length=150, strip=True)
    opponent = forms.CharField(label=_("Opponent"), required=False, max_length=150, strip=True)
    result = forms.ChoiceField(label=_("Result"), required=False, choices=[
        ("", _("Any result")), (WON, _("Player won")), (LOST, _("Player lost")), (DRAWN, _("Drawn")),
        (BLACK_WON, _("Black won")), (WHITE_WON, _("White won"))])
    since = forms.DateField(label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"}))
    control = forms.CharField(label=_("Time control"), required=False, max_length=12, strip=True,
                              help_text=_("For example 5+3, 1d or untimed."))
    rated = forms.ChoiceField(label=_("Rated"), required=False, choices=[
        ("", _("Rated or casual")), ("yes", _("Rated")), ("no", _("Casual"))])
    ballot = forms.ChoiceField(label=_("Opening"), required=False, choices=[
        ("", _("Any opening")), ("yes", _("3-move ballot")), ("no", _("Free start"))])
    min_plies = forms.IntegerField(label=_("At least (plies)"), required=False, min_value=0, max_value=MAX_PLIES)
    max_plies = forms.IntegerField(label=_("At most (plies)"), required=False, min_value=0, max_value=MAX_PLIES)

    def _account(self, field: str) -> Account | None:
        name = self.cleaned_data.get(field)
        if not name:
            return None
        account = account_named(name)
        if account is None:
            self.add_error(field, _("There is no player of that name."))
        return account

    def clean_control(self) -> str:
        text = self.cleaned_data.get("control") or ""
        if not text:
            return ""
        try:
            return str(TimeControl.parse(text))
        except TimeControlError:
            raise forms.ValidationError(_("Choose a time control such as 5+3, 1d or untimed.")) from None

    def clean(self) -> dict:
        data = super().clean() or {}
        data["player_account"] = self._account("player")
        data["opponent_account"] = self._account("opponent")
        if data.get("result") in (WON, LOST) and not data.get("player"):
            self.add_error("result", _("Name a player to search for their wins or losses."))
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            self.add_error("until", _("The end of the range comes before its start."))
        low, high = data.get("min_plies"), data.get("max_plies")
        if low is not None and high is not None and low > high:
            self.add_error("max_plies", _("The most plies is fewer than the fewest."))
        return data


def _day_start(day) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def games(data: dict) -> QuerySet[Game]:
    """The finished games matching ``data`` (a valid :class:`SearchForm`'s ``cleaned_data``),
    newest first, at most :data:`MAX_RESULTS`."""
    found = Game.objects.filter(status=Game.Status.FINISHED)
    player, opponent = data.get("player_account"), data.get("opponent_account")
    if player is None and opponent is not None:
        player, opponent = opponent, None
    if player is not None:
        found = found.filter(seats_q(player.player_id))
        if opponent is not None:
            found = found.filter(seats_q(opponent.player_id))
    result = data.get("result")
    if result in (WON, LOST, DRAWN):
        found = found.filter(result_q(player.player_id if player else "", result))
    elif result == BLACK_WON:
        found = found.filter(result="1-0")
    elif result == WHITE_WON:
        found = found.filter(result="0-1")
    if data.get("since"):
        found = found.filter(created_at__gte=_day_start(data["since"]))
    if data.get("until"):
        found = found.filter(created_at__lt=_day_start(data["until"] + timedelta(days=1)))
    if data.get("control"):
        found = found.filter(time_control=data["control"])
    if data.get("rated"):
        found = found.filter(rated=data["rated"] == "yes")
    if data.get("ballot"):
        found = found.filter(ballot__isnull=data["ballot"] == "no")
    if data.get("min_plies") is not None:
        found = found.filter(ply__gte=data["min_plies"])
    if data.get("max_plies") is not None:
        found = found.filter(ply__lte=data["max_plies"])
    return found.order_by("-created_at", "-id")[:MAX_RESULTS]


def names(page_games: list[Game]) -> dict[str, str]:
    """``{player id: account user name}`` of the seats of ``page_games`` that have an account (one query)."""
    ids = {pid for g in page_games for pid in (g.black_player, g.white_player) if pid}
    return dict(Account.objects.filter(player_id__in=ids).values_list("player_id", "user__username")) if ids else {}


def pdn_text(data: dict, site: str) -> str:
    """The PDN file of the first :data:`MAX_PDN_GAMES` games of a search (``data`` as for
    :func:`games`), newest first, as :mod:`game.profiles.pdn_file` writes each game (a query for
    the games, one per :data:`game.profiles.pdn_file.BATCH_GAMES` for their moves)."""
    rows = list(games(data).values_list(*pdn_file.FIELDS)[:MAX_PDN_GAMES])
    parts: list[str] = []
    for start in range(0, len(rows), pdn_file.BATCH_GAMES):
        chunk = rows[start:start + pdn_file.BATCH_GAMES]
        moves = pdn_file.moves_of([row[0] for row in chunk])
        parts.extend(pdn_file.game_text(row, moves[row[0]], site) + "\n" for row in chunk)
    return "".join(parts)
