"""Buchholz and Sonneborn-Berger of a round event, by FIDE's tie-break regulations: pure.

Every round of a player is either played (a game against an opponent) or unplayed (FIDE's
Tie-Break Regulations, article 16, "unplayed rounds"): a pairing-allocated bye, a late entrant's
half-point bye, a round not paired (withdrawn: a zero-point bye), or a forfeit (a game aborted
without a move of one side: a win for the other, a loss for them).  The regulations, as FIDE's
own tie-break server computes them:

- a player's own unplayed round counts, in their Buchholz, a *dummy opponent* with the player's
  own final score, and in their Sonneborn-Berger that score times the points of the round;
- an opponent's score, as it counts in the Buchholz of those who met them, takes the rounds they
  chose not to play after the last one they played or were given (a withdrawal's rounds: "voluntarily
  unplayed rounds", half-point and zero-point byes and forfeit losses) as draws;
- a round robin counts no dummy opponent: an unplayed round adds nothing.

Points are half points throughout (a game won 2, drawn 1), as stored; a round of ballot pairs is
two games (up to 4).  A Buchholz counts each opponent once a round, a Sonneborn-Berger each game.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Game:
    """One scored game of round ``round``: each seat's player id and half points; ``played``
    False for a forfeit or a game aborted (nothing was played)."""

    round: int
    black: str
    white: str
    black_points: int
    white_points: int
    played: bool = True


@dataclass(frozen=True)
class Player:
    """A player of the event: ``score`` in half points (with their byes), ``first_round`` (a late
    entrant's; the rounds before it are half-point byes), ``bye_round`` (their pairing-allocated
    bye), ``playing`` (a game of theirs in the round in play is not scored yet: that round is left
    out)."""

    player: str
    score: int
    first_round: int = 1
    bye_round: int | None = None
    playing: bool = False


@dataclass
class _Round:
    games: list[tuple[str, int, bool]] = field(default_factory=list)   # (opponent, points, played)
    points: int = 0
    kind: str = "unpaired"    # "played", "pab" (pairing bye), "half" (half-point bye), "forfeit", "unpaired"

    @property
    def voluntary(self) -> bool:
        """A round the player chose not to play (FIDE's "voluntarily unplayed"): a half-point or
        zero-point bye, or a forfeit lost."""
        return self.kind in ("half", "unpaired") or (self.kind == "forfeit" and self.points == 0)


def _rounds(players: list[Player], games: list[Game], rounds: int, half_bye: int,
            full_bye: int) -> dict[str, dict[int, _Round]]:
    table: dict[str, dict[int, _Round]] = {}
    for p in players:
        table[p.player] = {r: _Round() for r in range(1, rounds + 1) if not (p.playing and r == rounds)}
    for g in games:
        for me, other, got in ((g.black, g.white, g.black_points), (g.white, g.black, g.white_points)):
            found = table.get(me, {}).get(g.round)
            if found is None:
                continue
            found.games.append((other, got, g.played))
            found.points += got
            if g.played:
                found.kind = "played"
            elif found.kind != "played":
                found.kind = "forfeit"
    for p in players:
        for r, found in table[p.player].items():
            if found.games:
                continue
            if r == p.bye_round:
                found.kind, found.points = "pab", full_bye
            elif r < p.first_round:
                found.kind, found.points = "half", half_bye
    return table


def compute(players: list[Player], games: list[Game], rounds: int, round_points: int,
            swiss: bool = True) -> dict[str, tuple[int, int]]:
    """Each player's ``(buchholz, sonneborn_berger)`` after ``rounds`` rounds (the last one in
    play, or over): the Buchholz in half points, the Sonneborn-Berger in quarter points (half
    points times half points).  ``round_points``: a round won's half points (2, or 4 in ballot
    pairs); ``swiss`` False for a round robin (no dummy opponent)."""
    own = {p.player: p.score for p in players}
    table = _rounds(players, games, rounds, round_points // 2, round_points)
    adjusted = {}
    for p in players:
        mine = table[p.player]
        last = max((r for r, found in mine.items() if not found.voluntary), default=0)
        draws = sum(round_points // 2 - found.points for r, found in mine.items() if r > last and not found.games)
        adjusted[p.player] = own[p.player] + (draws if swiss else 0)
    result = {}
    for p in players:
        dummy = own[p.player] if swiss else 0
        buchholz = berger = 0
        for found in table[p.player].values():
            opponents = [other for other, _, played in found.games if played]
            buchholz += adjusted.get(opponents[0], 0) if opponents else dummy
            if found.games:
                berger += sum((adjusted.get(other, 0) if played else dummy) * got
                              for other, got, played in found.games)
            else:
                berger += dummy * found.points
        result[p.player] = (buchholz, berger)
    return result
