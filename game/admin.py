"""Admin pages for looking at stored games."""

from django.contrib import admin

from game.models import Game, Move


class MoveInline(admin.TabularInline):
    model = Move
    extra = 0
    readonly_fields = ("ply", "notation", "fen_after", "played_at")


@admin.register(Game)
class GameAdmin(admin.ModelAdmin):
    list_display = ("id", "black_name", "white_name", "status", "result", "ply", "updated_at")
    list_filter = ("status",)
    search_fields = ("id", "black_name", "white_name")
    inlines = [MoveInline]
