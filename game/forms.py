"""Forms of the game pages (CSRF-protected, validated by Django)."""

from django import forms

from game.services import NAME_MAX_CHARS


class NameField(forms.CharField):
    """A display name: 1 to 24 characters, surrounding and repeated spaces folded."""

    def __init__(self, **kwargs):
        super().__init__(max_length=NAME_MAX_CHARS, strip=True, **kwargs)

    def clean(self, value):
        value = " ".join((value or "").split())
        value = super().clean(value)
        if not value.isprintable():
            raise forms.ValidationError("Use printable characters only.")
        return value


class NewGameForm(forms.Form):
    """Home page: start a game against a friend."""

    name = NameField(label="Your name")
    color = forms.ChoiceField(
        label="Play as",
        choices=[("random", "Random"), ("B", "Black (moves first)"), ("W", "White")],
        initial="random",
        widget=forms.RadioSelect,
    )


class JoinForm(forms.Form):
    """Game page: take the free seat."""

    name = NameField(label="Your name")
