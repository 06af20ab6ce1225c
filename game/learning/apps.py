"""The learning app's config: its models and migrations live under ``game/learning``."""

from django.apps import AppConfig


class LearningConfig(AppConfig):
    """Django app config for :mod:`game.learning` (label ``learning``)."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "game.learning"
    label = "learning"
