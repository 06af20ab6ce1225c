"""The game app: live American checkers between two seats and any number of spectators."""

from django.apps import AppConfig


class GameConfig(AppConfig):
    """Django app config for :mod:`game`."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "game"
