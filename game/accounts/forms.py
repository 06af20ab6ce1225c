"""The account pages' own forms (allauth's serve the rest)."""

from __future__ import annotations

from typing import Any

from allauth.account.adapter import get_adapter
from allauth.account.forms import SignupForm as AllauthSignupForm
from django import forms
from django.utils.translation import gettext_lazy as _

from game.accounts import usernames


class DeleteAccountForm(forms.Form):
    """Delete my account: the account's password, checked against ``user``."""

    password = forms.CharField(label=_("Your password"), strip=False,
                               widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))

    def __init__(self, user: Any, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_password(self) -> str:
        """The password, when it is the account's, checked as a log-in is (allauth's
        ``reauthenticate``): counted against the same wrong-password limits, so this page is no
        way round them.  Raises ValidationError for a wrong password (``wrong_password``) or one
        too many (allauth's ``too_many_login_attempts``)."""
        password = self.cleaned_data["password"]
        if not get_adapter().reauthenticate(self.user, password):
            raise forms.ValidationError(_("That is not your password."), code="wrong_password")
        return password


class SignupForm(AllauthSignupForm):
    """allauth's sign-up form with the username box held to the site's username rules in the page too
    (``maxlength``/``minlength`` of :mod:`game.accounts.usernames`: Django's user model allows 150
    characters, which the browser would let a player type before the server refuses it)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        field = self.fields.get("username")
        if field is not None:
            field.max_length = usernames.MAX_CHARS
            field.widget.attrs.update(maxlength=str(usernames.MAX_CHARS), minlength=str(usernames.MIN_CHARS))
