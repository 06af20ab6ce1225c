"""Texts of Django's and allauth's that the sign-in and sign-up pages show, listed so that the
site's catalogs (``locale/``, which Django reads before the libraries' own) carry them in the site's
words: in Spanish with "tú", as every other page speaks, where the libraries say "usted".

Nothing imports this module; ``makemessages`` reads it as it reads the rest of the code.
"""

from __future__ import annotations

from django.utils.translation import gettext_noop, ngettext_lazy

#: The sign-in form's link to the password reset (allauth's ``LoginForm``).
FORGOT_PASSWORD = gettext_noop("Forgot your password?")

#: The password validators' help under the sign-up form's password (django.contrib.auth).
#: Django's own words, its curly apostrophe included (the catalogs are looked up by exact text).
PASSWORD_HELP = (
    gettext_noop("Your password can’t be too similar to your other personal information."),  # noqa: RUF001
    gettext_noop("Your password can’t be a commonly used password."),  # noqa: RUF001
    gettext_noop("Your password can’t be entirely numeric."),  # noqa: RUF001
)
PASSWORD_LENGTH_HELP = ngettext_lazy("Your password must contain at least %(min_length)d character.",
                                     "Your password must contain at least %(min_length)d characters.",
                                     "min_length")
