"""Tournaments (docs/tournaments.md): arenas on a schedule and made by players, their standings,
pairings and live page.  A Django app of its own (label ``tournaments``) for its models.

Games are created through :func:`game.round.actions.start_game` and their ends reach the arena
through :data:`game.round.signals.game_ended` (connected in :mod:`game.tournaments.apps`); the
pairing and the scoring run on the RQ ``tournaments`` queue (:mod:`game.tournaments.jobs`).
"""
