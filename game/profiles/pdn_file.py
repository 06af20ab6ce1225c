"""A player's whole archive as one PDN file (``/@/<name>/games.pdn``), read in batches.

A file of 20,000 games must not replay 20,000 games through the rules (1.5 ms each:
half a minute of CPU, and the GIL taken from the server's event loop all that time): the
stored moves were checked when they were played, so each game is written from its stored
row and notations (:func:`game.rules.pdn.moves_to_pdn`), as ``/g/<id>.pdn`` writes it
(:func:`game.round.reads.pdn_of`; ``tests/web/test_pdn_downloads.py`` compares the two
texts of every kind of game).  Its Result is the stored one, which is the rules' own whenever the
rules decided the game (the move that decided it stored it).

A batch is three queries, whatever its size: the player's games as Black after the last
one written, those as White (each an index range scan, ``(black_player, -created_at)``
and ``(white_player, -created_at)``, merged here, oldest first), then their moves
(PostgreSQL aggregates each game's notations into one text; SQLite sends the rows).
Nothing here writes; :mod:`game.profiles.downloads` streams the batches.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Q

from game.clock import TimeControl
from game.models import Game, Move
from game.rules import INITIAL_FEN, Color, Position
from game.rules.ballots import ballot
from game.rules.pdn import moves_to_pdn

#: Games a batch reads and writes at most.
BATCH_GAMES = 200

#: The fields of a game its PDN needs, in this order.
FIELDS = ("id", "created_at", "black_name", "white_name", "result", "time_control", "ballot", "rated",
          "black_rating", "white_rating", "black_rating_diff", "white_rating_diff", "start_fen")

#: Where a file stands: the ``(created_at, id)`` of the last game written; None before the first.
Cursor = tuple[datetime, str] | None


@dataclass(frozen=True)
class Batch:
    """One batch of a player's file: ``text`` its games' PDN, each followed by a blank line (empty
    when there were none), ``games`` how many, ``cursor`` where the next batch starts (None when
    this was the last)."""

    text: str
    games: int
    cursor: Cursor


def _after(cursor: Cursor) -> Q:
    """The games after ``cursor``: a range of ``created_at`` the seat's index starts at, less the
    games of that instant already written (not an OR, which the index could not start at)."""
    if cursor is None:
        return Q()
    at, game_id = cursor
    return Q(created_at__gte=at) & ~Q(created_at=at, id__lte=game_id)


def games_after(player_id: str, cursor: Cursor, limit: int = BATCH_GAMES) -> list[tuple]:
    """The first ``limit`` games ``player_id`` played or plays (in play or finished) after
    ``cursor``, oldest first, as tuples of :data:`FIELDS` (two index range scans)."""
    played = Game.objects.filter(_after(cursor), status__in=(Game.Status.ACTIVE, Game.Status.FINISHED))
    as_black = list(played.filter(black_player=player_id).order_by("created_at", "id")
                    .values_list(*FIELDS)[:limit])
    as_white = list(played.filter(white_player=player_id).exclude(black_player=player_id)
                    .order_by("created_at", "id").values_list(*FIELDS)[:limit])
    return sorted(as_black + as_white, key=lambda row: (row[1], row[0]))[:limit]


def moves_of(game_ids: list[str]) -> dict[str, list[str]]:
    """``{game id: [notation, ...]}`` (ply 1 first) of the games ``game_ids``, in one query: on
    PostgreSQL each game's notations come as one text."""
    found: dict[str, list[str]] = {game_id: [] for game_id in game_ids}
    if not game_ids:
        return found
    if connection.vendor == "postgresql":
        from django.contrib.postgres.aggregates import StringAgg

        rows = (Move.objects.filter(game_id__in=game_ids).order_by().values("game_id")
                .annotate(text=StringAgg("notation", delimiter=" ", order_by="ply"))
                .values_list("game_id", "text"))
        for game_id, text in rows:
            found[game_id] = text.split(" ") if text else []
        return found
    for game_id, notation in (Move.objects.filter(game_id__in=game_ids).order_by("game_id", "ply")
                              .values_list("game_id", "notation")):
        found[game_id].append(notation)
    return found


@functools.lru_cache(maxsize=256)
def _control(text: str) -> TimeControl:
    return TimeControl.parse(text)


@functools.lru_cache(maxsize=256)
def _start(start_fen: str) -> tuple[str, Color]:
    position = Position.from_fen(start_fen) if start_fen else Position.from_fen(INITIAL_FEN)
    return position.fen(), position.turn


def tags_of(row: tuple, site: str) -> dict[str, str]:
    """The PDN tags of a game (a tuple of :data:`FIELDS`), those of
    :func:`game.round.reads.pdn_of`: Event, Site, Date, Black, White, Result; TimeControl when
    timed; Ballot; a rated game's ratings at its start and what its end changed."""
    game = dict(zip(FIELDS, row, strict=True))
    tags = {"Event": "Casual game", "Site": site, "Date": game["created_at"].strftime("%Y.%m.%d"),
            "Black": game["black_name"] or "?", "White": game["white_name"] or "?", "Result": game["result"]}
    control = _control(game["time_control"])
    if control.timed:
        tags["TimeControl"] = control.pdn()
    if game["ballot"] is not None:
        tags["Ballot"] = ballot(game["ballot"]).pdn_tag()
    if game["rated"]:
        tags["Event"] = "Rated game"
        for side in ("black", "white"):
            rating, diff = game[f"{side}_rating"], game[f"{side}_rating_diff"]
            if rating is not None:
                tags[f"{side.title()}Elo"] = str(rating)
            if diff is not None:
                tags[f"{side.title()}RatingDiff"] = f"{diff:+d}"
    return tags


def game_text(row: tuple, moves: list[str], site: str) -> str:
    """The PDN text of one game (a tuple of :data:`FIELDS`) and its stored ``moves``."""
    start_fen, first = _start(row[FIELDS.index("start_fen")])
    tags = tags_of(row, site)
    return moves_to_pdn(moves, start_fen, first, tags["Result"] or "*", tags)


def batch(player_id: str, site: str, cursor: Cursor, limit: int = BATCH_GAMES) -> Batch:
    """The batch of ``player_id``'s file after ``cursor`` (``site`` for the Site tag): at most
    ``limit`` games, three queries.  Synchronous (the database)."""
    rows = games_after(player_id, cursor, limit)
    if not rows:
        return Batch("", 0, None)
    moves = moves_of([row[0] for row in rows])
    text = "".join(game_text(row, moves[row[0]], site) + "\n" for row in rows)
    last: Any = rows[-1]
    return Batch(text, len(rows), (last[1], last[0]) if len(rows) == limit else None)
