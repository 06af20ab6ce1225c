"""Who the computer is: the reserved player ids of its levels, its names and its seats.

The computer takes a seat like a person, under the player id ``bot:<level>``
(``bot:1`` to ``bot:9``) and the display name ``Computer (level <n>)``.
A browser session's player id is 32 hex digits, so it can never be a
computer's. No Django imports here beyond the engine's levels: the module is
safe to import from :mod:`game.round.events`.

>>> player_id(3), level_of("bot:3"), level_of("0123abcd"), level_of("bot:10")
('bot:3', 3, None, None)
"""

from __future__ import annotations

import random

from game.engine.levels import LEVELS, Level, level

__all__ = ["PREFIX", "has_computer", "is_computer", "level_of", "player_id", "seat_info", "seats"]

#: The prefix of the computer's player ids.
PREFIX = "bot:"


def player_id(number: int) -> str:
    """The reserved player id of the computer at level ``number``. Raises ValueError for an unknown level."""
    return f"{PREFIX}{level(number).number}"


def is_computer(player: str | None) -> bool:
    """True when ``player`` (a player id) is one of the computer's, at whatever level."""
    return player is not None and player.startswith(PREFIX)


def level_of(player: str | None) -> int | None:
    """The level of the computer holding ``player`` (a player id), or None for a person or an empty seat."""
    if not player or not player.startswith(PREFIX):
        return None
    text = player[len(PREFIX):]
    if not text.isdigit() or not 1 <= int(text) <= len(LEVELS):
        return None
    return int(text)


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


def seat_info(player: str | None) -> dict:
    """Extra public fields of a seat: ``{"computer": level}`` for the computer's seat, else ``{}``."""
    number = level_of(player)
    return {"computer": number} if number else {}


def has_computer(state: dict) -> bool:
    """True when a game's public ``state`` (see :mod:`game.round.events`) shows the computer in a seat."""
    seats_ = state.get("seats") or {}
    return any(isinstance(seat, dict) and seat.get("computer") for seat in seats_.values())
