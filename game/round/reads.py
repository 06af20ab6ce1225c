"""What the pages and sockets read about games, without taking any lock: the snapshot, seat
lookups, the version, the PDN text, the live games list, fair-play checks."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from game import rules
from game.clock import CORRESPONDENCE, TimeControl
from game.errors import no_such_game
from game.models import Forecast, Game
from game.players import COMPUTER_PREFIX, computer_level
from game.round import chat, events, outages, presence, store
from game.rules import Color, ballots


def _game_and_moves(game_id: str) -> tuple[Game, list[tuple[str, str]]]:
    """The game and its stored ``(notation, fen_after)`` up to its ply, ply 1 first.  Raises
    :class:`ActionError` ``no_such_game``."""
    try:
        game = Game.objects.get(pk=game_id)
    except Game.DoesNotExist:
        raise no_such_game() from None
    return game, list(game.move_set.filter(ply__lte=game.ply).order_by("ply").values_list("notation", "fen_after"))


def snapshot(game_id: str, player_id: str | None) -> events.Snapshot:
    """The ``snapshot`` for one viewer: the game's state, its move list, the viewer's seat and
    the last lines of the chat rooms the viewer reads (:func:`game.round.chat.history`).

    Raises :class:`ActionError` ``no_such_game``.
    """
    game, rows = _game_and_moves(game_id)
    you = game.seat_of(player_id)
    return events.snapshot(game, store.current_record(game, rows), [notation for notation, _ in rows],
                           [fen for _, fen in rows], you=you, chat=chat.history(game, you),
                           forecast=lines_for(game, player_id))


def seat_snapshots(game_id: str) -> tuple[dict[str | None, events.Snapshot], tuple[str | None, str | None, int]]:
    """Every viewer's :func:`snapshot` of a game from one read of it: ``({seat: snapshot},
    (black player id, white player id, version))``, the snapshots keyed by seat letter (``"B"``,
    ``"W"``: a seat someone holds; a player holding both has the ``"B"`` one, as
    :meth:`Game.seat_of <game.models.Game.seat_of>` seats them) and None for spectators, and the
    seats and version of the same row.  One read of the game, one of its moves, one of each chat
    room someone reads and, in a correspondence game, one of each seat's forecast: a process whose
    sockets of a game open together reads it once, not once a socket
    (:mod:`game.round.snapshots`).

    Raises :class:`ActionError` ``no_such_game``.
    """
    game, rows = _game_and_moves(game_id)
    viewers: dict[Color | None, str | None] = {None: None}
    if game.black_player:
        viewers[Color.BLACK] = game.black_player
    if game.white_player and game.white_player != game.black_player:
        viewers[Color.WHITE] = game.white_player
    lines = chat.histories(game, list(viewers))
    first = events.snapshot(game, store.current_record(game, rows), [notation for notation, _ in rows],
                            [fen for _, fen in rows], you=None,
                            chat={room: lines[room] for room in chat.readable_rooms(game, None)})
    found: dict[str | None, events.Snapshot] = {None: first}
    for seat, player_id in viewers.items():
        if seat is not None:
            found[seat.value] = dataclasses.replace(
                first, you=seat.value, chat={room: lines[room] for room in chat.readable_rooms(game, seat)},
                forecast=lines_for(game, player_id))
    return found, (game.black_player, game.white_player, game.version)


def lines_for(game: Game, player_id: str | None) -> list[list[str]] | None:
    """The forecast ``player_id`` holds in ``game`` for the snapshot: its lines when it is for the
    current position, ``[]`` when there is none, None when ``player_id`` has no seat in the game
    or the game is not a correspondence game waiting or in play (the snapshot then leaves it out)."""
    if game.seat_of(player_id) is None or not game.control.days or game.is_over:
        return None
    lines = (Forecast.objects.filter(game=game, player_id=player_id, ply=game.ply, fen=game.fen)
             .values_list("lines", flat=True).first())
    return [list(line) for line in lines] if lines else []


def seat_of(game_id: str, player_id: str | None) -> Color | None:
    """The seat ``player_id`` holds in game ``game_id``, read without locking
    the game; None for a spectator, no player id or no such game.

    For refusing spectators before any row lock is taken; every action checks the seat
    again under the lock.
    """
    if not player_id:
        return None
    seats = Game.objects.filter(pk=game_id).values_list("black_player", "white_player").first()
    if seats is None:
        return None
    return Color.BLACK if seats[0] == player_id else Color.WHITE if seats[1] == player_id else None


def version(game_id: str) -> int | None:
    """The game's version (``v`` of its last event), or None when there is no such game."""
    return Game.objects.filter(pk=game_id).values_list("version", flat=True).first()


