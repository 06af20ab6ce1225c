"""Who plays whom: the pairing decision of matchmaking, as a pure function.

A *seek* is one player's wish to play a game in a *pool* (the pools differ by
time control: ``"untimed"`` and each standard live control such as ``"5+0"``).  :func:`pair_seeks` looks at
the seeks waiting in one pool and decides which ones meet and who takes Black.
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

from game.round.clock import STANDARD

#: Longest pool id, in characters; pool ids are lowercase ASCII letters, digits, ``+``, ``-`` and ``_``.
POOL_ID_MAX_CHARS = 32


@dataclass(frozen=True)
class Pool:
    """A pool of seeks that may be paired with one another.

    ``id`` is the pool id used on the lobby socket and in Redis keys (e.g.
    ``"untimed"``, later ``"5+3"``); ``label`` the text shown to players;
    ``time_control`` the time control of the games it starts, as
    :func:`game.round.actions.start_game` takes it (``"untimed"``, ``"5+3"``,
    ``"1d"``).  Offering another time control online is one more entry in
    :data:`POOLS`.
    """

    id: str
    label: str
    time_control: str = "untimed"


#: Every pool players can seek in, by id.
POOLS: dict[str, Pool] = {
    "untimed": Pool(id="untimed", label="Untimed", time_control="untimed"),
    **{tc: Pool(id=tc, label=f"{tc} ({tc.split('+')[0]} min + {tc.split('+')[1]} s a move)",
                time_control=tc) for tc in STANDARD},
}

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
    """

    id: str
    player: str
    name: str
    pool: str
    channel: str
    since: int = 0

    def to_json(self) -> str:
        """The seek as stored in Redis: a JSON object of every field but ``since`` (kept as a score)."""
        data = asdict(self)
        del data["since"]
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, since: int = 0) -> Seek:
        """Read back :meth:`to_json`.  Raises ``ValueError`` (or ``KeyError``) for anything else."""
        data = json.loads(text)
        return cls(id=str(data["id"]), player=str(data["player"]), name=str(data["name"]),
                   pool=str(data["pool"]), channel=str(data["channel"]), since=int(since))


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
    pairing and no pairing joins two seeks of the same player.  Colours are
    drawn with ``rng`` (pass ``random.SystemRandom()`` in production, a seeded
    ``random.Random`` in tests).  The pairings come out in the order they were
    made.  Raises nothing; an empty or one-player pool gives ``[]``.

    >>> seeks = [Seek(id=f"s{i}", player=f"p{i}", name=f"n{i}", pool="untimed", channel="c", since=i)
    ...          for i in range(5)]
    >>> [sorted((p.black.id, p.white.id)) for p in pair_seeks(seeks, random.Random(0))]
    [['s0', 's1'], ['s2', 's3']]
    """
    unpaired: list[Seek] = []  # invariant: all of one player
    pairings: list[Pairing] = []
    seen: set[str] = set()
    for seek in sorted(waiting, key=lambda s: (s.since, s.id)):
        if seek.id in seen:
            continue
        seen.add(seek.id)
        if unpaired and unpaired[0].player != seek.player:
            older = unpaired.pop(0)
            pairings.append(draw_colours(older, seek, rng))
        else:
            unpaired.append(seek)
    return pairings


def draw_colours(a: Seek, b: Seek, rng: random.Random) -> Pairing:
    """Pair ``a`` and ``b`` with Black drawn at random (one draw from ``rng``, each side half the time).

    Raises ``ValueError`` when both seeks belong to the same player.
    """
    if a.player == b.player:
        raise ValueError("two seeks of the same player cannot meet")
    return Pairing(a, b) if rng.random() < 0.5 else Pairing(b, a)
