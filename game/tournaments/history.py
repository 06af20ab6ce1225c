"""A player's finished tournaments, for their profile: rank, score, and a trophy for a podium."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from . import standings
from .models import Entry, Tournament

#: Finished tournaments a profile lists (the latest).
SHOWN = 20
#: The podium: places that earn a trophy.
PODIUM = 3


@dataclass(frozen=True)
class Played:
    """One finished tournament of a player: its ``tournament`` (id, title, system...), when it
    started, the player's ``rank`` (from 1) among ``players``, ``score`` as its standings show it
    (an arena's points; a round event's points, a win 1, a draw ½) and ``trophy``: 1, 2 or 3 for a
    podium place, else None."""

    tournament: Tournament
    starts_at: datetime
    rank: int
    players: int
    score: float
    trophy: int | None


def played(player_id: str, shown: int = SHOWN) -> list[Played]:
    """The ``shown`` latest finished tournaments in which ``player_id`` played (a game scored, or a
    bye), newest first, each with their final rank and score.  An empty player id has none."""
    if not player_id:
        return []
    entries = (Entry.objects.filter(player_id=player_id, tournament__status=Tournament.Status.FINISHED)
               .filter(Q(games__gt=0) | Q(bye_round__isnull=False)).select_related("tournament")
               .order_by("-tournament__starts_at")[:shown])
    found = []
    for entry in entries:
        tournament = entry.tournament
        if tournament.system == Tournament.System.ARENA:
            order = [e.player_id for e in standings.ranked(tournament.id)]
            score: float = entry.score
        else:
            order = [row["player"] for row in standings.table(tournament)]
            score = entry.score / 2
        rank = order.index(player_id) + 1
        found.append(Played(tournament, tournament.starts_at, rank, len(order), score,
                            rank if rank <= PODIUM else None))
    return found