def game_pdn(game_id: str, site: str) -> str:
    """The PDN text of a game (PDN 3.0; tags Event, Site, Date, Black, White, Result, GameType 21,
    FEN when it did not start from the initial position, TimeControl when timed, Ballot when it
    opened with a 3-move ballot; a rated game's Event is "Rated game", with BlackElo/WhiteElo,
    the ratings at its start, and BlackRatingDiff/WhiteRatingDiff once it finished: ``+8``).

    Raises :class:`ActionError` ``no_such_game``.
    """
    try:
        game = Game.objects.get(pk=game_id)
    except Game.DoesNotExist:
        raise no_such_game() from None
    return pdn_of(game, site)


def pdn_of(game: Game, site: str, moves: list[str] | None = None) -> str:
    """The PDN text of a loaded ``game`` (the tags of :func:`game_pdn`); ``moves`` are its stored
    moves' notations, ply 1 first, when the caller read them (else one query reads them): for
    files of many games, whose moves are read in batches."""
    record = store.game_record(game, moves)
    tags = {
        "Event": "Casual game",
        "Site": site,
        "Date": game.created_at.strftime("%Y.%m.%d"),
        "Black": game.black_name or "?",
        "White": game.white_name or "?",
        "Result": game.result,
    }
    if game.control.timed:
        tags["TimeControl"] = game.control.pdn()
    if game.ballot is not None:   # docs/rules.md, "PDN": the opening's plies lead the move text
        tags["Ballot"] = ballots.ballot(game.ballot).pdn_tag()
    if game.rated:   # as lichess's PGN: the ratings at the start, then what the end changed
        tags["Event"] = "Rated game"
        for side, rating, diff in (("Black", game.black_rating, game.black_rating_diff),
                                   ("White", game.white_rating, game.white_rating_diff)):
            if rating is not None:
                tags[f"{side}Elo"] = str(rating)
            if diff is not None:
                tags[f"{side}RatingDiff"] = f"{diff:+d}"
    return rules.game_to_pdn(record, tags)


#: A live or untimed game in which nothing (a move, an offer, an answer) has happened for this
#: many seconds is left off the live list: its players have most likely left.
LIVE_LIST_IDLE_S = 15 * 60


def _recent(now: datetime) -> Q:
    """Games active lately as of ``now``: a move or another change in the last :data:`LIVE_LIST_IDLE_S`,
    or, in correspondence, within the days a move is allowed."""
    recent = (Q(updated_at__gte=now - timedelta(seconds=LIVE_LIST_IDLE_S))
              & ~Q(time_control__in=CORRESPONDENCE))
    for text in CORRESPONDENCE:
        days = TimeControl.parse(text).days or 0
        recent |= Q(time_control=text, updated_at__gte=now - timedelta(days=days))
    return recent


def seated_in_play(limit: int = 5000, now: datetime | None = None) -> tuple[int, set[str]]:
    """The games in play lately (as :func:`live_games` reads them, before its clock checks) and the
    player ids of the people seated in them (the computer left out): ``(games, {player id})``, from
    the ``limit`` most recently active.  One query."""
    rows = list(Game.objects.filter(_recent(now or timezone.now()), status=Game.Status.ACTIVE)
                .order_by("-created_at").values_list("black_player", "white_player")[:limit])
    people = {player for row in rows for player in row if player and not player.startswith(COMPUTER_PREFIX)}
    return len(rows), people


#: A game that moved (or changed otherwise) this many seconds ago at most is "being played" even with
#: nobody's page open on it; after that someone must have it open.
LIVE_LIST_MOVED_S = 5 * 60


