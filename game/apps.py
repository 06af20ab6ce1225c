"""The game app: live American checkers between two seats and any number of spectators."""

from django.apps import AppConfig


class GameConfig(AppConfig):
    """Django app config for :mod:`game`."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "game"

    def ready(self) -> None:
        from django.core.signals import got_request_exception

        from checkers_site import dbpool
        # A page request that failed on a dropped database connection sweeps the pool.
        got_request_exception.connect(dbpool.on_request_exception, dispatch_uid="dbpool-sweep")

        from game.accounts import identity
        # A browser that signs up or logs in plays with its account's player id (docs/accounts.md).
        identity.connect_signals()

        from game.correspondence import languages
        # The turn mails are in the language an account last logged in with (docs/correspondence.md).
        languages.connect_signals()

        from game.computer import player
        from game.round import signals
        # The computer plays its turns in the games whose sockets it hears of (game/computer/player.py).
        signals.computer_seat_touched.connect(player.on_computer_seat_touched, dispatch_uid="computer-wake")

        from game.learning import reviews
        # A rated game that finished is reviewed by the computer (docs/learning.md, "Reviews").
        signals.game_ended.connect(reviews.on_game_ended, dispatch_uid="learning-review")

        from game.accounts import deletion
        from game.lobby import groups
        # A deleted account's seeks leave the lobby (docs/accounts.md).
        deletion.account_deleted.connect(groups.on_account_deleted, dispatch_uid="lobby-account-deleted")
