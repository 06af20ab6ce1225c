"""A cooldown from rated play for accounts that leave rated games unplayed, again and again.

Each rated game a player leaves unplayed is noted (:class:`game.models.Departure`: they aborted
it, or it was aborted because a side had not made its first two moves when they ended it; they let
the time for their first move run out; they left and their opponent claimed the game).  A few
happen to anyone (a doorbell, a dropped network): the first :data:`FREE` within :data:`WINDOW_S`
cost nothing.  Each one past them starts a cooldown from rated play, counted from it, that
doubles each time: :data:`FIRST_COOLDOWN_S`, then twice that, up to :data:`MAX_COOLDOWN_S`
(lichess's playbans work the same way).  Casual games stay open.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Departure, Game

#: The departures counted: those of the last day.
WINDOW_S = 86400
#: Departures within the window that cost nothing.
FREE = 2
#: The first cooldown (seconds), doubled by each departure after it, at most :data:`MAX_COOLDOWN_S`.
FIRST_COOLDOWN_S = 5 * 60
MAX_COOLDOWN_S = 24 * 3600
#: The kinds of departure.
ABORTED, NO_MOVE, ABANDONED = "aborted", "no_move", "abandoned"


def record(player_id: str, game: Game, kind: str, now: datetime | None = None) -> None:
    """Note that ``player_id`` left the rated ``game`` unplayed (``kind``: :data:`ABORTED`,
    :data:`NO_MOVE`, :data:`ABANDONED`), in the caller's transaction."""
    Departure.objects.create(player_id=player_id, game=game, kind=kind, at=now or timezone.now())


def cooldown_s(player_id: str, now: datetime | None = None) -> int:
    """Seconds left of ``player_id``'s cooldown from rated play (0: none)."""
    now = now or timezone.now()
    recent = list(Departure.objects.filter(player_id=player_id, at__gte=now - timedelta(seconds=WINDOW_S))
                  .order_by("at").values_list("at", flat=True))
    if len(recent) <= FREE:
        return 0
    length = min(MAX_COOLDOWN_S, FIRST_COOLDOWN_S * 2 ** (len(recent) - FREE - 1))
    left = (recent[-1] + timedelta(seconds=length) - now).total_seconds()
    return max(0, math.ceil(left))


def check(player_id: str, now: datetime | None = None) -> None:
    """Raise :class:`ActionError` ``playban`` (its message says for how long) while ``player_id``
    may not play rated games."""
    left = cooldown_s(player_id, now)
    if left:
        raise ActionError("playban", lazy_text(
            _("You left too many rated games unplayed: rated games are closed to you for %(minutes)s "
              "more minutes. Casual games stay open."), minutes=math.ceil(left / 60)))
