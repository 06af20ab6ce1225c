"""What the profile, archive, "My games" and leaderboard pages read.  No locks, no writes.

A player is a player id (the id a browser's session or an account's seats hold); an account gives
it a name (``user.username``) and a profile page.  Games keep the names their seats had, so the
games of a deleted account still show its name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Case, Count, F, Q, QuerySet, When, Window
from django.db.models.functions import RowNumber

from game.clock import TimeControlError
from game.i18n import seat_name
from game.models import Account, Game, Rating, RatingChange
from game.ratings import categories
from game.ratings.categories import CATEGORIES
from game.ratings.games import PROVISIONAL_DEVIATION

#: A rating whose deviation is above this is provisional (shown with "?", off the leaderboards).
PROVISIONAL_RD = PROVISIONAL_DEVIATION
#: Players on each leaderboard.
LEADERBOARD_SIZE = 50
#: Rating changes a profile's chart draws per category at most (a longer history is thinned evenly).
CHART_POINTS = 500

WON, LOST, DRAWN = "won", "lost", "drawn"
#: A player's results, for the archive's filter and the lists.
RESULTS = (WON, LOST, DRAWN)


def category_of(time_control: str) -> str | None:
    """The rating category of a stored time control (:func:`game.ratings.categories.category_of`),
    or None for untimed controls and text that is no time control.

    >>> category_of("3+2"), category_of("3d"), category_of("untimed"), category_of("zzz")
    ('blitz', 'correspondence', None, None)
    """
    try:
        return categories.category_of(time_control)
    except TimeControlError:
        return None


def account_named(username: str) -> Account | None:
    """The account whose user name is ``username`` (case-insensitive), with its user, or None."""
    if not isinstance(username, str) or not username or "\x00" in username or len(username) > 150:
        return None
    return Account.objects.select_related("user").filter(user__username__iexact=username).first()


def names_of(player_ids: Iterable[str]) -> dict[str, str]:
    """``{player id: account user name}`` for those of ``player_ids`` that have an account (one query)."""
    ids = {pid for pid in player_ids if pid}
    if not ids:
        return {}
    return dict(Account.objects.filter(player_id__in=ids).values_list("player_id", "user__username"))


def seats_q(player_id: str) -> Q:
    """The games in which ``player_id`` holds a seat."""
    return Q(black_player=player_id) | Q(white_player=player_id)


def result_q(player_id: str, result: str) -> Q:
    """The finished games ``player_id`` won, lost or drew (``result`` one of :data:`RESULTS`).
    Raises ValueError for another ``result``."""
    if result == WON:
        return Q(black_player=player_id, result="1-0") | Q(white_player=player_id, result="0-1")
    if result == LOST:
        return Q(black_player=player_id, result="0-1") | Q(white_player=player_id, result="1-0")
    if result == DRAWN:
        return Q(result="1/2-1/2")
    raise ValueError(f"unknown result {result!r}")


@dataclass(frozen=True)
class GameLine:
    """One game as a player's lists show it: ``side`` ``"B"``/``"W"`` the player's seat,
    ``outcome`` one of :data:`RESULTS` or None while undecided, ``category`` per :func:`category_of`,
    ``rating_diff`` the player's rating change (points) in a rated game once it ended, ``your_turn``
    while the game is in play and the player is to move."""

    game: Game
    side: str
    opponent_id: str
    opponent_name: str
    opponent_account: str | None
    outcome: str | None
    category: str | None
    rating_diff: int | None
    your_turn: bool

    @property
    def correspondence(self) -> bool:
        return self.category == "correspondence"


def game_line(game: Game, player_id: str, accounts: dict[str, str]) -> GameLine:
    """:class:`GameLine` of ``game`` for ``player_id`` (who holds a seat in it); ``accounts`` as
    :func:`names_of` gives for the opponents."""
    black = game.black_player == player_id
    side = "B" if black else "W"
    opponent_id = game.white_player if black else game.black_player
    opponent_name = seat_name(opponent_id, (game.white_name if black else game.black_name) or "?")
    outcome = None
    if game.status == Game.Status.FINISHED:
        if game.result == "1/2-1/2":
            outcome = DRAWN
        elif game.result in ("1-0", "0-1"):
            outcome = WON if (game.result == "1-0") == black else LOST
    return GameLine(
        game=game, side=side, opponent_id=opponent_id, opponent_name=opponent_name,
        opponent_account=accounts.get(opponent_id), outcome=outcome, category=category_of(game.time_control),
        rating_diff=game.black_rating_diff if black else game.white_rating_diff,
        your_turn=game.status == Game.Status.ACTIVE and game.fen[:1] == side,
    )


def game_lines(games: Iterable[Game], player_id: str) -> list[GameLine]:
    """:func:`game_line` of each game, the opponents' account names read in one query."""
    games = list(games)
    accounts = names_of(g.white_player if g.black_player == player_id else g.black_player for g in games)
    return [game_line(g, player_id, accounts) for g in games]


