"""``manage.py sweep_clocks``: end now the live games out of time that nobody has open, and start the
periodic job that keeps doing it on RQ's scheduler when it is not running (:mod:`game.round.timeouts`).

Run by ``make run`` and at each worker's start in production (``deploy/systemd/checkers-worker@.service``);
``manage.py housekeeping`` starts the job again every hour if it was lost.  Safe to run at any time,
from any machine, and twice at once.  Prints e.g.::

    sweep_clocks: ended 2 live games out of time; the periodic sweep was started
"""

from django.core.management.base import BaseCommand, CommandError
from redis.exceptions import RedisError

from game.round import timeouts


class Command(BaseCommand):
    help = "End the live games out of time now and start the periodic sweep on RQ's scheduler if it is not running."

    def handle(self, *args, **options) -> None:
        ended = timeouts.end_overdue()
        try:
            started = timeouts.keep_sweeping()
        except RedisError as exc:
            raise CommandError(f"sweep_clocks: ended {len(ended)} live games out of time; the periodic "
                               f"sweep could not be checked: Redis unavailable ({exc})") from None
        state = "was started" if started else "runs"
        self.stdout.write(f"sweep_clocks: ended {len(ended)} live games out of time; the periodic sweep {state}")
