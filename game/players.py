"""Player ids: what the id in a seat says of who holds it.

- A browser's guest, and an account (which keeps the guest id it signed up with, or gets a new
  one): 32 hex digits (:func:`new_player_id`).
- The computer: ``bot:<level>``, levels 1 to 9 (:func:`computer_id`), so no browser's id can be
  the computer's.
- A deleted account's seat in its finished games: ``deleted:<16 hex digits>`` (:func:`deleted_id`),
  a fresh one per deletion, which nobody can sign in as.

>>> computer_id(3), computer_level("bot:3"), computer_level("0123abcd"), computer_level("bot:10")
('bot:3', 3, None, None)
>>> is_deleted(deleted_id()), is_deleted(new_player_id()), len(new_player_id())
(True, False, 32)
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

#: The prefix of the computer's player ids.
COMPUTER_PREFIX = "bot:"
#: How many levels the computer has (``docs/engine.md``).
COMPUTER_LEVELS = 9
#: The prefix of a deleted account's player ids.
DELETED_PREFIX = "deleted:"


def new_player_id() -> str:
    """A new guest's player id: 32 hex digits, unguessable."""
    return uuid.uuid4().hex


def computer_id(level: int) -> str:
    """The reserved player id of the computer at ``level`` (1 to :data:`COMPUTER_LEVELS`).
    Raises ValueError for another level."""
    if not isinstance(level, int) or not 1 <= level <= COMPUTER_LEVELS:
        raise ValueError(f"the computer's levels are 1 to {COMPUTER_LEVELS}, not {level!r}")
    return f"{COMPUTER_PREFIX}{level}"


def is_computer(player: str | None) -> bool:
    """Whether ``player`` (a player id) is one of the computer's, at whatever level."""
    return player is not None and player.startswith(COMPUTER_PREFIX)


def computer_level(player: str | None) -> int | None:
    """The level of the computer holding ``player`` (a player id), or None for a person or an empty seat."""
    if not player or not player.startswith(COMPUTER_PREFIX):
        return None
    text = player[len(COMPUTER_PREFIX):]
    if not text.isdigit() or not 1 <= int(text) <= COMPUTER_LEVELS:
        return None
    return int(text)


def deleted_id() -> str:
    """A new player id for the seats of a deleted account (never signed in as)."""
    return DELETED_PREFIX + secrets.token_hex(8)


def is_deleted(player: str | None) -> bool:
    """Whether ``player`` (a player id) is a deleted account's."""
    return player is not None and player.startswith(DELETED_PREFIX)


def seat_info(player: str | None) -> dict[str, Any]:
    """The public fields a game's state adds to a seat for who holds it: ``{"computer": level}``
    for the computer's seat, ``{"deleted": True}`` for a deleted account's, else ``{}``."""
    level = computer_level(player)
    if level:
        return {"computer": level}
    return {"deleted": True} if is_deleted(player) else {}


def has_computer(state: dict[str, Any]) -> bool:
    """Whether a game's public ``state`` (:mod:`game.round.events`) shows the computer in a seat."""
    seats = state.get("seats") or {}
    return any(isinstance(seat, dict) and seat.get("computer") for seat in seats.values())
