"""The form of a player-made tournament: an arena, a Swiss event or a round robin."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from game.clock import STANDARD

from .arena import MAX_ROUNDS, MIN_ROUNDS
from .models import Tournament

#: Durations offered (minutes).
DURATIONS = (20, 30, 45, 60, 90, 120)
#: Starts offered (minutes from now).
STARTS_IN = (2, 5, 10, 15, 30, 60, 120, 240, 1440)


class ArenaForm(forms.Form):
    """Name, format (arena, Swiss, round robin), time control, an arena's duration, a Swiss
    event's rounds, start, rated or casual, the 3-move ballot and ballot pairs, an optional password."""

    name = forms.CharField(label=_("Name"), max_length=40)
    system = forms.ChoiceField(label=_("Format"), initial=Tournament.System.ARENA, choices=[
        (Tournament.System.ARENA, _("Arena")), (Tournament.System.SWISS, _("Swiss")),
        (Tournament.System.ROUND_ROBIN, _("Round robin (up to 10 players)"))])
    time_control = forms.ChoiceField(label=_("Time control"), choices=[(c, c) for c in ("1+0", "3+0", *STANDARD[1:])])
    minutes = forms.TypedChoiceField(label=_("Duration (minutes)"), coerce=int, initial=45,
                                     choices=[(m, str(m)) for m in DURATIONS])
    rounds = forms.TypedChoiceField(label=_("Rounds (Swiss)"), coerce=int, initial=5,
                                    choices=[(r, str(r)) for r in range(MIN_ROUNDS, MAX_ROUNDS + 1)])
    starts_in = forms.TypedChoiceField(label=_("Starts in (minutes)"), coerce=int, initial=10,
                                       choices=[(m, str(m)) for m in STARTS_IN])
    rated = forms.BooleanField(label=_("Rated"), required=False, initial=True)
    ballot = forms.BooleanField(label=_("3-move ballot"), required=False, initial=False)
    ballot_pairs = forms.BooleanField(
        label=_("Ballot pairs (Swiss, round robin)"), required=False, initial=False,
        help_text=_("Each round's ballot played twice by each pairing, colours reversed; the score is both games'."))
    password = forms.CharField(label=_("Password (optional)"), required=False, max_length=60,
                               widget=forms.PasswordInput(render_value=False))
