"""Playing a visible seek at once: the seek list's click, through the pools' atomic claim.

A page that shows the seeks (:mod:`game.lobby.seeklist`) lets its player click one; the socket then
sends ``seek`` with the seek's pool and ``accept``: its id.  :func:`play_seek` reads the pool, checks
the seek is still there, is another player's, neither player blocks the other and, in a rated pool, is within range now
(:func:`game.lobby.pairing.in_range`, as the settling decides), adds the player's own seek and
claims the pair with the pools' ``CLAIM`` script, which takes it only if both seeks still wait,
belong to different players and are within range: the same atomic step as every pairing, so two
players clicking one seek at once get one game between them, never two.  The game is then made
and both players told as for any pairing (:func:`game.lobby.paired.start_paired_game`).

A refused click stores nothing: it is checked before the player's seek enters the pool, and a
claim lost to a race takes that seek out again.
"""

from __future__ import annotations

import contextlib
import math
import random
from dataclasses import replace

from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.i18n import lazy_text
from game.lobby import pools
from game.lobby.paired import start_paired_game
from game.lobby.pairing import (
    POOLS,
    RANGE_MAX,
    RANGE_START,
    RANGE_STEP,
    RANGE_STEP_S,
    Seek,
    avoids,
    draw_colours,
    in_range,
    rating_range,
)
from game.lobby.pools import MatchmakingUnavailable

_rng = random.SystemRandom()

GONE_MESSAGE = _("That seek is gone: its player found a game or stopped looking.")


def wait_for_range_s(mine: Seek, theirs: Seek, now_us: int) -> int | None:
    """Seconds (rounded up) until two rated seeks may meet if neither leaves: the range of the one
    that has waited longer must cover their gap (:func:`game.lobby.pairing.in_range`); 0 when they
    may meet now, None when never (their gap is over :data:`game.lobby.pairing.RANGE_MAX`).

    >>> a = Seek(id="a", player="pa", name="a", pool="5+0-rated", channel="c", since=0, rating=1500)
    >>> b = Seek(id="b", player="pb", name="b", pool="5+0-rated", channel="c", since=0, rating=1800)
    >>> wait_for_range_s(a, b, 0), wait_for_range_s(a, b, 12_000_000), wait_for_range_s(a, b, 20_000_000)
    (20, 8, 0)
    """
    assert mine.rating is not None and theirs.rating is not None
    gap = abs(mine.rating - theirs.rating)
    if gap > RANGE_MAX:
        return None
    if in_range(mine, theirs, now_us):
        return 0
    steps = math.ceil((gap - RANGE_START) / RANGE_STEP)
    longer = max(0, now_us - min(mine.since, theirs.since))
    return max(0, math.ceil(steps * RANGE_STEP_S - longer / 1_000_000))


def _check(mine: Seek, target: Seek | None, now_us: int) -> Seek:
    """The seek the click may play, or ActionError: gone, one's own, or out of rating range."""
    if target is None:
        raise ActionError("seek_gone", GONE_MESSAGE)
    if target.player == mine.player:
        raise ActionError("own_seek", _("That is your own seek: wait for someone to play it."))
    if avoids(mine, target):
        raise ActionError("blocked", _("You cannot play this seek."))
    if not POOLS[mine.pool].rated:
        return target
    arriving = replace(mine, since=now_us)
    wait = wait_for_range_s(arriving, target, now_us)
    if wait is None:
        raise ActionError("out_of_range", lazy_text(
            _("%(name)s (%(rating)s) is %(gap)s points from your rating %(mine)s: more than %(max)s, so no "
              "rated game between you; play them casual."),
            name=target.name, rating=target.rating, gap=abs((target.rating or 0) - (mine.rating or 0)),
            mine=mine.rating, max=RANGE_MAX))
    if wait > 0:
        raise ActionError("out_of_range", lazy_text(
            _("%(name)s (%(rating)s) accepts ratings within %(range)s points for now, and yours is %(mine)s: "
              "their range reaches you in about %(seconds)s s."),
            name=target.name, rating=target.rating, mine=mine.rating,
            range=rating_range(now_us - target.since), seconds=wait))
    return target


async def play_seek(mine: Seek, target_id: str) -> bool:
    """Meet the waiting seek ``target_id`` of ``mine``'s pool with ``mine`` (a new seek of the clicking
    socket, not yet in the pool), at once: the game is created and both sockets sent ``lobby.paired``.

    Returns True when the pair was claimed here, False when ``mine`` was paired meanwhile by a
    settling with another seek (``lobby.paired`` is on its way all the same).  Raises
    :class:`ActionError` ``seek_gone`` (not waiting any more, or taken first by someone else),
    ``own_seek`` (a seek of the same player), ``blocked`` (either player blocks the other:
    docs/people.md, "Blocks"), ``out_of_range`` (a rated pool, ratings too far apart
    for now: the message says when their range reaches the player, or that it never will), and
    :class:`MatchmakingUnavailable`; in each case ``mine`` is not left in the pool.
    """
    mm = pools.from_settings()
    now_us, waiting = await mm.snapshot_at(mine.pool)
    target = _check(mine, next((seek for seek in waiting if seek.id == target_id), None), now_us)
    added, _status = await mm.add(mine)
    try:
        taken, _waiting = await mm.claim(mine.pool, [draw_colours(target, added, _rng)])
    except MatchmakingUnavailable:
        with contextlib.suppress(MatchmakingUnavailable):
            await mm.cancel(added)
        raise
    if not taken:
        if (await mm.cancel(added)).state == "claimed":
            return False
        raise ActionError("seek_gone", GONE_MESSAGE)
    await start_paired_game(taken[0])
    return True
