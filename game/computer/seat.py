"""Who the computer is: its levels' player ids and names, and its seats in a new game.

The computer takes a seat like a person, under the player id ``bot:<level>``
(:func:`game.players.computer_id`) and the display name ``Computer (level <n>)``.

>>> player_id(3)
'bot:3'
"""

from __future__ import annotations

import random

from game.engine.levels import Level, level
from game.players import computer_id

__all__ = ["player_id", "seats"]


def player_id(number: int) -> str:
    """The reserved player id of the computer at level ``number``. Raises ValueError for an unknown level."""
    return computer_id(level(number).number)


def seats(person: str, name: str, color: str, number: int, rng: random.Random | None = None
          ) -> tuple[tuple[str, str], tuple[str, str]]:
    """The ``(black, white)`` seats of a game between ``person`` (player id, display ``name``) and the computer.

    ``color`` is the person's colour: ``'B'``, ``'W'`` or ``'random'``;
    ``number`` the computer's level. Each seat is ``(player id, display name)``,
    as :func:`game.round.actions.start_game` takes them. Raises ValueError for an
    unknown colour or level.
    """
    chosen: Level = level(number)
    if color == "random":
        color = (rng or random).choice("BW")
    if color not in ("B", "W"):
        raise ValueError(f"colour must be 'B', 'W' or 'random', not {color!r}")
    me = (person, name)
    bot = (player_id(chosen.number), chosen.player_name)
    return (me, bot) if color == "B" else (bot, me)
