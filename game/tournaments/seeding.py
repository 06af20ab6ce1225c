"""A round event's players in order, and late entries into a Swiss event.

- **Starting numbers** (FIDE's ranking: 1 for the highest rated, the earlier joined first among
  equals): given to the players present at the start of a Swiss event or round robin, and again to
  everyone when a late entrant comes in, who takes the place their rating gives (FIDE's handling
  rules call the numbers provisional until the list of players closes: the pairing reads them
  afresh each round).
- **Late entries**: a Swiss event under way takes new players until its last two rounds
  (:data:`CLOSED_FOR_LAST`); a late entrant is paired from the next round and scores a half-point
  bye for each round missed (:func:`half_bye_points`).  A round robin's table is fixed at its start:
  no late entry there.

Storage only through the entries; the join that calls :func:`enter_late` is
:func:`game.tournaments.arena.join`.
"""

from __future__ import annotations

from .models import Entry, Tournament

#: A Swiss event takes late entries until this many rounds are left to pair (the last two).
CLOSED_FOR_LAST = 2
#: The half points of a half-point bye in a one-game round: a draw's.
HALF_BYE = 1


def number_players(tournament: Tournament, newcomer: Entry | None = None) -> list[Entry]:
    """Give the starting numbers: at the start (no ``newcomer``) to the players present; at a late
    entry to every numbered player (one who withdrew too) and the ``newcomer``.  The highest rated
    is 1, the earlier joined first among equals.  Returns the entries numbered, in number order."""
    if newcomer is None:
        entries = list(Entry.objects.filter(tournament=tournament, withdrawn=False))
    else:
        entries = [*Entry.objects.filter(tournament=tournament, number__isnull=False).exclude(pk=newcomer.pk),
                   newcomer]
    ordered = sorted(entries, key=lambda e: (-e.rating, e.joined_at, e.pk))
    for number, entry in enumerate(ordered, start=1):
        if entry.number != number:
            entry.number = number
            Entry.objects.filter(pk=entry.pk).update(number=number)
    return ordered


def late_entry_open(tournament: Tournament) -> bool:
    """Whether ``tournament`` takes a late entry now: a Swiss event under way whose next round is
    not one of its last :data:`CLOSED_FOR_LAST` (of 5 rounds: while round 1, 2 or 3 is in play, or
    before round 1 is paired)."""
    return (tournament.system == Tournament.System.SWISS and tournament.status == Tournament.Status.STARTED
            and tournament.round + CLOSED_FOR_LAST <= tournament.rounds)


def half_bye_points(tournament: Tournament) -> int:
    """The half points of a half-point bye in ``tournament``: a drawn round's, :data:`HALF_BYE`, or
    twice that in ballot pairs (a round of two games: a pair drawn)."""
    return HALF_BYE * (2 if tournament.ballot_pairs else 1)


def enter_late(tournament: Tournament, entry: Entry) -> Entry:
    """Make ``entry`` a late entrant of the Swiss event under way (in the caller's transaction,
    under the tournament's row lock, which the next round's pairing takes too): paired from the
    next round (``first_round``), a half-point bye for each round before it (its score), and a
    starting number by its rating (everyone renumbered).  Returns the entry."""
    entry.first_round = tournament.round + 1
    entry.score = tournament.round * half_bye_points(tournament)
    entry.save(update_fields=["first_round", "score"])
    number_players(tournament, newcomer=entry)
    return entry