def played_games(player_id: str) -> QuerySet[Game]:
    """The games ``player_id`` played or plays (in play or finished; not waiting, not aborted), newest first."""
    return (Game.objects.filter(seats_q(player_id), status__in=(Game.Status.ACTIVE, Game.Status.FINISHED))
            .order_by("-created_at", "-id"))


# --- the profile ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RatingLine:
    """One category's rating on a profile: ``rating`` and ``deviation`` rounded, ``provisional``
    while the deviation is above :data:`PROVISIONAL_RD`."""

    category: str
    rating: int
    deviation: int
    provisional: bool
    games: int
    wins: int
    losses: int
    draws: int


def ratings(player_id: str) -> list[RatingLine]:
    """The player's ratings, in :data:`CATEGORIES` order, for the categories it has a rating in."""
    rows = {r.category: r for r in Rating.objects.filter(player_id=player_id)}
    return [RatingLine(category=c, rating=round(r.rating), deviation=round(r.deviation),
                       provisional=r.deviation > PROVISIONAL_RD, games=r.games, wins=r.wins,
                       losses=r.losses, draws=r.draws)
            for c in CATEGORIES if (r := rows.get(c)) is not None]


@dataclass(frozen=True)
class ChartPoint:
    """One rated game on the chart: ``x``/``y`` in the chart's coordinates, ``rating`` rounded."""

    x: float
    y: float
    rating: int
    at: datetime


@dataclass(frozen=True)
class ChartLine:
    """One category's line: ``points`` oldest first, ``polyline`` their SVG ``points`` text."""

    category: str
    points: list[ChartPoint]

    @property
    def polyline(self) -> str:
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


@dataclass(frozen=True)
class Chart:
    """A rating-history chart, drawn as an inline SVG of ``width`` by ``height`` units: one line
    per category, ``low``/``high`` the ratings at the bottom and the top, ``ticks`` ``[(y, rating)]``;
    ``first``/``last`` the times of the oldest and newest change, written under the ends of the
    time axis at ``x_first``/``x_last``, height ``axis_y``."""

    width: int
    height: int
    left: int
    lines: list[ChartLine]
    low: int
    high: int
    ticks: list[tuple[float, int]]
    first: datetime
    last: datetime
    x_first: float
    x_last: float
    axis_y: float


#: The chart's box (SVG units): width, height, the left margin of the rating labels, the padding
#: around the lines and the bottom margin of the date labels.
CHART_WIDTH, CHART_HEIGHT, CHART_LEFT, CHART_PAD, CHART_BOTTOM = 600, 240, 44, 10, 28


