"""Learning: a computer review of every game, puzzles from real games, lessons (docs/learning.md).

A Django app of its own (label ``learning``) in the rooms layer: it reads games through the models
and the engine through its public API, and the live game tells it of a game's end by
:data:`game.round.signals.game_ended`, connected in :mod:`game.apps`.
"""
