"""The standings of a tournament as its page shows them: read only."""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils import timezone
from django.utils.crypto import salted_hmac

from game.models import Game
from game.rules import ballots

from . import scoring, tiebreaks
from .models import Entry, Pairing, Tournament

#: Rows of the standings a page is sent (the rest are on the full list).
SHOWN = 100
#: Games in play shown as the top games.
TOP_GAMES = 4


def ranked(tournament_id: str) -> list[Entry]:
    """Every entry of the tournament in standings order: score, then performance rating, then
    the earlier joined."""
    entries = list(Entry.objects.filter(tournament_id=tournament_id))
    entries.sort(key=lambda e: (-e.score, -scoring.performance(e.opponents_rating, e.games, e.wins, e.draws),
                                e.joined_at))
    return entries


def row_key(tournament_id: str, player_id: str) -> str:
    """The key of ``player_id``'s row in the standings of ``tournament_id`` (16 hex digits): what
    every viewer is sent instead of the player id, which is the session's and shown to nobody (a
    page marks its own player's row by it)."""
    return salted_hmac("tournaments.standings", f"{tournament_id}:{player_id}").hexdigest()[:16]


def row(rank: int, entry: Entry, playing: set[str]) -> dict[str, Any]:
    """One row of the standings: rank (from 1), ``player`` (:func:`row_key`), name, score, streak
    (``fire``: the next win counts double), games, performance, withdrawn (or paused as away) and
    playing now."""
    return {"rank": rank, "player": row_key(entry.tournament_id, entry.player_id), "name": entry.name,
            "score": entry.score,
            "fire": scoring.on_fire(entry.streak), "games": entry.games,
            "performance": scoring.performance(entry.opponents_rating, entry.games, entry.wins, entry.draws),
            "withdrawn": entry.withdrawn or entry.away, "playing": entry.player_id in playing}


def public(tournament_id: str) -> dict[str, Any]:
    """What every viewer sees: ``status``, ``players`` (count), ``standings`` (the first
    :data:`SHOWN` rows of :func:`row`), ``top`` (the games in play of the best-ranked players:
    game id, names) and ``seconds_left`` (to the start before it, to the end while it runs)."""
    tournament = Tournament.objects.get(pk=tournament_id)
    if tournament.system != Tournament.System.ARENA:
        return public_rounds(tournament)
    live = list(Pairing.objects.filter(tournament_id=tournament_id, scored=False).select_related("game"))
    playing = {p for pairing in live for p in (pairing.black, pairing.white)}
    entries = ranked(tournament_id)
    rank = {entry.player_id: index for index, entry in enumerate(entries)}
    live.sort(key=lambda p: min(rank.get(p.black, 10**6), rank.get(p.white, 10**6)))
    return {"status": tournament.status, "players": len(entries),
            "standings": [row(index + 1, entry, playing) for index, entry in enumerate(entries[:SHOWN])],
            "top": [{"game": p.game_id, "black": p.game.black_name, "white": p.game.white_name}
                    for p in live[:TOP_GAMES]],
            "seconds_left": seconds_left(tournament)}


def seconds_left(tournament: Tournament) -> int:
    """Seconds to the start of a tournament to come, to the end of one under way, else 0."""
    if tournament.system != Tournament.System.ARENA and tournament.status != Tournament.Status.CREATED:
        return 0
    target = tournament.starts_at if tournament.status == Tournament.Status.CREATED else tournament.ends_at
    if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
        return 0
    return max(0, round((target - timezone.now()).total_seconds()))


def shown_result(game: Game, pairing: Pairing) -> str:
    """The result a tournament's pages show for ``pairing``'s ``game``: the game's own (``1-0``,
    ``0-1``, ``1/2-1/2``); for a game aborted and scored as a forfeit, the forfeit as FIDE writes
    it, the winner's ``+`` first (``+/-``, ``-/+``; ``-/-`` when both lost it); ``*`` while in play."""
    if game.result and game.result != "*":
        return game.result
    if not pairing.scored or pairing.black_points is None or pairing.white_points is None:
        return "*"
    black, white = pairing.black_points, pairing.white_points
    return "+/-" if black > white else "-/+" if white > black else "-/-"


def games_of(tournament_id: str) -> list[Game]:
    """Every finished game of the tournament, the latest first, each with its ``shown_result``
    (:func:`shown_result`: a forfeit as ``+/-``)."""
    pairings = {p.game_id: p for p in Pairing.objects.filter(tournament_id=tournament_id, scored=True)}
    games = list(Game.objects.filter(Q(pk__in=list(pairings))).order_by("-finished_at"))
    for game in games:
        game.shown_result = shown_result(game, pairings[game.id])  # type: ignore[attr-defined]
    return games


