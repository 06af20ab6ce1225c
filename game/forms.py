"""Forms of the game pages (CSRF-protected, validated by Django)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from game.i18n import time_control_label_lazy
from game.names import NAME_MAX_CHARS
from game.round import clock

TIME_CONTROL_CHOICES = (
    [("untimed", _("Untimed"))]
    + [(tc, tc) for tc in clock.STANDARD]
    + [("custom", _("Custom"))]
    + [(tc, time_control_label_lazy(tc)) for tc in clock.CORRESPONDENCE]
)


class NameField(forms.CharField):
    """A display name: 1 to 24 characters, surrounding and repeated spaces folded."""

    def __init__(self, **kwargs):
        super().__init__(max_length=NAME_MAX_CHARS, strip=True, **kwargs)

    def clean(self, value):
        value = " ".join((value or "").split())
        value = super().clean(value)
        if not value.isprintable():
            raise forms.ValidationError(_("Use printable characters only."))
        return value


class NewGameForm(forms.Form):
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

    def clean(self):
        """Resolve ``custom`` into ``M+S``; the result is ``cleaned_data["time_control"]``."""
        data = super().clean() or {}
        choice = data.get("time_control") or "untimed"
        if choice == "custom":
            if data.get("minutes") is None or data.get("increment") is None:
                raise forms.ValidationError(_("Give the minutes and the increment of your time control."))
            choice = f"{data['minutes']}+{data['increment']}"
        data["time_control"] = choice
        return data


class JoinForm(forms.Form):
    """Game page: take the free seat."""

    name = NameField(label=_("Your name"))
