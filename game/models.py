"""What is stored: games, their seats and their moves.

A game row holds the current position (PDN FEN), the ply count and a version
that increases with every published event.  Each ply is a :class:`Move` row,
unique per ``(game, ply)``, so two racing submissions for the same ply can
never both be stored, whatever the number of server processes.
"""

from __future__ import annotations

import re
import secrets

from django.db import models

from game.round.clock import Clock, TimeControl
from game.rules import Color

GAME_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
GAME_ID_LENGTH = 10
#: A regular expression (no anchors) for what :func:`new_game_id` makes, for URL routes.
GAME_ID_PATTERN = f"[{GAME_ID_ALPHABET}]{{{GAME_ID_LENGTH}}}"
_GAME_ID = re.compile(GAME_ID_PATTERN)


def new_game_id():
    """Return a fresh, unguessable game id: 10 characters of a 32-letter alphabet (50 bits)."""
    return "".join(secrets.choice(GAME_ID_ALPHABET) for _ in range(GAME_ID_LENGTH))


def is_game_id(text) -> bool:
    r"""Whether ``text`` is something :func:`new_game_id` could have made: only such text is looked up,
    so nothing else (a NUL, which PostgreSQL refuses in text) reaches the database.

    >>> is_game_id(new_game_id()), is_game_id("abcdefghi\x00"), is_game_id("ABCDEFGHIJ")
    (True, False, False)
    """
    return isinstance(text, str) and _GAME_ID.fullmatch(text) is not None


class Game(models.Model):
    """One game of American checkers between a Black seat and a White seat.

    Seats hold a player id (the ``player_id`` kept in a browser's session) and a
    display name; an empty player id is a free seat.  ``version`` counts the
    events published for the game; ``position_version`` is the version of the
    event that set the current position (the start, or the last move).
    ``no_progress`` counts the plies since the last capture or man move (or the
    start): positions before that ply can never occur again, so the rules need
    only the moves after it to decide repetitions and the forty-move rule.

    ``time_control`` is a :class:`game.round.clock.TimeControl` as text (``untimed``,
    ``5+3``, ``3d``); ``black_ms``/``white_ms`` the time each side had when the
    current turn started (ms) and ``turn_started_at`` when it started.

    ``draw_offer`` is the seat with a pending draw offer (``''`` for none);
    ``black_draw_ply``/``white_draw_ply`` the ply from which that seat may offer
    again after a declined offer; ``rematch_offer`` the seat proposing a
    rematch; ``next_game`` the rematch once both agreed.
    """

    class Status(models.TextChoices):
        WAITING = "waiting", "Waiting for an opponent"
        ACTIVE = "active", "In play"
        FINISHED = "finished", "Finished"
        ABORTED = "aborted", "Aborted"

    id = models.CharField(primary_key=True, max_length=16, default=new_game_id, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    start_fen = models.CharField(max_length=120)
    fen = models.CharField(max_length=120)
    ply = models.PositiveIntegerField(default=0)
    no_progress = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=0)
    position_version = models.PositiveIntegerField(default=0)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WAITING)
    result = models.CharField(max_length=8, default="*")
    termination = models.CharField(max_length=20, blank=True, default="")

    black_player = models.CharField(max_length=32, blank=True, default="")
    black_name = models.CharField(max_length=40, blank=True, default="")
    white_player = models.CharField(max_length=32, blank=True, default="")
    white_name = models.CharField(max_length=40, blank=True, default="")

    time_control = models.CharField(max_length=12, default="untimed")
    black_ms = models.BigIntegerField(null=True, blank=True)
    white_ms = models.BigIntegerField(null=True, blank=True)
    turn_started_at = models.DateTimeField(null=True, blank=True)

    draw_offer = models.CharField(max_length=1, blank=True, default="")
    black_draw_ply = models.PositiveIntegerField(default=0)
    white_draw_ply = models.PositiveIntegerField(default=0)
    rematch_offer = models.CharField(max_length=1, blank=True, default="")
    next_game = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="previous_game"
    )

    class Meta:
        indexes = [models.Index(fields=["status", "-updated_at"])]

    def __str__(self):
        return f"{self.id}: {self.black_name or '?'} vs {self.white_name or '?'} ({self.status})"

    def seat_of(self, player_id: str | None) -> Color | None:
        """The seat ``player_id`` holds in this game, or None (a spectator, or no player id)."""
        if not player_id:
            return None
        if self.black_player == player_id:
            return Color.BLACK
        if self.white_player == player_id:
            return Color.WHITE
        return None

    def player(self, side: Color) -> str:
        """The player id in ``side``'s seat (``""`` while free)."""
        return self.black_player if side is Color.BLACK else self.white_player

    @property
    def turn(self) -> Color:
        """The side to move."""
        return Color(self.fen[0])

    @staticmethod
    def seat_fields(side: Color) -> tuple[str, str]:
        """The fields of ``side``'s seat: ``(player id field, display name field)``."""
        return ("black_player", "black_name") if side is Color.BLACK else ("white_player", "white_name")

    @staticmethod
    def ms_field(side: Color) -> str:
        """The field of ``side``'s time left (ms): ``"black_ms"`` or ``"white_ms"``."""
        return "black_ms" if side is Color.BLACK else "white_ms"

    @staticmethod
    def draw_ply_field(side: Color) -> str:
        """The field of the ply from which ``side`` may offer a draw again."""
        return "black_draw_ply" if side is Color.BLACK else "white_draw_ply"

    @property
    def draw_offer_by(self) -> Color | None:
        """The seat whose draw offer is pending, or None."""
        return Color(self.draw_offer) if self.draw_offer else None

    @property
    def rematch_offer_by(self) -> Color | None:
        """The seat proposing a rematch, or None."""
        return Color(self.rematch_offer) if self.rematch_offer else None

    @property
    def control(self) -> TimeControl:
        """The game's :class:`game.round.clock.TimeControl`."""
        return TimeControl.parse(self.time_control)

    @property
    def clock(self) -> Clock:
        """The game's :class:`game.round.clock.Clock` as stored."""
        return Clock.of(self)

    @property
    def is_over(self) -> bool:
        """True once the game is finished or aborted."""
        return self.status in (self.Status.FINISHED, self.Status.ABORTED)


class Move(models.Model):
    """One ply of a game, in full notation (``11-15``, ``27x18x11``) with the position after it."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="move_set")
    ply = models.PositiveIntegerField()
    notation = models.CharField(max_length=80)
    fen_after = models.CharField(max_length=120)
    played_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "ply"]
        constraints = [
            models.UniqueConstraint(fields=["game", "ply"], name="unique_ply_per_game"),
        ]

    def __str__(self):
        return f"{self.game_id} ply {self.ply}: {self.notation}"
