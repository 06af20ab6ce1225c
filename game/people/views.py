"""The people's pages: a player's profile (``/@/<username>``: its games' part from
:mod:`game.profiles.views`, with country, online or last seen, followers, and for a signed-in
visitor Block and Report), the Block / Unblock and Report forms it posts to, and the country
setting of the account pages (``/accounts/country/``)."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django_countries.fields import Country

from game.errors import ActionError
from game.models import Account
from game.people import blocks, follows, reports
from game.people.models import Card, Report
from game.profiles.views import profile_context


class ReportForm(forms.Form):
    """A report's fields (:func:`game.people.reports.report` checks them again)."""

    reason = forms.ChoiceField(label=_("Reason"), choices=Report.Reason.choices)
    game = forms.CharField(label=_("Game (address or id, optional)"), required=False, max_length=200)
    text = forms.CharField(label=_("What happened (optional)"), required=False, max_length=reports.MAX_TEXT,
                           widget=forms.Textarea(attrs={"rows": 3}))


class CountryForm(forms.ModelForm):
    """The country a player shows on the profile (empty: none)."""

    class Meta:
        model = Card
        fields = ["country"]
        labels = {"country": _("Country")}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = cast("forms.ChoiceField", self.fields["country"])
        countries: Any = field.choices
        field.choices = [("", _("No country shown")), *[c for c in countries if c[0]]]


def _account_of(request) -> Account | None:
    if not request.user.is_authenticated:
        return None
    return Account.objects.filter(user_id=request.user.pk).select_related("user").first()


@require_safe
def profile(request, username):
    """A player's page (:func:`game.profiles.views.profile_context`) with its country, whether it is
    online (else when it was last seen), how many follow it and it follows, and for another
    signed-in account the challenge form, Follow, Block / Unblock and Report.  404 for a name no
    account has."""
    context = profile_context(username)
    pid = context["account"].player_id
    card = Card.objects.filter(player_id=pid).first()
    followers, following = follows.counts(pid)
    viewer = _account_of(request)
    context.update({
        "country": card.country if card is not None and card.country else None,
        "last_seen": card.last_seen if card is not None else None,
        "online": follows.is_online(pid), "followers": followers, "following": following,
        "blocking": viewer is not None and blocks.blocks(viewer.player_id, pid),
        "report_form": ReportForm(initial={"game": reports.game_named(request.GET.get("game"))}),
        "report_open": "game" in request.GET,
    })
    return render(request, "profiles/profile.html", context)


def _back(username: str) -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("profile", kwargs={"username": username}))


def _refused(request, exc: ActionError, username: str) -> HttpResponseRedirect:
    messages.error(request, exc.message, extra_tags=f"code-{exc.code}")
    return _back(username)


@login_required
@require_POST
def block(request, username):
    """Block (``action=block``) or unblock (``action=unblock``) the player, then back to the
    profile with a message saying what was done or why not (:mod:`game.people.blocks`)."""
    me = _account_of(request)
    if me is None:
        return _back(username)
    try:
        if request.POST.get("action") == "unblock":
            target = blocks.unblock(me, username)
            messages.success(request, _("You no longer block %(name)s.") % {"name": target.user.username})
        else:
            target = blocks.block(me, username)
            messages.success(request, _("You block %(name)s: they cannot challenge you, you do not see their "
                                        "chat, and you are never paired together.") % {"name": target.user.username})
    except ActionError as exc:
        return _refused(request, exc, username)
    return _back(target.user.username)


@login_required
@require_POST
def report(request, username):
    """Report the player to the moderators (:func:`game.people.reports.report`), then back to the
    profile with a message: thanks, or why not."""
    me = _account_of(request)
    form = ReportForm(request.POST)
    if me is None:
        return _back(username)
    if not form.is_valid():
        return _refused(request, ActionError("bad_report", _("Choose a reason; the text holds at most "
                                                             "500 characters.")), username)
    try:
        target = reports.report(me, username, form.cleaned_data["reason"], form.cleaned_data["game"],
                                form.cleaned_data["text"])
    except ActionError as exc:
        return _refused(request, exc, username)
    messages.success(request, _("Thank you: the moderators will look at your report."))
    return _back(target.reported_name)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def country(request):
    """The account's country setting: a select of the ISO 3166 countries (names in the page's
    language), empty for none; the profile shows its flag and name."""
    me = _account_of(request)
    if me is None:
        return HttpResponseRedirect(reverse("account_login"))
    card = Card.objects.filter(player_id=me.player_id).first() or Card(player_id=me.player_id)
    form = CountryForm(request.POST if request.method == "POST" else None, instance=card)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Your country is saved."))
        return HttpResponseRedirect(reverse("account_country"))
    return render(request, "people/country.html", {"form": form, "blocked": blocks.blocked_names(me.player_id),
                                                   "current": Country(card.country) if card.country else None},
                  status=400 if form.errors else 200)
