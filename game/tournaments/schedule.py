"""Scheduled events: the hourly arenas in the popular controls and the daily Swiss, created ahead.

:func:`create_ahead` makes the arenas of the next :data:`HOURS_AHEAD` hours that do not exist yet;
each has a ``schedule_key`` (unique in the database: ``hourly:<control>:<start>``), so two
processes that run it at once create each event once.  It runs as the RQ job
:func:`schedule_arenas`, which puts itself back on RQ's scheduler for the next hour (one job id an
hour, :func:`job_id`); ``manage.py schedule_arenas`` (run by ``make run`` and by the deployment's timer) runs it now.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import django_rq
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from . import arena, jobs
from .models import Tournament

#: The hourly arenas: (time control, minutes, name).  A name is stored in English and shown in the
#: viewer's language (:attr:`game.tournaments.models.Tournament.title`).
HOURLY = (("1+0", 27, gettext_noop("Hourly Bullet Arena")), ("3+0", 57, gettext_noop("Hourly Blitz Arena")),
          ("5+0", 57, gettext_noop("Hourly 5+0 Arena")))
#: Hours ahead the hourly arenas are created.
HOURS_AHEAD = 2
#: The daily Swiss: (time control, rounds, name, hour of the start in UTC); created a day ahead, played
#: in ballot pairs (each round one 3-move ballot, played twice by each pairing, colours reversed).
DAILY_SWISS = ("3+2", 5, gettext_noop("Daily Swiss"), 19)


def job_id(hour: datetime) -> str:
    """The RQ job id of the schedule's run at ``hour``: whoever puts it on the scheduler, it runs
    once that hour."""
    return f"arena-schedule-{hour:%Y%m%d%H}"


def _hour(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def create_ahead(now: datetime | None = None) -> list[Tournament]:
    """Create the hourly arenas starting in the next :data:`HOURS_AHEAD` hours that are missing
    (every hour's start, from the next one), each with its tick on the scheduler.  Returns those
    created here (none when another process made them first)."""
    now = now or timezone.now()
    made = []
    for hours in range(1, HOURS_AHEAD + 1):
        starts_at = _hour(now) + timedelta(hours=hours)
        for control, minutes, name in HOURLY:
            key = f"hourly:{control}:{starts_at:%Y%m%d%H}"
            if Tournament.objects.filter(schedule_key=key).exists():
                continue
            try:
                with transaction.atomic():
                    tournament = arena.create("", name, control, minutes, starts_at, rated=True, schedule_key=key)
            except IntegrityError:  # another process created it first
                continue
            jobs.schedule_tick(tournament)
            made.append(tournament)
    return made


def create_daily_swiss(now: datetime | None = None) -> Tournament | None:
    """Create the next daily Swiss (:data:`DAILY_SWISS`: its next start within a day) if it is
    missing, under the unique key ``daily-swiss:<YYYYMMDD>``, with its tick on the scheduler.
    Returns it, or None when it exists (or another process made it first)."""
    now = now or timezone.now()
    control, rounds, name, hour = DAILY_SWISS
    starts_at = now.replace(hour=hour, minute=0, second=0, microsecond=0)
    if starts_at <= now:
        starts_at += timedelta(days=1)
    key = f"daily-swiss:{starts_at:%Y%m%d}"
    if Tournament.objects.filter(schedule_key=key).exists():
        return None
    try:
        with transaction.atomic():
            tournament = arena.create("", name, control, 0, starts_at, rated=True, schedule_key=key,
                                      system=Tournament.System.SWISS, rounds=rounds, ballot=True,
                                      ballot_pairs=True)
    except IntegrityError:  # another process created it first
        return None
    jobs.schedule_tick(tournament)
    return tournament


def schedule_arenas() -> None:
    """The job: :func:`create_ahead`, :func:`create_daily_swiss` and the events' lost ticks put
    back (:func:`game.tournaments.jobs.revive_ticks`), then itself again at the next hour's start
    (one job id)."""
    create_ahead()
    create_daily_swiss()
    jobs.revive_ticks()
    next_hour = _hour(timezone.now()) + timedelta(hours=1)
    django_rq.get_queue(jobs.QUEUE).enqueue_at(next_hour, schedule_arenas, job_id=job_id(next_hour), result_ttl=0)
