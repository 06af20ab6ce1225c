"""Admin pages for looking at stored games: read-only.

A game's stored state and its version belong to the actions of ``game/round``: a change made
here would bypass the version check and reach no open board. So the admin may look at games and
their moves, never add, change or delete them (ending a game is an action: resign, abort, or
``manage.py housekeeping`` for games nobody joined).
"""

from django.contrib import admin
from django.http import HttpRequest

from game.accounts import admin as accounts_admin
from game.models import Block, Game, Move
from game.people.models import Report


class ReadOnly:
    """No add, change or delete in the admin, for every user (superusers included)."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class MoveInline(ReadOnly, admin.TabularInline):
    model = Move
    extra = 0
    fields = readonly_fields = ("ply", "notation", "fen_after", "played_at")


@admin.register(Game)
class GameAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("id", "black_name", "white_name", "status", "result", "ply", "updated_at")
    list_filter = ("status",)
    search_fields = ("id", "black_name", "white_name")
    inlines = [MoveInline]
    actions = None


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    """Reports of players (docs/people.md, "Reports"): moderators read and close them; what the
    reporter wrote stays as written."""

    list_display = ("created_at", "reported_name", "reason", "reporter_name", "game", "status")
    list_filter = ("status", "reason", "created_at")
    search_fields = ("reported_name", "reporter_name", "game", "text")
    readonly_fields = ("reporter", "reporter_name", "reported", "reported_name", "reason", "game", "text",
                       "created_at")
    date_hierarchy = "created_at"
    actions = ["close"]

    @admin.action(description="Close the selected reports")
    def close(self, request: HttpRequest, queryset) -> None:
        queryset.update(status=Report.Status.CLOSED)

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Block)
class BlockAdmin(ReadOnly, admin.ModelAdmin):
    list_display = ("blocker", "blocked", "created_at")
    search_fields = ("blocker", "blocked")


# Users are deleted as their accounts are (game/accounts/admin.py); accounts are shown read-only.
accounts_admin.register(admin.site)
