"""An arena of many players: what a game's end costs, measured in one process.

Run by hand from the repository root on a scratch database (not part of the test suite)::

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/checkers_bench \\
        .venv/bin/python bench/arena.py --players 1000 --ends 2000

It migrates the database, creates a casual 3+0 arena, joins ``--players`` guests, starts it (the
first tick pairs everyone), then ends ``--ends`` games one after another (a resignation through the
game's actions, as a page sends it), each followed by what the worker does with it
(:func:`game.tournaments.jobs.game_over`: the end scored, the free players paired). Printed:

- the time from a game's end to its players' next pairing (the job's run, p50/p99/max), which is
  what a player waits on top of the queue's and the scheduler's latency;
- the time the ``game_ended`` receiver takes in the process that stored the end (a Daphne
  process: its whole share of an arena game's end), p50/p99;
- standings messages: the changes made and the messages they queued (at most one a second per
  arena, :mod:`game.tournaments.live`), over the run's seconds.

Jobs it queues on the ``tournaments`` queue are emptied at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "checkers_site.settings")

import django

django.setup()

import django_rq  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.utils import timezone  # noqa: E402

from game.models import Game  # noqa: E402
from game.round import actions  # noqa: E402
from game.tournaments import arena, jobs, live  # noqa: E402
from game.tournaments.models import Pairing  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--ends", type=int, default=2000)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    queue = django_rq.get_queue(jobs.QUEUE)
    tournament = arena.create("", "Bench Arena", "3+0", 240, timezone.now(), rated=False,
                              schedule_key=f"bench:{uuid.uuid4().hex[:12]}")
    for index in range(args.players):
        arena.join(tournament.id, uuid.uuid4().hex, f"p{index}")
    started = time.perf_counter()
    jobs.tick(tournament.id)
    print(f"{args.players} players: the first pairing took {time.perf_counter() - started:.2f} s, "
          f"{Pairing.objects.filter(tournament=tournament).count()} games")
    changes = 0
    original_changed = live.changed

    def counted(tournament_id: str) -> None:
        nonlocal changes
        changes += 1
        original_changed(tournament_id)

    live.changed = counted
    to_pair, receiver = [], []
    messages = 0

    def scheduler() -> None:
        """What RQ's scheduler and a worker would do with the standings messages now due."""
        nonlocal messages
        registry = queue.scheduled_job_registry
        for job_id in registry.get_job_ids():
            job = queue.fetch_job(job_id)
            due = registry.get_scheduled_time(job_id) if job is not None else None
            if job is not None and due is not None and str(job.func_name).endswith("push_standings") \
                    and due <= timezone.now():
                registry.remove(job_id, delete_job=True)
                live.push_standings(*job.args)
                messages += 1

    run_started = time.perf_counter()
    for _ in range(args.ends):
        game_id = random.choice(list(Pairing.objects.filter(tournament=tournament, scored=False)
                                     .values_list("game_id", flat=True)[:200]))
        game = Game.objects.get(pk=game_id)
        actions.resign(game.id, game.black_player)
        game.refresh_from_db()
        started = time.perf_counter()
        jobs.on_game_ended(Game, game)
        receiver.append(time.perf_counter() - started)
        started = time.perf_counter()
        jobs.game_over(game.id)
        to_pair.append(time.perf_counter() - started)
        scheduler()
    seconds = time.perf_counter() - run_started
    ms = [1000 * value for value in to_pair]
    print(f"{args.ends} game ends: from the end to the next pairing p50 {statistics.median(ms):.1f} ms, "
          f"p99 {percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms")
    us = [1e6 * value for value in receiver]
    print(f"the game_ended receiver (the server process's share): p50 {statistics.median(us):.0f} us, "
          f"p99 {percentile(us, 0.99):.0f} us")
    print(f"standings: {changes} changes queued {messages} messages in {seconds:.1f} s "
          f"({changes / max(messages, 1):.0f} changes a message)")
    queue.empty()
    registry = queue.scheduled_job_registry
    for job_id in registry.get_job_ids():
        registry.remove(job_id, delete_job=True)


if __name__ == "__main__":
    main()