def table(tournament: Tournament) -> list[dict[str, Any]]:
    """A Swiss event's or round robin's standings from its stored games, best first: ``rank``,
    ``player``, ``name``, ``score`` (points: a win 1, a draw 0.5, a bye 1, a late entrant's
    half-point bye 0.5), ``buchholz`` and ``sonneborn_berger`` (:func:`game.tournaments.tiebreaks.compute`:
    FIDE's, unplayed rounds counted as its tie-break regulations say), ``games``, ``bye`` (its
    round or None), ``withdrawn``.  Ties: Buchholz, then Sonneborn-Berger, then the starting
    number.  In ballot pairs the score is both games' sum; an opponent counts once a round in the
    Buchholz, and each game in the Sonneborn-Berger."""
    entries = list(Entry.objects.filter(tournament=tournament))
    scored = Pairing.objects.filter(tournament=tournament, round__isnull=False).values_list(
        "round", "black", "white", "black_points", "white_points", "scored", "game__status")
    games: list[tiebreaks.Game] = []
    playing: set[str] = set()
    for round_number, black, white, black_points, white_points, done, status in scored:
        if not done:
            playing.update((black, white))
            continue
        games.append(tiebreaks.Game(round_number or 0, black, white, black_points or 0, white_points or 0,
                                    played=status != Game.Status.ABORTED))
    players = [tiebreaks.Player(e.player_id, e.score, e.first_round, e.bye_round, e.player_id in playing)
               for e in entries]
    values = tiebreaks.compute(players, games, tournament.round, 4 if tournament.ballot_pairs else 2,
                               swiss=tournament.system == Tournament.System.SWISS)
    entries.sort(key=lambda e: (-e.score, -values[e.player_id][0], -values[e.player_id][1], e.number or 10**4,
                                e.joined_at))
    return [{"rank": rank, "player": e.player_id, "name": e.name, "score": e.score / 2,
             "buchholz": values[e.player_id][0] / 2, "sonneborn_berger": values[e.player_id][1] / 4,
             "games": e.games, "bye": e.bye_round, "withdrawn": e.withdrawn}
            for rank, e in enumerate(entries, start=1)]


def board(tournament: Tournament) -> list[dict[str, Any]]:
    """The pairing board of the round in play (or the last one): per game ``board`` (from 1; a
    ballot pair's return game shares its first game's, and comes after it), ``leg`` (1 or 2),
    ``game``, ``black``/``white`` (names), ``result`` (:func:`shown_result`: a forfeit as ``+/-``,
    ``*`` in play); a bye as a row with ``white`` None and ``game`` None (its result ``"1"``, ``"2"``
    in ballot pairs)."""
    names = dict(Entry.objects.filter(tournament=tournament).values_list("player_id", "name"))
    rows: list[dict[str, Any]] = []
    pairings = list(Pairing.objects.filter(tournament=tournament, round=tournament.round).select_related("game"))
    firsts = sorted((p for p in pairings if p.leg == 1), key=lambda p: p.created_at)
    numbers = {(p.black, p.white): index for index, p in enumerate(firsts, start=1)}

    def number(p: Pairing) -> int:      # a return game's seats are its first game's, reversed
        return numbers.get((p.black, p.white) if p.leg == 1 else (p.white, p.black), 0)

    for p in sorted(pairings, key=lambda p: (number(p), p.leg)):
        rows.append({"board": number(p), "leg": p.leg, "game": p.game_id, "black": names.get(p.black, p.black),
                     "white": names.get(p.white, p.white),
                     "result": shown_result(p.game, p)})
    byes = Entry.objects.filter(tournament=tournament, bye_round=tournament.round).values_list(
        "player_id", flat=True) if tournament.round else ()
    for player in byes:
        rows.append({"board": len(firsts) + 1, "leg": 1, "game": None, "black": names[player], "white": None,
                     "result": "2" if tournament.ballot_pairs else "1"})
    return rows


def round_ballot(tournament: Tournament) -> dict[str, Any] | None:
    """The 3-move ballot of the round in play (or the last one): ``number`` and ``moves`` (its
    three plies, e.g. ``"10-14 22-18 12-16"``), or None (no ballot, or no round yet)."""
    if not tournament.ballot or not tournament.round:
        return None
    number = Game.objects.filter(pairing__tournament=tournament, pairing__round=tournament.round,
                                 ballot__isnull=False).values_list("ballot", flat=True).first()
    if number is None:
        return None
    return {"number": number, "moves": ballots.ballot(number).text}


def public_rounds(tournament: Tournament) -> dict[str, Any]:
    """What every viewer of a Swiss event or round robin sees: ``status``, ``system``, ``round``,
    ``rounds``, ``players``, ``standings`` (the first :data:`SHOWN` rows of :func:`table`, each
    ``player`` its :func:`row_key`),
    ``board`` (:func:`board`), ``ballot`` (:func:`round_ballot`) and ``seconds_left`` (to the start,
    else 0)."""
    rows = [{**row, "player": row_key(tournament.id, row["player"])} for row in table(tournament)]   # no player ids
    return {"status": tournament.status, "system": tournament.system, "round": tournament.round,
            "rounds": tournament.rounds, "players": len(rows), "standings": rows[:SHOWN],
            "board": board(tournament), "ballot": round_ballot(tournament), "seconds_left": seconds_left(tournament)}
