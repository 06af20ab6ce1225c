"""``manage.py housekeeping``: end waiting games nobody joined and untimed games both players left,
clear stale presence and seeks.

Run it every hour or so (``deploy/systemd/checkers-housekeeping.timer``, or cron: docs/deploy.md,
"Production"); it is safe to run at any time and from any machine of the site, and twice at
once. It prints what it did, e.g.::

    housekeeping: aborted 3 waiting games never joined (created before 2025-01-01 12:00 UTC)
    housekeeping: ended 2 untimed games deserted by both players as abandoned (idle since 2025-01-01 12:00 UTC)
    housekeeping: removed 5 stale presence entries
    housekeeping: removed 2 expired seeks

- A game still waiting for an opponent ``--waiting-after`` after it was created (default 24h) is
  aborted through the actions (:func:`game.round.actions.abort_unjoined`: row lock, version
  bump), and its ``update`` event is published, so its creator's open page shows the end.
- An untimed game in play with nothing done in it for ``--deserted-after`` (default 24h) that
  neither player has open is ended as abandoned, a draw on both players' record
  (:func:`game.round.actions.abandon_deserted`), and its ``update`` event published.  The home
  page's "Games being played now" stops listing such a game as soon as its players have left.
- Presence (:func:`game.round.presence.sweep`) and the seek pools
  (:meth:`game.lobby.pools.Matchmaker.sweep`) lose the entries of sockets whose server process
  died. Both expire by themselves too; this keeps Redis tidy in between.

``--dry-run`` reports what it would do and changes nothing. The command fails (exit status 1)
after its report when a part could not be done (e.g. Redis unreachable); the rest is still done.
"""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from game.errors import ActionError
from game.lobby.pairing import POOLS
from game.lobby.pools import Matchmaker, MatchmakingUnavailable
from game.models import Game
from game.round import actions, fanout, presence

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration(text: str) -> timedelta:
    """``90s``, ``30m``, ``24h``, ``7d`` or plain seconds, as a positive :class:`timedelta`.

    >>> duration("24h"), duration("90")
    (datetime.timedelta(days=1), datetime.timedelta(seconds=90))
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text)
    if not match or float(match[1]) <= 0:
        raise ValueError(f"not a duration: {text!r} (e.g. 90s, 30m, 24h, 7d)")
    return timedelta(seconds=float(match[1]) * _UNITS[match[2] or "s"])


async def _sweep_seeks(dry_run: bool) -> int:
    matchmaker = Matchmaker.from_url(settings.MATCHMAKING_REDIS_URL, prefix=settings.MATCHMAKING_PREFIX,
                                     seek_ttl_s=float(settings.MATCHMAKING_SEEK_TTL))
    try:
        return sum([await matchmaker.sweep(pool, dry_run) for pool in POOLS])
    finally:
        await matchmaker.close()


class Command(BaseCommand):
    help = ("End waiting games never joined after --waiting-after (default 24h), clear stale "
            "presence entries and expired seeks, and report what was done.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--waiting-after", type=duration, default=duration("24h"), metavar="AGE",
                            help="abort games waiting for an opponent longer than this (90s, 30m, "
                                 "24h, 7d; default 24h)")
        parser.add_argument("--deserted-after", type=duration, default=duration("24h"), metavar="AGE",
                            help="end as abandoned the untimed games idle this long that neither player "
                                 "has open (default 24h)")
        parser.add_argument("--dry-run", action="store_true", help="report only; change nothing")

    def handle(self, *args, waiting_after: timedelta, dry_run: bool, verbosity: int = 1,
               deserted_after: timedelta | None = None, **options) -> None:
        would = "would " if dry_run else ""
        failures: list[str] = []
        self.end_deserted(deserted_after or duration("24h"), dry_run, verbosity)

        cutoff = timezone.now() - waiting_after
        stale = list(Game.objects.filter(status=Game.Status.WAITING, created_at__lt=cutoff)
                     .order_by("created_at").values_list("id", flat=True))
        aborted = []
        for game_id in stale:
            if dry_run:
                aborted.append(game_id)
                continue
            try:
                progress = actions.abort_unjoined(game_id, cutoff)
            except ActionError:
                continue  # joined or ended since the query
            aborted.append(game_id)
            fanout.publish_sync(game_id, progress.events)
        self.report(f"{would}abort {len(aborted)} waiting games never joined (created before "
                    f"{cutoff:%Y-%m-%d %H:%M} UTC)" if dry_run else
                    f"aborted {len(aborted)} waiting games never joined (created before "
                    f"{cutoff:%Y-%m-%d %H:%M} UTC)")
        if verbosity > 1 and aborted:
            self.report("  " + " ".join(aborted))

        try:
            removed = presence.sweep(dry_run=dry_run)
            self.report(f"{would}remove {removed} stale presence entries" if dry_run
                        else f"removed {removed} stale presence entries")
        except presence.PresenceUnavailable as exc:
            failures.append(f"presence: Redis unavailable ({exc})")

        try:
            expired = asyncio.run(_sweep_seeks(dry_run))
            self.report(f"{would}remove {expired} expired seeks" if dry_run else f"removed {expired} expired seeks")
        except MatchmakingUnavailable as exc:
            failures.append(f"seeks: Redis unavailable ({exc})")

        for failure in failures:
            self.stderr.write(f"housekeeping: {failure}")
        if failures:
            raise CommandError("housekeeping: not everything could be done (see above)")

    def end_deserted(self, deserted_after: timedelta, dry_run: bool, verbosity: int) -> None:
        """End as abandoned the untimed games in play idle for ``deserted_after`` that neither player has
        open (:func:`game.round.actions.abandon_deserted` checks each again under its row lock)."""
        cutoff = timezone.now() - deserted_after
        idle = list(Game.objects.filter(status=Game.Status.ACTIVE, time_control="untimed", updated_at__lt=cutoff)
                    .order_by("updated_at").values_list("id", flat=True))
        present = presence.audiences(idle)
        idle = [game_id for game_id in idle if not any(present[game_id]["online"].values())]
        ended = []
        for game_id in idle:
            if dry_run:
                ended.append(game_id)
                continue
            try:
                progress = actions.abandon_deserted(game_id, cutoff)
            except ActionError:
                continue  # moved, opened or ended since the query, or presence unknown
            ended.append(game_id)
            fanout.publish_sync(game_id, progress.events)
        verb = "would end" if dry_run else "ended"
        self.report(f"{verb} {len(ended)} untimed games deserted by both players as abandoned "
                    f"(idle since {cutoff:%Y-%m-%d %H:%M} UTC)")
        if verbosity > 1 and ended:
            self.report("  " + " ".join(ended))

    def report(self, line: str) -> None:
        self.stdout.write(f"housekeeping: {line}")
