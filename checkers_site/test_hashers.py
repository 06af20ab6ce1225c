"""The test suite's password hasher (``checkers_site/settings_test.py``): Django's PBKDF2, as in
production, at a thousand iterations instead of a million.  A password is hashed wherever a test
makes an account, signs one up or logs one in (and allauth's rate limits count failed logs in by
the dozen); at a million iterations each took most of a second of the machine's two cores."""

from __future__ import annotations

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class FewIterationsPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    iterations = 1000
