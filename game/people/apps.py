"""The app of people playing people: challenges by name (docs/people.md), with models of its own."""

from django.apps import AppConfig


class PeopleConfig(AppConfig):
    name = "game.people"
    label = "people"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "People"
