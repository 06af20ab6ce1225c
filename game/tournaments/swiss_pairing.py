"""Who meets whom in a round of a Swiss event (FIDE Dutch system) or a round robin (Berger tables).

A thin adapter over the ``caissify-pairings`` library (``docs/tournaments.md`` says why that one):
our players' histories in, the round's boards out.  Pure: no database, no Redis.

Colours: in checkers Black moves first, so the side the FIDE rules call "white" (the first
mover) is our Black.  A history here speaks our words (``"black"``/``"white"`` per game played).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from caissify_pairings import generate_pairings

#: The FIDE name of each of our seats (the first mover is FIDE's "white").
_FIDE_COLOUR = {"black": "white", "white": "black"}


@dataclass(frozen=True)
class Standing:
    """One player's history before the round: ``number`` (the starting number, 1 for the highest
    rated, as FIDE ranks them), ``rating``, ``points`` in half points (a win 2, a draw 1, a bye 2),
    ``colours`` (our seat per game played, in order), ``floats`` (per round played or byed:
    ``"up"``, ``"down"`` or ``"none"``), ``byes`` (count) and ``opponents`` (their numbers)."""

    number: int
    rating: int
    points: int = 0
    colours: tuple[str, ...] = ()
    floats: tuple[str, ...] = ()
    byes: int = 0
    opponents: frozenset[int] = field(default_factory=frozenset)


@dataclass(frozen=True)
class Board:
    """A board of the round: ``black`` moves first; ``white`` None is a bye for ``black``."""

    black: int
    white: int | None


def _players(standings: Iterable[Standing]) -> list[dict]:
    return [{"id": s.number, "name": str(s.number), "score": s.points / 2, "rating": s.rating,
             "starting_number": s.number, "pairing_number": s.number,
             "color_hist": [_FIDE_COLOUR[c] for c in s.colours], "float_history": list(s.floats),
             "bye_count": s.byes} for s in standings]


def _previous(standings: Iterable[Standing]) -> set[tuple[int, int]]:
    return {(min(s.number, o), max(s.number, o)) for s in standings for o in s.opponents}


def _boards(rows: list[dict]) -> list[Board]:
    rows = sorted(rows, key=lambda r: r["table"])
    return [Board(black=r["white_id"], white=r["black_id"]) for r in rows]


def swiss_round(standings: list[Standing], round_number: int, rounds: int) -> list[Board]:
    """The boards of round ``round_number`` (from 1) of a ``rounds``-round Swiss event (FIDE
    Dutch): score groups, no opponent met twice, colours balanced, and when the count is odd one
    bye to the lowest eligible player, never twice.  Boards come in table order, a bye last.
    Raises ``ValueError`` when no legal pairing exists (more rounds than the players allow)."""
    if len(standings) < 2:
        raise ValueError("a Swiss round needs two players")
    rows = generate_pairings("dutch", _players(standings), _previous(standings), round_number, rounds,
                             max_byes_per_player=1)
    boards = _boards(rows)
    seated = [p for b in boards for p in (b.black, b.white) if p is not None]
    byes = [b for b in boards if b.white is None]
    # The library's fallback when no matching exists gives several "forced" byes: refused here.
    if sorted(seated) != sorted(s.number for s in standings) or len(byes) != len(standings) % 2:
        raise ValueError("no legal pairing for this round")
    return boards


def berger_round(players: int, round_number: int) -> list[Board]:
    """The boards of round ``round_number`` (from 1) of a round robin of ``players`` players
    numbered 1..players (FIDE Berger tables; an odd count adds a bye each round).  Raises
    ``ValueError`` for a round past the last (``players - 1`` rounds, ``players`` when odd)."""
    rounds = players - 1 if players % 2 == 0 else players
    if not 1 <= round_number <= rounds:
        raise ValueError(f"a round robin of {players} has rounds 1 to {rounds}")
    standings = [{"id": n, "name": str(n), "score": 0.0, "rating": 0, "starting_number": n,
                  "pairing_number": n, "color_hist": [], "float_history": [], "bye_count": 0}
                 for n in range(1, players + 1)]
    return _boards(generate_pairings("round_robin", standings, set(), round_number, rounds))


def floats(points: int, opponent_points: int | None) -> str:
    """A round's float for a player with ``points`` (half points, before the round) against an
    opponent with ``opponent_points`` (None: a bye, a float down)."""
    if opponent_points is None or opponent_points < points:
        return "down"
    return "up" if opponent_points > points else "none"
