"""The site's RQ worker (``RQ["WORKER_CLASS"]``): RQ's own, whose maintenance runs every
:data:`MAINTENANCE_EVERY_S` seconds instead of RQ's ten minutes, and also puts back the
tournaments' ticks that Redis lost (:func:`game.tournaments.jobs.revive_ticks`) and the periodic
sweep of live games out of time, when it is not running (:func:`game.round.timeouts.keep_sweeping`:
a worker's first maintenance starts it).

RQ's scheduler (``--with-scheduler``) is a process of the worker that dies when its Redis
connection is lost, a Redis restart among others; the worker starts it again only in its
maintenance. With RQ's ten minutes, no scheduled job ran for up to ten minutes after Redis came
back: an arena's start and its pairing ticks waited, and a Redis that kept nothing (the embedded
one) had lost the scheduled ticks for good until the hourly ``schedule_arenas``.
"""

from __future__ import annotations

import logging
from typing import Any

from rq.worker import Worker as RQWorker

from game.round import timeouts
from game.tournaments import jobs

log = logging.getLogger(__name__)

#: Seconds between two maintenances of a worker (RQ's default: 600).
MAINTENANCE_EVERY_S = 15


class Worker(RQWorker):
    """RQ's worker with :data:`MAINTENANCE_EVERY_S` and the tournaments' ticks revived in its maintenance."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("maintenance_interval", MAINTENANCE_EVERY_S)
        super().__init__(*args, **kwargs)

    def run_maintenance_tasks(self) -> None:
        """RQ's maintenance (the scheduler started again if it died, the registries cleaned), then
        the arenas' lost ticks and the clock sweep put back; a failure of the latter is logged, the
        worker works on."""
        super().run_maintenance_tasks()
        try:
            if timeouts.keep_sweeping():
                log.info("worker: the sweep of live games out of time started")
        except Exception:
            log.exception("worker: the sweep of live games out of time could not be checked")
        try:
            revived = jobs.revive_ticks()
        except Exception:
            log.exception("worker: the arenas' ticks could not be checked")
            return
        if revived:
            log.warning("worker: ticks put back for arenas %s", ", ".join(revived))
