"""The admin's users and accounts: a user deleted in the admin is deleted as "Delete my account"
does (:func:`game.accounts.deletion.delete_account`: its games in play resigned, its finished
games kept under "deleted player"), never by a bare row delete that would leave its games
waiting for a player who no longer exists; so is an account deleted there. Accounts are
otherwise read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth.models import User

from game.accounts.deletion import delete_account
from game.models import Account


class UserAdmin(auth_admin.UserAdmin):
    """Django's user admin, deleting through :func:`delete_account`."""

    def delete_model(self, request: Any, obj: Any) -> None:
        delete_account(obj)

    def delete_queryset(self, request: Any, queryset: Any) -> None:
        for user in queryset:
            delete_account(user)


class AccountAdmin(admin.ModelAdmin):
    """An account's player id and mail choice, to look at (they belong to the account's pages);
    deleting one deletes its user as "Delete my account" does."""

    list_display = ("user", "player_id", "turn_emails", "created_at")
    search_fields = ("user__username", "player_id")
    readonly_fields = ("user", "player_id", "turn_emails", "created_at")

    def has_add_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: Any, obj: Any = None) -> bool:
        return False

    def delete_model(self, request: Any, obj: Any) -> None:
        delete_account(obj.user)

    def delete_queryset(self, request: Any, queryset: Any) -> None:
        for account in queryset.select_related("user"):
            delete_account(account.user)


def register(site: admin.AdminSite) -> None:
    """Put the users (deleted as accounts are) and the accounts on the admin ``site``."""
    if site.is_registered(User):
        site.unregister(User)
    site.register(User, UserAdmin)
    site.register(Account, AccountAdmin)
