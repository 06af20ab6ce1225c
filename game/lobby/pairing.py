"""Who plays whom: the pairing decision of matchmaking, as a pure function.

A *seek* is one player's wish to play a game in a *pool* (the pools differ by
time control: ``"untimed"`` and each standard live control such as ``"5+0"``, by the
opening: the free start, or a 3-move ballot in the pools ``"untimed-ballot"``, ``"5+0-ballot"``...,
and by whether their games are rated: ``"5+0-rated"``, ``"5+0-ballot-rated"``...).
:func:`pair_seeks` looks at the seeks waiting in one casual pool and decides which ones meet and
who takes Black; :func:`pair_rated` does the same in a rated pool, where two seeks meet only
within a rating range that widens the longer a seek waits (:func:`rating_range`).
It does no I/O: :mod:`game.lobby.pools` reads the pool from Redis, calls it,
and claims the proposed pairs atomically (a pair is kept only if both seeks are
still waiting when the claim runs, so a decision taken on a stale view is
harmless).

>>> import random
>>> old = Seek(id="s1", player="p-alice", name="alice", pool="untimed", channel="c1", since=1)
>>> tab = Seek(id="s2", player="p-alice", name="alice", pool="untimed", channel="c2", since=2)
>>> new = Seek(id="s3", player="p-bob", name="bob", pool="untimed", channel="c3", since=3)
>>> [sorted((p.black.id, p.white.id)) for p in pair_seeks([new, tab, old], random.Random(1))]
[['s1', 's3']]
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass

from game.clock import TimeControl
from game.ratings.categories import category_of

#: Longest pool id, in characters; pool ids are lowercase ASCII letters, digits, ``+``, ``-`` and ``_``.
POOL_ID_MAX_CHARS = 32


@dataclass(frozen=True)
class Pool:
    """A pool of seeks that may be paired with one another.

    ``id`` is the pool id used on the lobby socket and in Redis keys (e.g.
    ``"untimed"``, later ``"5+3"``); ``label`` the text shown to players;
    ``time_control`` the time control of the games it starts, as
    :func:`game.round.actions.start_game` takes it (``"untimed"``, ``"5+3"``,
    ``"1d"``); ``ballot`` whether its games open with a 3-move ballot drawn at random;
    ``rated`` whether its games are rated (only signed-in accounts may seek there, and two seeks
    meet only within :func:`rating_range`).  Offering another time control online is one more
    entry in :data:`POOLS`.
    """

    id: str
    label: str
    time_control: str = "untimed"
    ballot: bool = False
    rated: bool = False

    @property
    def category(self) -> str | None:
        """The rating category of the pool's games (:func:`game.ratings.categories.category_of`:
        ``"blitz"`` for ``5+0``...); None when untimed."""
        return category_of(self.time_control)


#: The end of the id of a pool whose games open with a 3-move ballot (``"5+3-ballot"``).
BALLOT_SUFFIX = "-ballot"
#: The end of the id of a rated pool (``"5+3-rated"``, ``"5+3-ballot-rated"``).
RATED_SUFFIX = "-rated"

#: The time controls of the quick-pairing buttons of "Play online", fastest first (lichess's grid adapted to
#: checkers): each is a pool, with its 3-move ballot and rated twins.  Other controls are played by invitation.
QUICK_CONTROLS = ("1+0", "2+1", "3+0", "3+2", "5+0", "5+3", "10+0", "10+5", "15+10", "30+0", "1d", "3d")

_FREE_POOLS = [
    Pool(id="untimed", label="Untimed", time_control="untimed"),
    *(Pool(id=tc, label=TimeControl.parse(tc).label(), time_control=tc) for tc in QUICK_CONTROLS),
]

_CASUAL_POOLS = [
    *_FREE_POOLS,
    *(Pool(id=pool.id + BALLOT_SUFFIX, label=f"{pool.label}, 3-move ballot", time_control=pool.time_control,
           ballot=True) for pool in _FREE_POOLS),
]

#: Every pool players can seek in, by id: each time control from the free start, then each again
#: with a 3-move ballot (``ballot``: the game opens with an approved ballot drawn at random,
#: docs/matchmaking.md), then the rated twin of each of those with a rating category (every timed
#: control; untimed games are never rated).  Each is a pool of its own: its seeks meet only one
#: another.
POOLS: dict[str, Pool] = {
    **{pool.id: pool for pool in _CASUAL_POOLS},
    **{pool.id + RATED_SUFFIX: Pool(id=pool.id + RATED_SUFFIX, label=f"{pool.label}, rated",
                                    time_control=pool.time_control, ballot=pool.ballot, rated=True)
       for pool in _CASUAL_POOLS if pool.category is not None},
}


def rated_twin(pool_id: str) -> str | None:
    """The id of the rated twin of the casual pool ``pool_id`` (``"5+0"`` -> ``"5+0-rated"``), or
    None when it has none (untimed pools, unknown ids, ids already rated)."""
    twin = pool_id + RATED_SUFFIX
    return twin if pool_id in POOLS and not POOLS[pool_id].rated and twin in POOLS else None

#: The pool used when a seek names none.
DEFAULT_POOL = "untimed"


def is_pool_id(text: str) -> bool:
    """True when ``text`` has the shape of a pool id (it need not be a pool of :data:`POOLS`).

    >>> is_pool_id("untimed"), is_pool_id("5+3"), is_pool_id("Untimed"), is_pool_id("")
    (True, True, False, False)
    """
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789+-_")
    return 0 < len(text) <= POOL_ID_MAX_CHARS and set(text) <= allowed


@dataclass(frozen=True)
class Seek:
    """One player's wish to play, waiting in a pool.

    ``id``: the seek's id (32 hex digits when made by the lobby).
    ``player``: the player id of the session that seeks; two seeks of one
    player (two tabs of one browser) never meet.
    ``name``: the display name the game will show (already checked).
    ``pool``: the pool id.
    ``channel``: the channel-layer name of the lobby socket holding the seek,
    where the news of a pairing is sent (that socket may live in another
    server process).
    ``since``: arrival time in microseconds on the Redis server's clock, set
    when the seek enters the pool; older seeks are paired first.
    ``rating``: in a rated pool, the seeker's rating in the pool's category when the seek was
    made (rounded Glicko points, 1500 without a rating yet); None in a casual pool.
    ``avoid``: the player ids the seeker blocks (:class:`game.models.Block`, at most 500), then
    those who block the seeker (at most 500 more): the seek never meets a seek of theirs, nor they
    it (:func:`avoids`, checked both ways), and the seek list does not show it to them.
    """

    id: str
    player: str
    name: str
    pool: str
    channel: str
    since: int = 0
    rating: int | None = None
    avoid: tuple[str, ...] = ()

    def to_json(self) -> str:
        """The seek as stored in Redis: a JSON object of every field but ``since`` (kept as a score)."""
        data = asdict(self)
        del data["since"]
        if data["rating"] is None:
            del data["rating"]
        if data["avoid"]:
            data["avoid"] = list(data["avoid"])
        else:
            del data["avoid"]
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, since: int = 0) -> Seek:
        """Read back :meth:`to_json`.  Raises ``ValueError`` (or ``KeyError``) for anything else."""
        data = json.loads(text)
        rating = data.get("rating")
        avoid = data.get("avoid") or []
        if not isinstance(avoid, list):
            raise ValueError("avoid is not a list")
        return cls(id=str(data["id"]), player=str(data["player"]), name=str(data["name"]),
                   pool=str(data["pool"]), channel=str(data["channel"]), since=int(since),
                   rating=None if rating is None else int(rating), avoid=tuple(str(p) for p in avoid))


def avoids(a: Seek, b: Seek) -> bool:
    """Whether seeks ``a`` and ``b`` may never meet because either's player blocks the other's
    (the claim script checks the same in Redis).

    >>> a = Seek(id="a", player="pa", name="a", pool="untimed", channel="c", avoid=("pb",))
    >>> b = Seek(id="b", player="pb", name="b", pool="untimed", channel="c")
    >>> avoids(a, b), avoids(b, a), avoids(b, b)
    (True, True, False)
    """
    return b.player in a.avoid or a.player in b.avoid


@dataclass(frozen=True)
class Pairing:
    """Two seeks that meet: ``black`` moves first.  The two seeks belong to different players."""

    black: Seek
    white: Seek

    def __iter__(self) -> Iterator[Seek]:
        yield self.black
        yield self.white


def pair_seeks(waiting: Iterable[Seek], rng: random.Random) -> list[Pairing]:
    """Decide which of the ``waiting`` seeks of one pool meet, and who takes Black.

    Seeks are taken oldest first (by ``since``, then ``id``); each is paired
    with the oldest seek not yet paired that belongs to another player, so
    nobody waits while a seek of another player could meet them: whatever is
    left unpaired belongs to one player only.  Every seek appears in at most one
    pairing and no pairing joins two seeks of the same player, nor two that :func:`avoids`
    (a blocked player's seek waits for another).  Colours are
    drawn with ``rng`` (pass ``random.SystemRandom()`` in production, a seeded
    ``random.Random`` in tests).  The pairings come out in the order they were
    made.  Raises nothing; an empty or one-player pool gives ``[]``.

    >>> seeks = [Seek(id=f"s{i}", player=f"p{i}", name=f"n{i}", pool="untimed", channel="c", since=i)
    ...          for i in range(5)]
    >>> [sorted((p.black.id, p.white.id)) for p in pair_seeks(seeks, random.Random(0))]
    [['s0', 's1'], ['s2', 's3']]
    """
    unpaired: list[Seek] = []  # oldest first; any two of them are of one player or avoid each other
    pairings: list[Pairing] = []
    seen: set[str] = set()
    for seek in sorted(waiting, key=lambda s: (s.since, s.id)):
        if seek.id in seen:
            continue
        seen.add(seek.id)
        older = next((s for s in unpaired if s.player != seek.player and not avoids(s, seek)), None)
        if older is not None:
            unpaired.remove(older)
            pairings.append(draw_colours(older, seek, rng))
        else:
            unpaired.append(seek)
    return pairings


#: The rating range of a rated seek that has just arrived: it meets seeks at most this many points
#: away (lichess's pools start narrow and widen with the wait).
RANGE_START = 100
#: Points the range widens by for every :data:`RANGE_STEP_S` seconds of waiting.
RANGE_STEP = 50
#: Seconds of waiting per widening step.
RANGE_STEP_S = 5
#: The widest range: 500 points, reached after 40 s; farther apart players never meet in a rated pool
#: (a casual pool pairs anyone).
RANGE_MAX = 500


def rating_range(waited_us: int) -> int:
    """How many rating points away a rated seek that has waited ``waited_us`` microseconds accepts
    an opponent: :data:`RANGE_START` (100), plus :data:`RANGE_STEP` (50) for each whole
    :data:`RANGE_STEP_S` (5) seconds of waiting, at most :data:`RANGE_MAX` (500).  A negative wait
    counts as none.  The claim script in :mod:`game.lobby.pools` checks the same rule in Redis.

    >>> [rating_range(s * 1_000_000) for s in (0, 4, 5, 20, 40, 600)]
    [100, 100, 150, 300, 500, 500]
    """
    steps = max(0, waited_us) // (RANGE_STEP_S * 1_000_000)
    return min(RANGE_MAX, RANGE_START + RANGE_STEP * steps)


def in_range(a: Seek, b: Seek, now_us: int) -> bool:
    """True when rated seeks ``a`` and ``b`` may meet at ``now_us`` (µs, the clock of ``since``):
    their ratings differ by at most the range of the one that has waited longer (the wider range:
    someone who has waited 20 s meets a newcomer 300 points away at once).  A seek without a
    rating never meets.
    """
    if a.rating is None or b.rating is None:
        return False
    widest = max(rating_range(now_us - a.since), rating_range(now_us - b.since))
    return abs(a.rating - b.rating) <= widest


def pair_rated(waiting: Iterable[Seek], now_us: int, rng: random.Random) -> list[Pairing]:
    """Decide which of the ``waiting`` seeks of one rated pool meet at ``now_us``, and who takes Black.

    ``now_us``: the time in microseconds on the clock of the seeks' ``since`` (the Redis server's;
    tests pass any).  Seeks are taken oldest first (by ``since``, then ``id``); each meets the
    *nearest in rating* of the seeks not yet paired that belong to another player and are
    :func:`in_range` (equal gaps: the older one).  A seek with nobody in range waits; the ranges
    widen with time, so a later call may pair it.  Every seek appears in at most one pairing,
    never with a seek of the same player nor one it :func:`avoids`; colours are drawn with ``rng``.  Raises nothing.

    >>> a = Seek(id="a", player="pa", name="a", pool="5+0-rated", channel="c", since=0, rating=1500)
    >>> b = Seek(id="b", player="pb", name="b", pool="5+0-rated", channel="c", since=0, rating=1800)
    >>> pair_rated([a, b], 0, random.Random(0)), len(pair_rated([a, b], 20_000_000, random.Random(0)))
    ([], 1)
    """
    unique: dict[str, Seek] = {}
    for seek in waiting:
        if seek.rating is not None:
            unique.setdefault(seek.id, seek)
    oldest_first = sorted(unique.values(), key=lambda s: (s.since, s.id))
    by_rating = sorted(oldest_first, key=lambda s: (s.rating, s.since, s.id))
    position = {seek.id: i for i, seek in enumerate(by_rating)}
    taken: set[str] = set()
    pairings: list[Pairing] = []
    for seek in oldest_first:
        if seek.id in taken:
            continue
        best = _nearest_in_range(seek, by_rating, position[seek.id], taken, now_us)
        if best is not None:
            taken.update((seek.id, best.id))
            pairings.append(draw_colours(seek, best, rng))
    return pairings


def _nearest_in_range(seek: Seek, by_rating: list[Seek], at: int, taken: set[str], now_us: int) -> Seek | None:
    """The seek nearest to ``seek`` in rating (then oldest) that may meet it, looking outwards from
    its place ``at`` in ``by_rating``; no farther than :data:`RANGE_MAX`."""
    assert seek.rating is not None
    best: Seek | None = None
    best_key: tuple[int, int, str] | None = None
    for step in (-1, 1):
        i = at + step
        while 0 <= i < len(by_rating):
            other = by_rating[i]
            i += step
            assert other.rating is not None
            gap = abs(other.rating - seek.rating)
            if gap > RANGE_MAX or (best_key is not None and gap > best_key[0]):
                break
            if (other.id in taken or other.player == seek.player or avoids(seek, other)
                    or not in_range(seek, other, now_us)):
                continue
            key = (gap, other.since, other.id)
            if best_key is None or key < best_key:
                best, best_key = other, key
    return best


def draw_colours(a: Seek, b: Seek, rng: random.Random) -> Pairing:
    """Pair ``a`` and ``b`` with Black drawn at random (one draw from ``rng``, each side half the time).

    Raises ``ValueError`` when both seeks belong to the same player.
    """
    if a.player == b.player:
        raise ValueError("two seeks of the same player cannot meet")
    return Pairing(a, b) if rng.random() < 0.5 else Pairing(b, a)
