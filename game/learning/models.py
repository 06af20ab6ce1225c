"""What learning stores: a game's review, the puzzles, their solvers' ratings and attempts, lessons done.

Storage only: what to write is decided in :mod:`game.learning.reviews`, :mod:`game.learning.puzzles`
and :mod:`game.learning.lessons`.
"""

from __future__ import annotations

from django.db import models

from game.models import Game


class Review(models.Model):
    """The computer's review of one finished game, shared by everyone who looks at it.

    ``status``: ``queued`` (a job waits in the ``reviews`` queue), ``running`` (a worker scores the
    positions: ``done`` of ``total`` positions so far), ``done`` (``result`` holds what
    :func:`game.learning.judge.review_game` returned) or ``failed`` (``error`` says why; asking again
    queues it again). ``requested_by``: the player id that asked first (``auto`` for a rated game's
    automatic review).
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    game = models.OneToOneField(Game, on_delete=models.CASCADE, primary_key=True, related_name="review")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error = models.CharField(max_length=200, blank=True, default="")
    requested_by = models.CharField(max_length=32, blank=True, default="")
    requested_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"review of {self.game_id} ({self.status})"


class Puzzle(models.Model):
    """One puzzle: the solver to move in ``fen`` after the opponent's ``last_move`` (from ``before``).

    ``line``: the solution in full notation, the solver's moves and the opponent's replies in turn,
    starting and ending with the solver's; ``refutations``: for each solver step (by index in
    ``line``), each other legal move mapped to the opponent's answer that shows why it fails;
    ``themes``: names (:mod:`game.learning.themes`); ``source``: where the position comes from (a
    file, a game, a ply); ``gain``: what the line wins (``"material"`` or ``"win"``), ``men``: the men
    won. ``rating``/``deviation``/``volatility``: the puzzle's Glicko-2 strength.
    """

    id = models.CharField(primary_key=True, max_length=12)
    before = models.CharField(max_length=120)
    last_move = models.CharField(max_length=80)
    fen = models.CharField(max_length=120)
    line = models.JSONField()
    refutations = models.JSONField(default=dict)
    themes = models.JSONField(default=list)
    source = models.CharField(max_length=200)
    gain = models.CharField(max_length=10, default="material")
    men = models.SmallIntegerField(default=1)
    rating = models.FloatField(default=1500.0)
    deviation = models.FloatField(default=350.0)
    volatility = models.FloatField(default=0.06)
    plays = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["rating"])]

    def __str__(self):
        return f"puzzle {self.id}"


class PuzzleSolver(models.Model):
    """A solver's puzzle rating (accounts only: guests play unrated) and best streak."""

    player_id = models.CharField(max_length=32, primary_key=True)
    rating = models.FloatField(default=1500.0)
    deviation = models.FloatField(default=350.0)
    volatility = models.FloatField(default=0.06)
    plays = models.PositiveIntegerField(default=0)
    best_streak = models.PositiveIntegerField(default=0)
    streak = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"solver {self.player_id} ({self.rating:.0f})"


class PuzzleAttempt(models.Model):
    """One player's attempt at one puzzle: only the first counts for the ratings.

    ``step``: the index in the puzzle's line of the solver's next move; ``result``: ``""`` while
    under way, ``won`` or ``lost``. ``rated``: the attempt moved the ratings (an account's first);
    ``rating_before``/``rating_after``: the solver's rating around it (None unrated). ``streak``: played
    in streak mode.
    """

    player_id = models.CharField(max_length=32)
    puzzle = models.ForeignKey(Puzzle, on_delete=models.CASCADE, related_name="attempts")
    step = models.PositiveSmallIntegerField(default=0)
    result = models.CharField(max_length=4, blank=True, default="")
    rated = models.BooleanField(default=False)
    streak = models.BooleanField(default=False)
    rating_before = models.FloatField(null=True, blank=True)
    rating_after = models.FloatField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["player_id", "puzzle"], name="one_attempt_per_puzzle")]
        indexes = [models.Index(fields=["player_id", "-started_at"])]

    def __str__(self):
        return f"{self.player_id} on {self.puzzle_id}: {self.result or 'playing'}"


class LessonProgress(models.Model):
    """A lesson finished by an account's player id (a guest's progress stays in its browser)."""

    player_id = models.CharField(max_length=32)
    lesson = models.CharField(max_length=40)
    finished_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["player_id", "lesson"], name="one_lesson_row")]

    def __str__(self):
        return f"{self.player_id}: {self.lesson}"
