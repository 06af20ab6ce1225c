"""Live games that end on time with nobody watching: a periodic job on RQ's scheduler.

A game socket ends its game on time as its clock runs out (:mod:`game.round.flag`), and any
message or page read past the deadline does so too; a live game that both players have left has
no socket to do it.  :func:`sweep` is the job that does it for them: every :data:`SWEEP_S`
seconds it finds the live timed games in play whose side to move is out of time, or whose first
move did not come within :data:`game.clock.FIRST_MOVE_S`, and ends each through the one action a
socket's clock check calls (:func:`game.round.actions.check_clock`: row lock, the clock decides
again, a game ends once), publishing its event, so that open pages, "My games", the badge,
profiles, ratings and an arena's scoring see the end within seconds.  Whether a player is still
connected changes nothing: the clock decides.  Untimed games (``manage.py housekeeping``) and
correspondence games (their days) are not its business.

The job puts itself back on the scheduler for the next slot of :data:`SWEEP_S` seconds, one job
id per slot (:func:`job_id`), so that two chains (a chain revived while the old one was only
late) merge into one.  :func:`keep_sweeping` starts the chain when it is not running (no
heartbeat for :data:`HEARTBEAT_S` seconds): every worker's maintenance runs it
(:class:`game.worker.Worker`, at its start and every 15 s), so ``make run`` and the production
workers (``deploy/systemd/checkers-worker@.service``) start it, and a Redis that lost it gets it back.
"""

from __future__ import annotations

import logging
from datetime import datetime

import django_rq
from django.utils import timezone

from game.clock import TimeControl
from game.errors import ActionError
from game.models import Game
from game.round import actions, fanout, outages

log = logging.getLogger(__name__)

#: The RQ queue of the sweep.
QUEUE = "default"
#: Seconds between two sweeps.
SWEEP_S = 5
#: Seconds after its last sweep the chain is taken for lost (:func:`keep_sweeping`).
HEARTBEAT_S = 6 * SWEEP_S
#: Games in play read per query (one page of the ``(status, -created_at)`` index).
PAGE = 500
#: At most this many games ended by one sweep (the next sweep ends the rest).
BATCH = 200

_HEARTBEAT_KEY = "clocks:sweep"
_COLUMNS = ("id", "created_at", "time_control", "status", "fen", "ply", "ballot", "black_ms", "white_ms",
            "turn_started_at", "black_berserk", "white_berserk")


def overdue(now: datetime, limit: int = BATCH) -> list[str]:
    """The ids of at most ``limit`` live timed games in play that are out of time as of ``now``
    (:meth:`game.clock.Clock.expiry`: the side to move has run out, or a first move is overdue;
    an outage of the game events is not charged), oldest first.

    Walks the games in play on the ``(status, -created_at)`` index, :data:`PAGE` rows a query
    (untimed and correspondence games left out by the query), and decides each clock in Python:
    no index holds the clocks, which every move changes (``docs/scaling.md``)."""
    rows = (Game.objects.filter(status=Game.Status.ACTIVE).exclude(time_control="untimed")
            .exclude(time_control__endswith="d").order_by("created_at", "id").only(*_COLUMNS))
    found: list[str] = []
    after: tuple[datetime, str] | None = None
    while len(found) < limit:
        page = rows if after is None else rows.filter(created_at__gte=after[0]).exclude(
            created_at=after[0], id__lte=after[1])
        read = list(page[:PAGE])
        found += [g.id for g in read if TimeControl.parse(g.time_control).live and outages.clock(g).expiry(now)]
        if len(read) < PAGE:
            break
        after = (read[-1].created_at, read[-1].id)
    return found[:limit]


def end_overdue(now: datetime | None = None, limit: int = BATCH) -> list[str]:
    """End the games :func:`overdue` finds as of ``now`` (default the current time) through
    :func:`game.round.actions.check_clock` and publish their ``flagged``/``aborted`` events.
    Returns the ids of the games ended (a game ended meanwhile, or given time back by an outage
    read under its lock, is not)."""
    now = now or timezone.now()
    ended = []
    for game_id in overdue(now, limit):
        try:
            progress = actions.check_clock(game_id, now)
        except ActionError:
            continue
        if progress.events:
            fanout.publish_sync(game_id, progress.events)
            ended.append(game_id)
    return ended


def job_id(slot: datetime) -> str:
    """The RQ job id of the sweep due at ``slot`` (a multiple of :data:`SWEEP_S` seconds)."""
    return f"clock-sweep-{int(slot.timestamp())}"


def _next_slot(now: datetime) -> datetime:
    seconds = int(now.timestamp()) // SWEEP_S * SWEEP_S + SWEEP_S
    return datetime.fromtimestamp(seconds, tz=now.tzinfo)


def _schedule(now: datetime) -> None:
    slot = _next_slot(now)
    django_rq.get_queue(QUEUE).enqueue_at(slot, sweep, job_id=job_id(slot), result_ttl=0, failure_ttl=3600)


def sweep() -> None:
    """The job: put the next sweep on the scheduler and mark the chain alive, then end the games
    out of time (:func:`end_overdue`; a failure there is logged, the chain goes on)."""
    now = timezone.now()
    _schedule(now)
    django_rq.get_connection(QUEUE).set(_HEARTBEAT_KEY, "1", ex=HEARTBEAT_S)
    try:
        ended = end_overdue(now)
    except Exception:
        log.exception("clocks: the sweep of games out of time failed")
        return
    if ended:
        log.info("clocks: %d games ended on time or aborted: %s", len(ended), " ".join(ended))


def keep_sweeping(now: datetime | None = None) -> bool:
    """Start the chain of sweeps when it is not running (no heartbeat for :data:`HEARTBEAT_S`
    seconds: never started, a Redis flushed, the workers stopped): the next slot's sweep goes on the
    scheduler, and the heartbeat is set, so that a second call at once finds it running.  Returns
    True when it was started, False when it runs.  Raises :class:`redis.exceptions.RedisError` when
    Redis is unreachable."""
    connection = django_rq.get_connection(QUEUE)
    if not connection.set(_HEARTBEAT_KEY, "1", ex=HEARTBEAT_S, nx=True):
        return False
    _schedule(now or timezone.now())
    return True

