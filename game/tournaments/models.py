"""What the tournaments store: an arena, its players (entries) and its games (pairings).

Storage only: what to write is decided in :mod:`game.tournaments.arena` (joining, scoring,
berserk) and :mod:`game.tournaments.pairing` (who meets whom).
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from django.db import models
from django.utils.translation import gettext

from game.models import Game

#: The alphabet and length of a tournament's id (as a game's: no look-alike characters).
ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
ID_LENGTH = 8


def new_tournament_id() -> str:
    """A fresh random tournament id (:data:`ID_LENGTH` characters of :data:`ID_ALPHABET`)."""
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


def new_invite_token() -> str:
    """A fresh invite token of a player-made tournament: 22 URL-safe characters, 128 random bits
    (unguessable: an invite link admits its holder without the password)."""
    return secrets.token_urlsafe(16)


class Tournament(models.Model):
    """An arena: ``time_control`` (live, ``M+S``), from ``starts_at`` for ``minutes``.

    ``status``: ``created`` (before the start: players may join), ``started``, ``finished`` (the
    standings frozen) or ``cancelled`` (by its creator, before the start).  ``created_by``: the
    creator's player id, or empty for a scheduled event, whose ``schedule_key`` (unique) names its
    slot so that two processes never create the same one.  ``password``: a hash (Django's
    password hashers), or empty for an open event.  ``invite``: a player-made event's invite token
    (:func:`new_invite_token`; its link admits without the password; the creator may replace it),
    empty for a scheduled event.  ``ballot``: its games open with a 3-move
    ballot (an arena's each drawn at random, a round event's one per round); ``ballot_pairs``
    (a round event's only): each pairing of a round plays its ballot twice, colours reversed.
    """

    class Status(models.TextChoices):
        CREATED = "created", "Created"
        STARTED = "started", "Started"
        FINISHED = "finished", "Finished"
        CANCELLED = "cancelled", "Cancelled"

    class System(models.TextChoices):
        ARENA = "arena", "Arena"
        SWISS = "swiss", "Swiss"
        ROUND_ROBIN = "round_robin", "Round robin"

    id = models.CharField(primary_key=True, max_length=ID_LENGTH, default=new_tournament_id, editable=False)
    name = models.CharField(max_length=60)
    time_control = models.CharField(max_length=12)
    minutes = models.PositiveIntegerField()
    starts_at = models.DateTimeField()
    rated = models.BooleanField(default=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.CREATED)
    created_by = models.CharField(max_length=32, blank=True, default="")
    schedule_key = models.CharField(max_length=40, null=True, blank=True, unique=True)
    password = models.CharField(max_length=128, blank=True, default="")
    invite = models.CharField(max_length=32, blank=True, default="")
    system = models.CharField(max_length=12, choices=System.choices, default=System.ARENA)
    rounds = models.PositiveSmallIntegerField(default=0)
    round = models.PositiveSmallIntegerField(default=0)
    ballot = models.BooleanField(default=False)
    ballot_pairs = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["status", "starts_at"])]

    def __str__(self):
        return f"{self.name} ({self.id})"

    @property
    def title(self) -> str:
        """The name a page shows: a scheduled event's in the viewer's language (its names are the
        site's, :data:`game.tournaments.schedule.HOURLY`), a player-made one's as typed."""
        return gettext(self.name) if self.schedule_key else self.name

    @property
    def ends_at(self) -> datetime:
        """When the games stop counting and the standings freeze: ``minutes`` after the start."""
        return self.starts_at + timedelta(minutes=self.minutes)


class Entry(models.Model):
    """One player of a tournament and their standing.

    ``score`` (points), ``streak`` (wins in a row, for the doubled points), ``games``/``wins``/
    ``draws``, ``opponents_rating`` (the sum of the opponents' ratings, for the performance rating),
    ``rating`` (the player's rating at joining), ``last_opponent`` (the player id last met, not met
    again at once when avoidable); ``withdrawn``: not paired any more (they may come back);
    ``free_since``: when they last became free to pair (None while in a game); ``away``: an arena
    player who had no page of the arena open when their game ended, not paired until one opens
    again.  In a Swiss event or a round robin: ``number``, the starting number (1 for the highest
    rated, given at the start, or at a late entry), ``bye_round``, the round of their bye (one at
    most), and ``first_round``, the first round they could be paired in (a late entrant's: the
    rounds before it are half-point byes); ``score`` is then in half points.
    """

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entries")
    player_id = models.CharField(max_length=32)
    name = models.CharField(max_length=40)
    rating = models.PositiveSmallIntegerField(default=1500)
    score = models.IntegerField(default=0)
    streak = models.PositiveSmallIntegerField(default=0)
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    opponents_rating = models.PositiveIntegerField(default=0)
    last_opponent = models.CharField(max_length=32, blank=True, default="")
    withdrawn = models.BooleanField(default=False)
    free_since = models.DateTimeField(null=True, blank=True)
    away = models.BooleanField(default=False)
    number = models.PositiveSmallIntegerField(null=True, blank=True)
    bye_round = models.PositiveSmallIntegerField(null=True, blank=True)
    first_round = models.PositiveSmallIntegerField(default=1)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tournament", "player_id"], name="one_entry_per_player")]

    def __str__(self):
        return f"{self.name} in {self.tournament_id}"


class Pairing(models.Model):
    """One game of a tournament: its seats' player ids, whether each went berserk, and once its end
    is scored (``scored``) the points each earned; ``round``: its round in a Swiss event or a round robin
    (None in an arena); ``leg``: 1, or 2 for the return game of a ballot pair (the same ballot,
    the colours reversed: its ``black`` is the first game's ``white``)."""

    game = models.OneToOneField(Game, on_delete=models.CASCADE, primary_key=True, related_name="pairing")
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="pairings")
    black = models.CharField(max_length=32)
    white = models.CharField(max_length=32)
    black_berserk = models.BooleanField(default=False)
    white_berserk = models.BooleanField(default=False)
    scored = models.BooleanField(default=False)
    black_points = models.SmallIntegerField(null=True, blank=True)
    white_points = models.SmallIntegerField(null=True, blank=True)
    round = models.PositiveSmallIntegerField(null=True, blank=True)
    leg = models.PositiveSmallIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["tournament", "scored"])]

    def __str__(self):
        return f"{self.black} - {self.white} ({self.game_id})"


class ChatLine(models.Model):
    """One line of a tournament's chat: written by an entrant (``player_id``, kept for moderation and
    shown to nobody) under their entry's ``name``; read by every viewer of the page."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="chat_lines")
    player_id = models.CharField(max_length=32)
    name = models.CharField(max_length=40)
    text = models.CharField(max_length=140)
    written_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["tournament", "-id"])]

    def __str__(self):
        return f"{self.name} in {self.tournament_id}: {self.text[:20]}"
