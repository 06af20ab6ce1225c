"""Swiss events and round robins: a game's end scored, a bye given, the next round's boards.

Points are kept in half points (a win 2, a draw 1, a loss 0, a bye 2), shown halved.  Who meets
whom is :mod:`game.tournaments.swiss_pairing` (FIDE Dutch, Berger tables); when a round starts and
its games are created is :mod:`game.tournaments.jobs` (under the tournament's lock in Redis).
Creating, joining and withdrawing are the arena's actions (:mod:`game.tournaments.arena`); the
starting numbers and late entries :mod:`game.tournaments.seeding`.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from game.models import Game
from game.rules import Color, Termination

from . import arena, seeding, swiss_pairing
from .models import Entry, Pairing, Tournament

#: Half points of a win, a draw, a loss and a bye.
WIN, DRAW, LOSS, BYE = 2, 1, 0, 2


def half_points(game: Game, side: Color) -> int:
    """What ``side`` scores for the finished or aborted ``game``, in half points: 2, 1 or 0.  An
    aborted game is a forfeit of the side that let the clock abort it without a move of its own
    (:func:`game.tournaments.arena.never_moved`), a win for the other; otherwise it scores 0 for
    both."""
    if game.status == Game.Status.ABORTED or game.termination == Termination.ABORTED.value:
        if arena.never_moved(game, side):
            return LOSS
        return WIN if arena.never_moved(game, side.opponent) else LOSS
    if game.result == "1/2-1/2":
        return DRAW
    winner = {"1-0": Color.BLACK, "0-1": Color.WHITE}.get(game.result)
    return WIN if winner is side else LOSS


def record(game_id: str) -> Pairing | None:
    """Score the end of a Swiss or round-robin game (once: a second call changes nothing): each
    player's half points, games, wins and draws; a player who never moved is withdrawn, the
    other free again.  Returns the pairing, or None for a game of no tournament or not over."""
    with transaction.atomic():
        pairing = Pairing.objects.select_for_update().filter(game_id=game_id).first()
        if pairing is None or pairing.scored:
            return pairing
        game = Game.objects.get(pk=game_id)
        if not game.is_over:
            return None
        entries = {e.player_id: e for e in Entry.objects.select_for_update().filter(
            tournament_id=pairing.tournament_id, player_id__in=(pairing.black, pairing.white))}
        now = timezone.now()
        for side, player, opponent in ((Color.BLACK, pairing.black, pairing.white),
                                       (Color.WHITE, pairing.white, pairing.black)):
            entry, points = entries[player], half_points(game, side)
            setattr(pairing, f"{side.name.lower()}_points", points)
            entry.score += points
            entry.games += 1
            entry.wins += points == WIN
            entry.draws += points == DRAW
            entry.last_opponent = opponent
            entry.withdrawn = entry.withdrawn or arena.never_moved(game, side)
            entry.free_since = None if entry.withdrawn else now
            entry.save()
        pairing.scored = True
        pairing.save()
        return pairing


@dataclass(frozen=True)
class Seating:
    """A board of the next round in entries: ``black`` moves first; ``white`` None is a bye."""

    black: Entry
    white: Entry | None


def _histories(tournament: Tournament, entries: list[Entry]) -> list[swiss_pairing.Standing]:
    """Each numbered player's history (colours, floats, byes, opponents) from the stored rounds.
    In ballot pairs a round's colour and float are its first game's, and its points both games'.
    A round without a game of one's own (a bye, a late entrant's half-point bye, a round not
    paired) is a float down, as the Dutch rules count it; a late entrant's missed rounds score
    their half-point byes."""
    number = {e.player_id: e.number or 0 for e in entries}
    points = dict.fromkeys(number, 0)
    colours: dict[str, list[str]] = {p: [] for p in number}
    floats: dict[str, list[str]] = {p: [] for p in number}
    opponents: dict[str, set[int]] = {p: set() for p in number}
    pairings = list(Pairing.objects.filter(tournament=tournament, round__isnull=False))
    for round_number in range(1, tournament.round + 1):
        before = dict(points)
        for p in (p for p in pairings if p.round == round_number):
            for me, other, colour, got in ((p.black, p.white, "black", p.black_points),
                                           (p.white, p.black, "white", p.white_points)):
                points[me] += got or 0
                if p.leg == 1:
                    colours[me].append(colour)
                    floats[me].append(swiss_pairing.floats(before[me], before[other]))
                    opponents[me].add(number[other])
        for e in entries:
            if e.bye_round == round_number:
                points[e.player_id] += bye_points(tournament)
            elif round_number < e.first_round:
                points[e.player_id] += seeding.half_bye_points(tournament)
            if len(floats[e.player_id]) < round_number:
                floats[e.player_id].append("down")
    return [swiss_pairing.Standing(number[e.player_id], e.rating, points[e.player_id], tuple(colours[e.player_id]),
                                   tuple(floats[e.player_id]), int(e.bye_round is not None),
                                   frozenset(opponents[e.player_id])) for e in entries]


def next_round(tournament: Tournament) -> list[Seating]:
    """The boards of round ``tournament.round + 1``: a Swiss event's by the Dutch rules over the
    players present, a round robin's from its Berger table (a board of a withdrawn player is not
    played).  Raises ``ValueError`` when no legal pairing exists."""
    entries = sorted(Entry.objects.filter(tournament=tournament, number__isnull=False), key=lambda e: e.number or 0)
    by_number = {e.number: e for e in entries}
    if sum(not e.withdrawn for e in entries) < 2:
        raise ValueError("fewer than two players left")
    if tournament.system == Tournament.System.ROUND_ROBIN:
        boards = swiss_pairing.berger_round(len(entries), tournament.round + 1)
        return [Seating(by_number[b.black], by_number.get(b.white) if b.white else None) for b in boards
                if not by_number[b.black].withdrawn and not (b.white and by_number[b.white].withdrawn)]
    present = [e for e in entries if not e.withdrawn]
    standings = [s for s in _histories(tournament, entries) if not by_number[s.number].withdrawn]
    boards = swiss_pairing.swiss_round(standings, tournament.round + 1, tournament.rounds)
    if len(present) != sum(1 if b.white is None else 2 for b in boards):
        raise ValueError("the pairing left a player out")
    return [Seating(by_number[b.black], by_number[b.white] if b.white else None) for b in boards]


def bye_points(tournament: Tournament) -> int:
    """A bye's half points in ``tournament``: :data:`BYE`, twice that in ballot pairs (a round is
    two games there, and the bye counts as a pair won)."""
    return BYE * (2 if tournament.ballot_pairs else 1)


def give_bye(entry: Entry, round_number: int, points: int = BYE) -> None:
    """A bye in ``round_number``: ``points`` half points (:func:`bye_points`), once per event (a
    second is refused with ``ValueError``, the pairing never gives one)."""
    if Entry.objects.filter(pk=entry.pk, bye_round__isnull=True).update(
            bye_round=round_number, score=F("score") + points) != 1:
        raise ValueError(f"{entry.player_id} had a bye already")


def round_robin_rounds(players: int) -> int:
    """The rounds of a round robin of ``players``: one fewer, or as many when odd (a bye each)."""
    return players - 1 if players % 2 == 0 else players
