"""The tournaments app's config: its models and migrations live under ``game/tournaments``."""

from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    """Django app config for :mod:`game.tournaments` (label ``tournaments``)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "game.tournaments"
    label = "tournaments"

    def ready(self) -> None:
        from game.round import signals
        from game.tournaments import jobs
        # An arena game's end is scored and its players paired again (docs/tournaments.md).
        signals.game_ended.connect(jobs.on_game_ended, dispatch_uid="tournaments-game-ended")
