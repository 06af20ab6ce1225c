"""What the tournament tests share."""

from __future__ import annotations

import django_rq

from game.tournaments import jobs


def clear_tournament_jobs() -> None:
    """Empty the ``tournaments`` queue, its scheduled and failed jobs, and drop the arenas' keys in Redis."""
    queue = django_rq.get_queue(jobs.QUEUE)
    queue.empty()
    for registry in (queue.scheduled_job_registry, queue.failed_job_registry):
        for job_id in registry.get_job_ids():
            registry.remove(job_id, delete_job=True)
    connection = django_rq.get_connection(jobs.QUEUE)
    for key in connection.scan_iter("tournaments:*"):
        connection.delete(key)