def chart_rows(player_id: str, category: str, total: int | None = None) -> list[tuple[datetime, float]]:
    """``[(at, rating after)]`` of ``player_id``'s rated games of ``category``, oldest first, from its
    first game to its last: every one while there are at most :data:`CHART_POINTS`, else evenly
    thinned to about that many (every n-th, the first and the last kept), numbered and thinned in
    the database (one query on the ``(player_id, category, at)`` index, and one count unless
    ``total``, how many there are, is given)."""
    changes = RatingChange.objects.filter(player_id=player_id, category=category)
    total = changes.count() if total is None else total
    if total == 0:
        return []
    step = -(-total // CHART_POINTS)
    if step == 1:
        return list(changes.order_by("at", "id").values_list("at", "after"))
    numbered = changes.annotate(number=Window(RowNumber(), order_by=(F("at").asc(), F("id").asc())))
    kept = numbered.annotate(slot=(F("number") - 1) % step).filter(Q(slot=0) | Q(number=total))
    return list(kept.order_by("at", "id").values_list("at", "after"))


def chart(player_id: str) -> Chart | None:
    """The rating-history chart of ``player_id`` from its :class:`RatingChange` rows (the rating
    after each rated game, from its first to its last, :func:`chart_rows`), or None when it has none.

    x is the time of the change (all lines share the axis; evenly spaced when all changes share
    one moment), y the rating, both scaled into the chart's box.
    """
    totals = dict(RatingChange.objects.filter(player_id=player_id).order_by().values("category")
                  .annotate(n=Count("id")).values_list("category", "n"))
    by_category = {category: chart_rows(player_id, category, totals[category])
                   for category in CATEGORIES if totals.get(category)}
    if not by_category:
        return None
    every = [row for rows in by_category.values() for row in rows]
    first, last = min(at for at, _ in every), max(at for at, _ in every)
    low_value, high_value = min(r for _, r in every), max(r for _, r in every)
    low, high = int(low_value // 50 * 50), int(-(-high_value // 50) * 50)
    if high - low < 100:
        middle = (low + high) // 2
        low, high = middle - 50, middle + 50
    span = (last - first).total_seconds()
    inner_w = CHART_WIDTH - CHART_LEFT - 2 * CHART_PAD
    inner_h = CHART_HEIGHT - CHART_PAD - CHART_BOTTOM

    def y_of(rating: float) -> float:
        return CHART_PAD + inner_h * (high - rating) / (high - low)

    lines = []
    for category, rows in by_category.items():
        points = []
        for index, (at, rating) in enumerate(rows):
            if span > 0:
                share = (at - first).total_seconds() / span
            else:
                share = index / (len(rows) - 1) if len(rows) > 1 else 0.5
            points.append(ChartPoint(x=CHART_LEFT + CHART_PAD + inner_w * share, y=y_of(rating),
                                     rating=round(rating), at=at))
        lines.append(ChartLine(category=category, points=points))
    step = max(50, (high - low) // 4 // 50 * 50)
    ticks = [(y_of(value), value) for value in range(low, high + 1, step)]
    return Chart(width=CHART_WIDTH, height=CHART_HEIGHT, left=CHART_LEFT, lines=lines, low=low, high=high,
                 ticks=ticks, first=first, last=last, x_first=CHART_LEFT + CHART_PAD,
                 x_last=CHART_WIDTH - CHART_PAD, axis_y=CHART_HEIGHT - CHART_BOTTOM / 2 + 4)


@dataclass(frozen=True)
class OpponentLine:
    """The player's results against one opponent: ``name`` the opponent's name in the latest
    game, ``account`` its account name (None for a guest, the computer or a deleted account)."""

    player_id: str
    name: str
    account: str | None
    games: int
    wins: int
    losses: int
    draws: int


def opponents(player_id: str, limit: int = 10) -> list[OpponentLine]:
    """The ``limit`` opponents ``player_id`` finished most games against, most games first, with
    the player's wins, losses and draws (one grouped query, one per opponent for its latest name,
    one for the account names)."""
    finished = Game.objects.filter(seats_q(player_id), status=Game.Status.FINISHED).exclude(
        black_player="").exclude(white_player="")
    rows = list(
        finished.annotate(opponent=Case(When(black_player=player_id, then=F("white_player")),
                                        default=F("black_player")))
        .values("opponent")
        .annotate(games=Count("id"), wins=Count("id", filter=result_q(player_id, WON)),
                  losses=Count("id", filter=result_q(player_id, LOST)),
                  draws=Count("id", filter=result_q(player_id, DRAWN)))
        .order_by("-games", "opponent")[:limit])
    accounts = names_of(row["opponent"] for row in rows)
    lines = []
    for row in rows:
        opponent = row["opponent"]
        latest = (finished.filter(Q(black_player=opponent) | Q(white_player=opponent))
                  .order_by("-created_at").values_list("black_player", "black_name", "white_name").first())
        name = "?"
        if latest is not None:
            name = seat_name(opponent, (latest[1] if latest[0] == opponent else latest[2]) or "?")
        lines.append(OpponentLine(player_id=opponent, name=name, account=accounts.get(opponent),
                                  games=row["games"], wins=row["wins"], losses=row["losses"],
                                  draws=row["draws"]))
    return lines


def recent_games(player_id: str, limit: int = 10) -> list[GameLine]:
    """The player's ``limit`` latest games (:func:`played_games`)."""
    return game_lines(played_games(player_id)[:limit], player_id)


# --- the archive ---------------------------------------------------------------------------------


def archive(player_id: str, *, result: str = "", opponent: str = "", category: str = "",
            rated: bool | None = None) -> QuerySet[Game]:
    """The player's games (:func:`played_games`) with the archive's filters: ``result`` one of
    :data:`RESULTS` (finished games only) or ``""``; ``opponent`` part of the opponent's name
    (case-insensitive) or ``""``; ``category`` one of :data:`CATEGORIES`, ``"untimed"`` or ``""``;
    ``rated`` True, False or None for both.  Raises ValueError for another result or category."""
    games = played_games(player_id)
    if result:
        games = games.filter(result_q(player_id, result), status=Game.Status.FINISHED)
    if opponent:
        games = games.filter(Q(black_player=player_id, white_name__icontains=opponent)
                             | Q(white_player=player_id, black_name__icontains=opponent))
    if category:
        if category != "untimed" and category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}")
        wanted = None if category == "untimed" else category
        controls = set(Game.objects.filter(seats_q(player_id)).values_list("time_control", flat=True).distinct())
        games = games.filter(time_control__in=[c for c in controls if category_of(c) == wanted])
    if rated is not None:
        games = games.filter(rated=rated)
    return games


# --- my games and the badge --------------------------------------------------------------------


def your_turn_q(player_id: str) -> Q:
    """Games in play in which ``player_id`` is to move (the side to move is the first letter of
    the PDN FEN: ``B:W...``)."""
    return Q(status=Game.Status.ACTIVE) & (Q(black_player=player_id, fen__startswith="B")
                                           | Q(white_player=player_id, fen__startswith="W"))


def waiting_count(player_id: str | None) -> int:
    """How many games wait for ``player_id``'s move (0 without a player id, and then no query)."""
    if not player_id:
        return 0
    return Game.objects.filter(your_turn_q(player_id)).count()


def my_games(player_id: str, finished: int = 30) -> tuple[list[GameLine], list[GameLine]]:
    """``(ongoing, finished)`` games of ``player_id``: the games in play, those where it is to move
    first (correspondence ones above all), then the others, then the games still waiting for an
    opponent, each group most recently active first (at most 200 in all); and its latest
    ``finished`` finished games, newest first."""
    ongoing = game_lines(Game.objects.filter(seats_q(player_id), status__in=(Game.Status.ACTIVE, Game.Status.WAITING))
                         .order_by("-updated_at", "-id")[:200], player_id)
    ongoing.sort(key=lambda line: (line.game.status == Game.Status.WAITING, not line.your_turn,
                                   not (line.your_turn and line.correspondence)))
    done = game_lines(Game.objects.filter(seats_q(player_id), status=Game.Status.FINISHED)
                      .order_by("-created_at", "-id")[:finished], player_id)
    return ongoing, done


# --- leaderboards --------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderLine:
    """One player on a leaderboard: ``rank`` from 1, ``name`` its account name."""

    rank: int
    name: str
    rating: int
    deviation: int
    games: int


def leaderboard(category: str) -> list[LeaderLine]:
    """The :data:`LEADERBOARD_SIZE` best-rated players of ``category`` with an account and a
    non-provisional rating (deviation at most :data:`PROVISIONAL_RD`), best first (two queries).
    Raises ValueError for an unknown category."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}")
    rows = list(Rating.objects.filter(category=category, deviation__lte=PROVISIONAL_RD, games__gt=0,
                                      player_id__in=Account.objects.values("player_id"))
                .order_by("-rating", "player_id")[:LEADERBOARD_SIZE])
    accounts = names_of(r.player_id for r in rows)
    return [LeaderLine(rank=index, name=accounts[r.player_id], rating=round(r.rating),
                       deviation=round(r.deviation), games=r.games)
            for index, r in enumerate((r for r in rows if r.player_id in accounts), start=1)]