def _being_played(game: Game, audience: dict[str, Any], now: datetime) -> bool:
    """Whether ``game`` (in play, on time) is being played now: it moved within :data:`LIVE_LIST_MOVED_S`,
    or a player has it open, or (timed) a spectator does; an untimed game its players have left is not."""
    if game.updated_at >= now - timedelta(seconds=LIVE_LIST_MOVED_S):
        return True
    if audience["online"]["B"] or audience["online"]["W"]:
        return True
    return bool(audience["spectators"]) and TimeControl.parse(game.time_control).timed


def _rating_of(game: Game) -> int | None:
    """The mean of the two ratings a rated game started with, else None."""
    ratings = [r for r in (game.black_rating, game.white_rating) if r is not None]
    return round(sum(ratings) / len(ratings)) if ratings else None


def live_games(limit: int = 50, now: datetime | None = None) -> list[dict[str, Any]]:
    """The games being played now (as of ``now``, default the current time), best rated first (the mean
    of a rated game's two ratings; casual games after, each group most recently started first, then by
    id: the order is the same on every call).

    Read among the games in play with activity in the last :data:`LIVE_LIST_IDLE_S` (15 minutes;
    correspondence: within their days for a move), at most ``4 * limit`` of the most recently started; left
    out: timed games whose side to move is out of time or, in a live game, has let its first-move
    window pass (:meth:`game.clock.Clock.expiry`, from the stored clock: the server decides clocks
    lazily), and games nobody is playing (:func:`_being_played`: no move for
    :data:`LIVE_LIST_MOVED_S` and nobody's page open on it; an untimed game whose players have both
    left is not listed even while spectators watch; ``manage.py housekeeping`` ends such games as
    abandoned after a while).  One query (a second only when many were out of time), then the clocks
    in Python, and who has them open in one Redis round trip (:func:`game.round.presence.audiences`).
    The query walks the ``(status, -created_at)`` index and checks ``updated_at`` on the rows it reads:
    no index holds ``updated_at``, which every move changes, so that a move's update stays HOT
    (``docs/scaling.md``).

    Returns ``[{"id": str, "black": str, "white": str, "ply": int, "spectators": int,
    "control": str, "label": str, "rating": int | None, "black_computer": int | None,
    "white_computer": int | None}]`` (the time control, as text and in words; the computer's level
    for a seat it holds, else None); with Redis unreachable nobody counts as present.
    """
    now = now or timezone.now()
    rows = (Game.objects.filter(_recent(now), status=Game.Status.ACTIVE).order_by("-created_at")
            .only("id", "black_name", "white_name", "black_player", "white_player", "ply",
                  "time_control", "status", "fen", "black_rating", "white_rating",
                  "black_ms", "white_ms", "turn_started_at", "updated_at", "created_at", "ballot",
                  "black_berserk", "white_berserk"))
    games: list[Game] = []
    start, batch, scan = 0, 8 * limit, 4 * limit
    while len(games) < scan:
        read = list(rows[start:start + batch])
        games += [g for g in read if not outages.clock(g).expiry(now)]
        if len(read) < batch:
            break
        start += batch
    audiences = presence.audiences([g.id for g in games[:scan]])
    games = [g for g in games[:scan] if _being_played(g, audiences[g.id], now)]
    games.sort(key=lambda g: (-(_rating_of(g) or 0), -g.created_at.timestamp(), g.id))
    games = games[:limit]
    controls = {g.time_control: TimeControl.parse(g.time_control) for g in games}
    return [{"id": g.id, "black": g.black_name, "white": g.white_name, "ply": g.ply,
             "spectators": audiences[g.id]["spectators"], "control": g.time_control,
             "label": controls[g.time_control].label(), "rating": _rating_of(g),
             "black_computer": computer_level(g.black_player),
             "white_computer": computer_level(g.white_player)} for g in games]


def playing_against_a_person(player_id: str | None) -> bool:
    """True while ``player_id`` holds a seat in a game in play whose other seat is a person (not the
    computer): the analysis board's engine is closed to them until it ends (fair play)."""
    if not player_id:
        return False
    return (Game.objects.filter(status=Game.Status.ACTIVE)
            .filter(Q(black_player=player_id) & ~Q(white_player__startswith=COMPUTER_PREFIX)
                    | Q(white_player=player_id) & ~Q(black_player__startswith=COMPUTER_PREFIX))
            .exists())
