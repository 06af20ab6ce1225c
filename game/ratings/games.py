"""Rated games: who may play one, the ratings they start with, and the ratings their end writes.

A game is rated when its creator chose so (:func:`check_rated`): both seats held by accounts
(:class:`game.models.Account`), a timed or correspondence control, never the computer.  When
its second seat is taken it keeps both players' ratings of its category, rounded
(:func:`start_fields`).  When it finishes (not when it is aborted), :func:`settle` updates both
:class:`~game.models.Rating` rows by Glicko-2, one game being one rating period, writes a
:class:`~game.models.RatingChange` per player and returns the game's rating diffs; the caller
(:func:`game.round.finisher.complete`) stores them with the game's end, in the same transaction.
``docs/ratings.md`` has the reasons.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game.clock import TimeControl
from game.errors import ActionError
from game.locks import wait_for_locks_at_most
from game.models import Account, Game, Rating, RatingChange
from game.players import is_computer
from game.ratings import glicko, links, playban
from game.ratings.categories import category_of

#: Glicko-2's system constant: lichess's 0.75 (docs/ratings.md, "Why tau 0.75").
TAU = 0.75
#: A rating is provisional while its deviation is above this (lichess's 110).
PROVISIONAL_DEVIATION = 110.0
#: The bounds kept on a deviation after each game (lichess's 45; a new player's 350 at most).
MIN_DEVIATION, MAX_DEVIATION = 45.0, glicko.NEW_DEVIATION
#: The largest volatility kept (lichess's 0.1).
MAX_VOLATILITY = 0.1

#: Rating periods a day of absence counts for, widening the deviation before the next game
#: (lichess's 0.21436: a year away makes an established rating provisional again).
RATING_PERIODS_PER_DAY = 0.21436

#: Each seat's score for a stored result: ``{result: (Black's, White's)}``.
SCORES = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


def is_account(player_id: str | None) -> bool:
    """Whether ``player_id`` (a seat's player id) is a signed-up account's."""
    return bool(player_id) and Account.objects.filter(player_id=player_id).exists()


def is_provisional(deviation: float) -> bool:
    """Whether a rating with this ``deviation`` (points) is provisional (shown with a ``?``)."""
    return deviation > PROVISIONAL_DEVIATION


def check_rated(control: TimeControl, *player_ids: str) -> str:
    """Check that a game with ``control`` between ``player_ids`` (the seats taken so far) may be
    rated; returns its category (:func:`game.ratings.categories.category_of`).

    Raises :class:`ActionError` ``unrated_control`` (an untimed control), ``sign_in_required``
    (a player id that is no account's: a guest, or the computer), ``playban`` (a player who left
    too many rated games unplayed lately: :mod:`game.ratings.playban`).
    """
    category = category_of(control)
    if category is None:
        raise ActionError("unrated_control", _("Untimed games are not rated: choose a time control for a rated game."))
    for player_id in player_ids:
        if is_computer(player_id) or not is_account(player_id):
            raise ActionError("sign_in_required", _("Rated games are for signed-in players: sign in or sign up first."))
        playban.check(player_id)
    return category


def current(player_id: str, category: str) -> glicko.Glicko:
    """``player_id``'s current rating in ``category`` (a new player's when it has none yet)."""
    row = Rating.objects.filter(player_id=player_id, category=category).first()
    if row is None:
        return glicko.Glicko()
    return glicko.Glicko(row.rating, row.deviation, row.volatility)


def start_fields(black_id: str, white_id: str, time_control: str) -> dict[str, Any]:
    """The stored fields for the start of a rated game between ``black_id`` and ``white_id``
    (player ids) with ``time_control`` (its text): ``black_rating``/``white_rating``, each
    player's current rating in the game's category, rounded to whole points, and
    ``black_provisional``/``white_provisional``, whether each was provisional then.  Read without
    locks: they are what the players saw.  Raises ValueError for an untimed control (never rated)."""
    category = category_of(time_control)
    if category is None:
        raise ValueError("an untimed game is never rated")
    black, white = current(black_id, category), current(white_id, category)
    return {"black_rating": _points(black.rating), "white_rating": _points(white.rating),
            "black_provisional": is_provisional(black.deviation), "white_provisional": is_provisional(white.deviation)}


def _points(rating: float) -> int:
    """A rating as the whole points a game stores (0 to 32767, the column's range)."""
    return max(0, min(32767, round(rating)))


def _bounded(after: glicko.Glicko) -> glicko.Glicko:
    return glicko.Glicko(after.rating, min(MAX_DEVIATION, max(MIN_DEVIATION, after.deviation)),
                         min(MAX_VOLATILITY, after.volatility))


def _after_absence(player: glicko.Glicko, row: Rating, now: datetime) -> glicko.Glicko:
    """``player``'s strength (its ``row``) when it comes back at ``now``: the deviation widened by
    the days since its last rated game of the category (:data:`RATING_PERIODS_PER_DAY`); a new
    player's is left as it is."""
    if not row.games or row.updated_at is None:
        return player
    days = max(0.0, (now - row.updated_at).total_seconds() / 86400.0)
    return glicko.widened(player, days * RATING_PERIODS_PER_DAY)


def settle(game: Game, result: str) -> dict[str, int | str]:
    """Rate the end of the rated ``game`` with ``result`` (``1-0``, ``0-1`` or ``1/2-1/2``):
    update both players' :class:`Rating` rows of the game's category, write one
    :class:`RatingChange` each, and return the game's fields ``black_rating_diff`` and
    ``white_rating_diff`` (whole points: the rounded rating after minus the rounded rating before),
    and ``unrated_reason``: why the end counted for nothing (:func:`game.ratings.links.link`:
    ``"browser"`` or ``"sign_up"``; ``""`` when it counted), which the game's state shows its players.

    Before the game, a rating unused for a while has its deviation widened by the days since its
    last game (:data:`RATING_PERIODS_PER_DAY`, as lichess), so a player back after months moves
    faster.  The game counts as much as :func:`weight` says: not at all between linked accounts
    (diffs 0, nothing written), less for the same two players' games past the first few of a
    day.  Must run inside the transaction that ends the game, which holds its row lock.  The two
    Rating rows are created if missing and locked in the order of their player ids, so two games
    of one player ending at once are rated one after the other, the second from the first's
    result, and never deadlock.  Raises ValueError for another ``result`` or a game whose two
    seats are not two players.
    """
    if result not in SCORES:
        raise ValueError(f"a finished game's result is 1-0, 0-1 or 1/2-1/2, not {result!r}")
    black, white = game.black_player, game.white_player
    if not black or not white or black == white:
        raise ValueError("a rated game is between two players")
    category = category_of(game.time_control)
    if category is None:
        raise ValueError("an untimed game is never rated")
    now = timezone.now()
    linked = links.link(black, white, now)
    if linked is not None:
        return {"black_rating_diff": 0, "white_rating_diff": 0, "unrated_reason": linked}
    counts = _repeats_weight(game, now)
    ids = sorted((black, white))
    rows = _locked_rows(ids, category)
    before = {pid: glicko.Glicko(rows[pid].rating, rows[pid].deviation, rows[pid].volatility) for pid in ids}
    strength = {pid: _bounded(_after_absence(before[pid], rows[pid], now)) for pid in ids}
    black_score, white_score = SCORES[result]
    after = {black: _bounded(glicko.after_game(strength[black], strength[white], black_score, TAU)),
             white: _bounded(glicko.after_game(strength[white], strength[black], white_score, TAU))}
    after = {pid: _weighted(before[pid], new, counts) for pid, new in after.items()}
    diffs = {}
    for pid, score in ((black, black_score), (white, white_score)):
        _count(rows[pid], after[pid], score)
        diffs[pid] = _points(after[pid].rating) - _points(before[pid].rating)
    RatingChange.objects.bulk_create([
        RatingChange(game_id=game.pk, player_id=pid, category=category, before=before[pid].rating,
                     after=after[pid].rating, deviation=after[pid].deviation) for pid in (black, white)])
    return {"black_rating_diff": diffs[black], "white_rating_diff": diffs[white], "unrated_reason": ""}


def _locked_rows(ids: list[str], category: str) -> dict[str, Rating]:
    """Both players' Rating rows of ``category``, made if missing and locked in the order of
    ``ids`` (sorted player ids)."""
    Rating.objects.bulk_create([Rating(player_id=pid, category=category) for pid in ids], ignore_conflicts=True)
    wait_for_locks_at_most()
    rows = {row.player_id: row for row in
            Rating.objects.select_for_update().filter(category=category, player_id__in=ids).order_by("player_id")}
    for pid in ids:
        if pid not in rows:   # deleted meanwhile (an account deleted while we waited): a new one, ours
            rows[pid] = Rating.objects.create(player_id=pid, category=category)
    return rows


def _count(row: Rating, new: glicko.Glicko, score: float) -> None:
    """Store ``new`` on the locked ``row`` and count the game's ``score`` (1, 0 or 0.5)."""
    row.rating, row.deviation, row.volatility = new.rating, new.deviation, new.volatility
    row.games += 1
    if score == 1.0:
        row.wins += 1
    elif score == 0.0:
        row.losses += 1
    else:
        row.draws += 1
    row.save(update_fields=["rating", "deviation", "volatility", "games", "wins", "losses", "draws", "updated_at"])


#: Rated games of the same two players within :data:`REPEAT_WINDOW_S` that count in full; each
#: one past them counts half as much as the one before.
FULL_REPEATS = 3
REPEAT_WINDOW_S = 86400


def weight(game: Game, now: datetime | None = None) -> float:
    """How much the end of the rated ``game`` counts (0 to 1): 0 between accounts that may be one
    person's (:func:`game.ratings.links.link`); else 1 for the first :data:`FULL_REPEATS` rated
    games of its two players against each other within :data:`REPEAT_WINDOW_S`, half as much for
    each one after (``docs/ratings.md``, "Results that count")."""
    now = now or timezone.now()
    if links.link(game.black_player, game.white_player, now) is not None:
        return 0.0
    return _repeats_weight(game, now)


def _repeats_weight(game: Game, now: datetime) -> float:
    """:func:`weight` for two players not linked: the same two players' rated games of the day."""
    black, white = game.black_player, game.white_player
    between = Game.objects.filter(Q(black_player=black, white_player=white) | Q(black_player=white, white_player=black))
    earlier = (RatingChange.objects.filter(player_id=black, game__in=between,
                                           at__gte=now - timedelta(seconds=REPEAT_WINDOW_S))
               .exclude(game_id=game.pk).count())
    return 1.0 if earlier < FULL_REPEATS else 0.5 ** (earlier - FULL_REPEATS + 1)


def _weighted(before: glicko.Glicko, after: glicko.Glicko, counts: float) -> glicko.Glicko:
    """``after`` moved only ``counts`` of the way from ``before`` (rating, deviation, volatility)."""
    if counts >= 1.0:
        return after
    return glicko.Glicko(before.rating + counts * (after.rating - before.rating),
                         before.deviation + counts * (after.deviation - before.deviation),
                         before.volatility + counts * (after.volatility - before.volatility))


def seat_ratings(game: Game) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the state's seats show of a game's ratings, ``(Black's, White's)``: nothing for an
    unrated game or before both seats are taken; else ``rating`` (points when the game started)
    and ``provisional`` (bool), and ``diff`` (points, signed) once the game's end rated it."""
    if not game.rated or game.black_rating is None or game.white_rating is None:
        return {}, {}
    black: dict[str, Any] = {"rating": game.black_rating, "provisional": bool(game.black_provisional)}
    white: dict[str, Any] = {"rating": game.white_rating, "provisional": bool(game.white_provisional)}
    if game.black_rating_diff is not None:
        black["diff"] = game.black_rating_diff
    if game.white_rating_diff is not None:
        white["diff"] = game.white_rating_diff
    return black, white
