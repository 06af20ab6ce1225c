"""The app of people playing people: challenges by name, follows, notifications, TV
(docs/people.md), with models of its own."""

from django.apps import AppConfig


class PeopleConfig(AppConfig):
    name = "game.people"
    label = "people"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "People"

    def ready(self) -> None:
        # Imported once the apps are loaded (tv, gamenews and leaving read the models).
        from game.accounts import deletion
        from game.people import gamenews, leaving, tv
        from game.round import signals
        from game.tournaments import signals as tournament_signals
        # TV forgets the channels' choice when a game shown there ends (docs/people.md, "TV").
        signals.game_ended.connect(tv.on_game_ended, dispatch_uid="tv-game-ended")
        # The "My games" badge and the game notifications follow the games' events (docs/people.md).
        signals.events_published.connect(gamenews.on_events_published, dispatch_uid="people-game-news")
        # The players of a tournament are told when it starts (the bell).
        tournament_signals.started.connect(gamenews.on_tournament_started, dispatch_uid="people-tournament-started")
        # ... and a few minutes before it starts, once.
        tournament_signals.starting_soon.connect(gamenews.on_tournament_soon, dispatch_uid="people-tournament-soon")
        # A deleted account's blocks, follows, notifications and card go; its reports stay, re-pointed.
        deletion.account_deleting.connect(leaving.forget, dispatch_uid="people-account-deleting")
