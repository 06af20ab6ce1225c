"""Reviews: asked for, queued once per game, computed by a worker, stored with the game.

- :func:`request_review` (a player or spectator of a finished game, or the automatic review of a
  rated game, :func:`on_game_ended`): one :class:`~game.learning.models.Review` row per game, so a
  second request finds the first and queues nothing; a row left behind by a worker that died, or
  a review of an older format, is queued again.
- :func:`run_review`: the job, run by an RQ worker of the ``reviews`` queue (``manage.py rqworker
  ... reviews``): the game's moves replayed by the rules and judged (:mod:`game.learning.judge`),
  its progress written to the row as it goes (the page polls it), the result stored there.

How many reviews run at once is the number of worker processes listening to the ``reviews``
queue: each runs one job at a time (one beside ``make run``'s site, ``checkers-worker@N`` units in
production: docs/learning.md). A requester has at most :data:`MAX_PENDING` reviews queued or
running at a time; more are refused ``too_many_reviews``.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from typing import Any

import django_rq
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game import rules
from game.errors import ActionError, no_such_game
from game.locks import wait_for_locks_at_most
from game.models import Game, Move, is_game_id

from . import judge
from .models import Review

log = logging.getLogger(__name__)

#: The RQ queue reviews run on (``RQ_QUEUES`` in the settings).
QUEUE = "reviews"
#: Reviews one requester may have queued or running at once.
MAX_PENDING = 3
#: A queued or running review older than this is taken for lost (its worker died) and queued again (s).
STALE_S = 20 * 60
#: Progress is written to the row at most this often (s), and at the end.
PROGRESS_EVERY_S = 0.5
#: The requester of the automatic review of a rated game.
AUTOMATIC = "auto"
#: Terminations the rules draw on the final position (a review scores it as a draw).
_RULE_DRAWS = {rules.Termination.REPETITION.value, rules.Termination.FORTY_MOVES.value}


def job_id(game_id: str) -> str:
    """The RQ job id of a game's review: one job per game, whoever asks."""
    return f"review-{game_id}"


def _reviewable(game_id: str) -> Game:
    if not is_game_id(game_id):
        raise no_such_game()
    game = Game.objects.filter(pk=game_id).only("id", "status", "ply").first()
    if game is None:
        raise no_such_game()
    if game.status in (Game.Status.WAITING, Game.Status.ACTIVE):
        raise ActionError("game_not_over", _("A game is reviewed once it is over."))
    if game.status == Game.Status.ABORTED or game.ply == 0:
        raise ActionError("nothing_to_review", _("This game has no moves to review."))
    return game


def _lost(review: Review) -> bool:
    """A review that should have moved on by now, or one made in an older format."""
    if review.status == Review.Status.FAILED:
        return True
    if review.status == Review.Status.DONE:
        return (review.result or {}).get("effort", {}).get("format") != judge.REVIEW_FORMAT
    since = review.started_at or review.requested_at
    return since is not None and timezone.now() - since > timedelta(seconds=STALE_S)


def request_review(game_id: str, player_id: str) -> Review:
    """Ask for the review of a finished game; returns its row (queued, running or done).

    The first request creates the row and queues the job (after the transaction commits); later
    ones return the same row and queue nothing, unless it failed, was lost or is of an older
    format. Raises :class:`ActionError` ``no_such_game``, ``game_not_over`` (waiting or in play),
    ``nothing_to_review`` (aborted, or no move) or ``too_many_reviews`` (``player_id`` has
    :data:`MAX_PENDING` reviews pending already).
    """
    game = _reviewable(game_id)
    with transaction.atomic():
        wait_for_locks_at_most()
        review = Review.objects.select_for_update().filter(game_id=game.id).first()
        if review is not None and not _lost(review):
            return review
        if player_id != AUTOMATIC and Review.objects.filter(
                requested_by=player_id, status__in=(Review.Status.QUEUED, Review.Status.RUNNING)).exclude(
                game_id=game.id).count() >= MAX_PENDING:
            raise ActionError("too_many_reviews", _("You have reviews waiting already: wait for them to finish."))
        if review is None:
            try:
                with transaction.atomic():
                    review = Review.objects.create(game_id=game.id, requested_by=player_id, total=game.ply + 1)
            except IntegrityError:  # another request created it meanwhile: that one queues the job
                return Review.objects.get(game_id=game.id)
        else:
            Review.objects.filter(pk=game.id).update(status=Review.Status.QUEUED, done=0, error="", result=None,
                                                     started_at=None, finished_at=None, requested_at=timezone.now())
            review.refresh_from_db()
        transaction.on_commit(lambda: _enqueue(game.id))
    return review


def _enqueue(game_id: str) -> None:
    queue = django_rq.get_queue(QUEUE)
    queue.enqueue(run_review, game_id, job_id=job_id(game_id), result_ttl=0, failure_ttl=24 * 3600)


def on_game_ended(sender: Any, game: Game, **kwargs: Any) -> None:
    """:data:`game.round.signals.game_ended` receiver: a rated game that finished with moves is
    reviewed automatically. Never raises (a failure is logged: the game's end is not its business)."""
    if not game.rated:
        return
    try:
        request_review(game.id, AUTOMATIC)  # reads the row as committed: an aborted game is refused
    except ActionError:
        return
    except Exception:
        log.exception("the automatic review of game %s could not be queued", game.id)


def _replay(game: Game) -> tuple[rules.Position, list[rules.Move]]:
    start = rules.Position.from_fen(game.start_fen)
    notations = Move.objects.filter(game_id=game.id, ply__lte=game.ply).order_by("ply").values_list(
        "notation", flat=True)
    position, moves = start, []
    for text in notations:
        move = position.parse_move(text)
        moves.append(move)
        position = position.play(move)
    return start, moves


def run_review(game_id: str) -> str:
    """The RQ job: review the game ``game_id`` and store the result in its row; returns its status.

    A game without a review row (deleted meanwhile) is skipped. An error marks the row ``failed``
    with its text and is raised again (RQ keeps the failed job for a day).
    """
    game = Game.objects.filter(pk=game_id).first()
    if game is None or not Review.objects.filter(game_id=game_id).update(
            status=Review.Status.RUNNING, started_at=timezone.now(), done=0, total=game.ply + 1):
        return "skipped"
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_EVERY_S or done == total:
            last[0] = now
            Review.objects.filter(game_id=game_id).update(done=done, total=total)

    try:
        start, moves = _replay(game)
        result = judge.review_game(start, moves, drawn_by_rule=game.termination in _RULE_DRAWS,
                                   progress=progress)
    except Exception as exc:
        Review.objects.filter(game_id=game_id).update(status=Review.Status.FAILED, error=repr(exc)[:200],
                                                      finished_at=timezone.now())
        raise
    Review.objects.filter(game_id=game_id).update(status=Review.Status.DONE, result=result, done=len(moves) + 1,
                                                  finished_at=timezone.now())
    return Review.Status.DONE.value


def queue_position(game_id: str) -> int | None:
    """How many reviews wait before this game's in the queue (0: next), None when it is not waiting."""
    queue = django_rq.get_queue(QUEUE)
    try:
        ids = queue.get_job_ids()
    except Exception:  # noqa: BLE001 - Redis away: the page shows no position
        return None
    wanted = job_id(game_id)
    return ids.index(wanted) if wanted in ids else None
