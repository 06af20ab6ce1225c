"""Challenges by name (one player invites another, by username, to a game of given settings), follows,
reports of players to the moderators, and what a profile shows of its player (country, last seen).
Blocks are :class:`game.models.Block` (the chat and the lobby, below this app, read them)."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils.translation import gettext_lazy as _
from django_countries.fields import CountryField


def new_challenge_id() -> str:
    """A challenge id: 32 hex digits."""
    return uuid.uuid4().hex


class Challenge(models.Model):
    """A challenge from ``challenger`` to ``challenged`` (player ids of accounts), open until accepted,
    declined (with a reason), cancelled or past ``expires_at``.  An accepted one names its game."""

    class Status(models.TextChoices):
        OPEN = "open"
        ACCEPTED = "accepted"
        DECLINED = "declined"
        CANCELLED = "cancelled"

    id = models.CharField(primary_key=True, max_length=32, default=new_challenge_id, editable=False)
    challenger = models.CharField(max_length=32, db_index=True)
    challenger_name = models.CharField(max_length=40)
    challenged = models.CharField(max_length=32, db_index=True)
    challenged_name = models.CharField(max_length=40)
    time_control = models.CharField(max_length=12, default="untimed")
    color = models.CharField(max_length=6, default="random")
    rated = models.BooleanField(default=False)
    ballot = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    reason = models.CharField(max_length=16, blank=True, default="")
    game = models.CharField(max_length=16, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["challenged", "status"]), models.Index(fields=["challenger", "status"])]

    def __str__(self) -> str:
        return f"{self.challenger_name} -> {self.challenged_name} ({self.time_control}, {self.status})"


class Follow(models.Model):
    """``follower`` follows ``followed`` (player ids of accounts): sees whether they are online and
    playing, and watches their games in one click."""

    follower = models.CharField(max_length=32, db_index=True)
    followed = models.CharField(max_length=32)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["follower", "followed"], name="follow_once")]
        indexes = [models.Index(fields=["followed"], name="follow_followed")]

    def __str__(self) -> str:
        return f"{self.follower} follows {self.followed}"


class Report(models.Model):
    """``reporter`` reports ``reported`` (player ids of accounts; their names as they were) to the
    moderators for ``reason``, about ``game`` (a game id, optional) with ``text`` (optional).  Open
    until a moderator closes it in the admin."""

    class Reason(models.TextChoices):
        CHEATING = "cheating", _("Cheating (help from an engine or another person)")
        RUDE_CHAT = "rude_chat", _("Rude or abusive chat")
        SANDBAGGING = "sandbagging", _("Losing on purpose (sandbagging)")
        OTHER = "other", _("Something else")

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        CLOSED = "closed", _("Closed")

    reporter = models.CharField(max_length=32)
    reporter_name = models.CharField(max_length=150)
    reported = models.CharField(max_length=32)
    reported_name = models.CharField(max_length=150)
    reason = models.CharField(max_length=16, choices=Reason.choices)
    game = models.CharField(max_length=16, blank=True, default="")
    text = models.CharField(max_length=500, blank=True, default="")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["reporter", "-created_at"], name="report_reporter"),
                   models.Index(fields=["reported", "status"], name="report_reported"),
                   models.Index(fields=["status", "-created_at"], name="report_status")]

    def __str__(self) -> str:
        return f"{self.reporter_name} reports {self.reported_name} ({self.reason}, {self.status})"


class Card(models.Model):
    """What a player's profile shows of them beyond their games: ``country`` (ISO 3166-1 alpha-2, as
    the player chose it; empty: none shown) and ``last_seen`` (when a page of theirs last closed or
    opened; None: never seen since this was kept)."""

    player_id = models.CharField(max_length=32, unique=True)
    country = CountryField(blank=True, default="")
    last_seen = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.player_id} ({self.country or '-'})"


class Notification(models.Model):
    """One line of a player's notifications (the bell): ``kind`` (a key of
    :data:`game.people.notices.KINDS`), about ``actor`` (a username, or a tournament's name), with a
    ``detail`` (a decline's reason), linking to ``url`` (a path on the site); ``game`` names the game
    it is about, if any (one unread line per game and kind).  Unread until the player opens the bell."""

    player = models.CharField(max_length=32)
    kind = models.CharField(max_length=20)
    actor = models.CharField(max_length=100, blank=True, default="")
    detail = models.CharField(max_length=20, blank=True, default="")
    game = models.CharField(max_length=16, blank=True, default="")
    url = models.CharField(max_length=200)
    read = models.BooleanField(default=False)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["player", "-at"], name="notification_player_at"),
                   models.Index(fields=["player", "read"], name="notification_player_read")]

    def __str__(self) -> str:
        return f"{self.player}: {self.kind} {self.actor} ({'read' if self.read else 'unread'})"
