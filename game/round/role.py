"""Whom a game socket speaks for: a seat, or a spectator."""

from __future__ import annotations

from dataclasses import dataclass

from game.rules import Color


@dataclass(frozen=True)
class Role:
    """A game socket's role: ``letter`` is ``"B"`` or ``"W"`` for a seat's socket (every tab of
    that player), ``"S"`` for a spectator's, as in the events' audiences
    (:class:`game.round.events.Audience`).

    >>> Role("W").seated, Role().seated, Role.of(None).letter, Role("B").color
    (True, False, 'S', <Color.BLACK: 'B'>)
    >>> Role("W").text_of([("BWS", "all"), ("W", "white's")]), Role("S").text_of([("W", "white's")])
    ('all', None)
    """

    letter: str = "S"

    @classmethod
    def of(cls, seat: str | None) -> Role:
        """The role of a viewer holding ``seat`` (``"B"``, ``"W"``; None: a spectator)."""
        return cls(seat or "S")

    @property
    def seated(self) -> bool:
        """Whether the socket is a seat's (a player's)."""
        return self.letter != "S"

    @property
    def color(self) -> Color | None:
        """The seat's side, None for a spectator."""
        return Color(self.letter) if self.seated else None

    def text_of(self, copies: list[tuple[str, str]]) -> str | None:
        """This role's copy of a published event: ``copies`` are ``(roles, text)``
        (:func:`game.round.events.read_publication`); None when it has none."""
        return next((text for roles, text in copies if self.letter in roles), None)
