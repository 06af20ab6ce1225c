"""Accounts for the ratings tests: real users and Account rows, as sign-up makes them."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User

from game.models import Account


def account(username: str) -> str:
    """Create a user ``username`` with its :class:`Account`; return the account's player id."""
    user = User.objects.create_user(username=username, password=f"{username}-Pass-2026!")
    return Account.objects.create(user=user, player_id=uuid.uuid4().hex).player_id


def guest() -> str:
    """A guest's player id (no account)."""
    return uuid.uuid4().hex
