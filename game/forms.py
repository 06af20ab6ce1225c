"""Forms of the game pages (CSRF-protected, validated by Django)."""

from django import forms
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _

from game import clock
from game.engine import LEVELS
from game.errors import ActionError
from game.i18n import lazy_text, level_name, time_control_label_lazy
from game.names import (
    ACCOUNT_NAME_MESSAGE,
    LENGTH_MESSAGE,
    MARKS_MESSAGE,
    NAME_MAX_CHARS,
    PRINTABLE_MESSAGE,
    RESERVED_MESSAGE,
    belongs_to_account,
    is_blank,
    is_reserved,
    piles_marks,
)
from game.round import actions

TIME_CONTROL_CHOICES = (
    [("untimed", _("Untimed"))]
    + [(tc, tc) for tc in clock.STANDARD]
    + [("custom", _("Custom"))]
    + [(tc, time_control_label_lazy(tc)) for tc in clock.CORRESPONDENCE]
)


class NameField(forms.CharField):
    """A display name: up to 24 characters, surrounding and repeated spaces folded; empty is
    allowed (every form then plays under the visitor's guest name, :func:`game.names.display_name`);
    a name that only looks empty (:func:`game.names.is_blank`) is refused as too short.
    A name that passes for the site's own players (a guest's, the computer's) or is an account's
    username is refused: signed-in players play under their username, and no one else may."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(max_length=NAME_MAX_CHARS, strip=True, **kwargs)

    def clean(self, value):
        value = " ".join((value or "").split())
        value = super().clean(value)
        if value and is_blank(value):   # only fillers, zero-width or blank characters: no name
            raise forms.ValidationError(str(lazy_text(LENGTH_MESSAGE, max=NAME_MAX_CHARS)), code="bad_name")
        if value and not value.isprintable():
            raise forms.ValidationError(PRINTABLE_MESSAGE, code="bad_name")
        if value and piles_marks(value):
            raise forms.ValidationError(MARKS_MESSAGE, code="bad_name")
        if value and not self.disabled:
            if is_reserved(value):
                raise forms.ValidationError(RESERVED_MESSAGE, code="name_reserved")
            if belongs_to_account(value):
                raise forms.ValidationError(ACCOUNT_NAME_MESSAGE, code="name_taken")
        return value


class OpeningForm(forms.Form):
    """The opening of a new game (docs/rules.md, "3-move ballots"): ``opening`` ``free`` (the
    start position) or ``ballot``, and ``ballot``, a ballot's number, or empty for an approved
    one drawn at random.  The result is ``cleaned_data["ballot_choice"]``: None, ``"random"``
    or the number (an int), as :func:`game.round.actions.create_game` takes it.  An unknown
    number, a barred ballot or anything that is not a number is an error of the ``ballot``
    field, and the form is invalid."""

    opening = forms.ChoiceField(label=_("Opening"), required=False, initial="free",
                                choices=[("free", _("Free start")), ("ballot", _("3-move ballot"))])
    ballot = forms.CharField(label=_("Ballot number"), required=False, strip=True, max_length=8,
                             help_text=_("1 to 174; leave it empty for a random ballot."),
                             widget=forms.TextInput(attrs={"inputmode": "numeric", "size": 4,
                                                           "placeholder": _("random")}))

    def clean(self):
        """Read the opening into ``cleaned_data["ballot_choice"]``."""
        data = super().clean() or {}
        data["ballot_choice"] = None
        if (data.get("opening") or "free") == "ballot":
            text = data.get("ballot") or ""
            try:
                chosen = actions.choose_ballot(text) if text else None
            except ActionError as exc:
                self.add_error("ballot", str(exc.message))
                return data
            data["ballot_choice"] = chosen.number if chosen else "random"
        return data


class NewGameForm(OpeningForm):
    """Home page: start a game against a friend."""

    name = NameField(label=_("Your name"))
    color = forms.ChoiceField(
        label=_("Play as"),
        choices=[("random", _("Random")), ("B", _("Black (moves first)")), ("W", _("White"))],
        initial="random",
        widget=forms.RadioSelect,
    )
    time_control = forms.ChoiceField(label=_("Time control"), choices=TIME_CONTROL_CHOICES,
                                     initial="untimed", required=False)
    minutes = forms.IntegerField(label=_("Minutes"), min_value=1, max_value=clock.MAX_BASE_MINUTES,
                                 required=False, initial=5)
    increment = forms.IntegerField(label=_("Increment (s)"), min_value=0, max_value=clock.MAX_INCREMENT_S,
                                   required=False, initial=3)
    rated = forms.BooleanField(label=_("Rated"), required=False,
                               help_text=_("Both players need an account; untimed games are never rated."))

    def clean(self):
        """Resolve ``custom`` into ``M+S``; the result is ``cleaned_data["time_control"]``
        (and the opening, :class:`OpeningForm`).  A rated game with the untimed control is an
        error of the ``rated`` field (whether the creator may play rated is the action's check)."""
        data = super().clean() or {}
        choice = data.get("time_control") or "untimed"
        if choice == "custom":
            if data.get("minutes") is None or data.get("increment") is None:
                raise forms.ValidationError(_("Give the minutes and the increment of your time control."))
            choice = f"{data['minutes']}+{data['increment']}"
        data["time_control"] = choice
        if data.get("rated") and choice == "untimed":
            self.add_error("rated", _("Untimed games are not rated: choose a time control for a rated game."))
        return data


class JoinForm(forms.Form):
    """Game page: take the free seat."""

    name = NameField(label=_("Your name"))


_lazy_level_name = lazy(level_name, str)


class ComputerGameForm(OpeningForm):
    """Home page: a game against the computer (with the opening of :class:`game.forms.OpeningForm`)."""

    name = NameField(label=_("Your name"), required=False)
    level = forms.TypedChoiceField(choices=[(lv.number, lazy_text("%(number)s · %(name)s", number=lv.number,
                                                                  name=_lazy_level_name(lv.number, lv.name)))
                                            for lv in LEVELS],
                                   coerce=int, initial=3, label=_("Level"))
    color = forms.ChoiceField(choices=[("random", _("Random")), ("B", _("Black")), ("W", _("White"))],
                              initial="random", label=_("Play as"))
