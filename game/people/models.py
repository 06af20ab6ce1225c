"""Challenges by name (one player invites another, by username, to a game of given settings) and follows."""

from __future__ import annotations

import uuid

from django.db import models


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

    def __str__(self) -> str:
        return f"{self.follower} follows {self.followed}"
