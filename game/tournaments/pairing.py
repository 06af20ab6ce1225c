"""Who meets whom in an arena, pure: the free players, ranked, paired with a neighbour.

The players free to play are taken in their order in the standings; each is paired with the
nearest free player below them who is not the opponent they met last.  Two last opponents meet
again only when neither has anyone else to meet and both have waited :data:`REMATCH_AFTER_S`
seconds (someone else may come free meanwhile).  A player left over waits for the next pairing,
a few seconds later.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Seconds two last opponents wait for someone else before they may meet again.
REMATCH_AFTER_S = 15


@dataclass(frozen=True)
class Waiting:
    """A free player: ``player`` (the player id), ``rank`` (0 for the leader; lower meets lower),
    ``last_opponent`` (the player id last met, or empty) and ``waited_s`` (seconds free so far)."""

    player: str
    rank: int
    last_opponent: str = ""
    waited_s: float = 0.0


def _rematch(a: Waiting, b: Waiting) -> bool:
    return a.last_opponent == b.player or b.last_opponent == a.player


def pair(waiting: list[Waiting]) -> list[tuple[str, str]]:
    """Pairs of player ids, the higher-ranked first, for the ``waiting`` players (any order).

    No player is in two pairs; two last opponents meet again only as the module says.

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
        if fresh:
            partner = fresh[0]
        elif len(rest) == 1 and min(player.waited_s, rest[0].waited_s) >= REMATCH_AFTER_S:
            partner = rest[0]
        else:
            continue
        taken.update((player.player, partner.player))
        pairs.append((player.player, partner.player))
    return pairs

