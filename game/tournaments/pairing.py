"""Who meets whom in an arena, pure: the free players, ranked, paired with a neighbour.

The players free to play are taken in their order in the standings; each is paired with the
nearest free player below them who is not the opponent they met last, when there is one (else the
nearest).  An odd player out waits for the next pairing, a few seconds later.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Waiting:
    """A free player: ``player`` (the player id), ``rank`` (0 for the leader; lower meets lower)
    and ``last_opponent`` (the player id last met, or empty)."""

    player: str
    rank: int
    last_opponent: str = ""


def _rematch(a: Waiting, b: Waiting) -> bool:
    return a.last_opponent == b.player or b.last_opponent == a.player


def pair(waiting: list[Waiting]) -> list[tuple[str, str]]:
    """Pairs of player ids, the higher-ranked first, for the ``waiting`` players (any order).

    No player is in two pairs; the same two players meet again at once only when neither has
    anyone else free to meet.

    >>> pair([Waiting("a", 0, "b"), Waiting("b", 1, "a"), Waiting("c", 2)])
    [('a', 'c')]
    """
    order = sorted(waiting, key=lambda w: (w.rank, w.player))
    taken: set[str] = set()
    pairs: list[tuple[str, str]] = []
    for index, player in enumerate(order):
        if player.player in taken:
            continue
        rest = [other for other in order[index + 1:] if other.player not in taken]
        if not rest:
            break
        fresh = [other for other in rest if not _rematch(player, other)]
        partner = fresh[0] if fresh else rest[0]
        taken.update((player.player, partner.player))
        pairs.append((player.player, partner.player))
    return pairs

