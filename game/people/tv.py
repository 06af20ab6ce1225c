"""TV: one game in play to watch on each channel, chosen by the site (``docs/people.md``, "TV").

A channel is :data:`TOP` (the best-rated game being played, whatever its time control) or a rating
category (:data:`game.ratings.categories.CATEGORIES`: bullet, blitz, rapid, classical,
correspondence).  Its game is the first of :func:`game.round.reads.live_games` (the home page's
"Games being played now": best rated first, then most recently started, then by id) in that
category; untimed games show on :data:`TOP` only.  One read of the live list chooses every channel,
and the choice is kept in the site's cache (Redis) for :data:`CACHE_S` seconds, with the next
:data:`CANDIDATES` - 1 games of each channel: a crowd of TV pages costs one read every few seconds.

A TV page shows its game until it ends, then asks for the channel's game ``after`` the one that
ended (:func:`pick`): never that game again.  When a game shown on a channel ends,
:func:`on_game_ended` drops the kept choice, so the next request reads the list again (the ended
game is no longer in play there).  A request whose ``after`` is still the channel's first game reads
the list again too, at most once every :data:`REFRESH_LOCK_S` seconds across the site, so that asking
again and again cannot cost a read each time.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache

from game.models import Game
from game.ratings.categories import CATEGORIES, category_of
from game.round import reads

#: The channel of the best-rated game of any time control.
TOP = "top"
#: Every channel, :data:`TOP` first, then the categories fastest first.
CHANNELS = (TOP, *CATEGORIES)
#: Seconds the channels' choice is kept in the cache.
CACHE_S = 5
#: Games kept per channel: the first is shown, the next ones are there for a page whose game ended.
CANDIDATES = 3
#: Games of the live list read to fill the channels (the best rated first; ``live_games`` reads
#: among the 4 x this many games in play most recently started).
SCAN = 100
#: Seconds between two reads of the live list forced by requests (``after`` the channel's game).
REFRESH_LOCK_S = 1
_KEY = "tv:channels"
_LOCK_KEY = "tv:refresh"


def _channels_of(control: str | None) -> tuple[str, ...]:
    """The channels a game of time control ``control`` (text) shows on: :data:`TOP` and its category."""
    category = category_of(control) if control else None
    return (TOP, category) if category else (TOP,)


def read_channels() -> dict[str, list[dict[str, Any]]]:
    """Every channel's games, best first, at most :data:`CANDIDATES` each, read now (one read of
    :func:`game.round.reads.live_games`): ``{channel: [{"id", "black", "white", "control",
    "rating"}]}`` (``control`` the time control as text, ``rating`` the mean of a rated game's
    starting ratings or None), every channel of :data:`CHANNELS` present (``[]``: none in play)."""
    found: dict[str, list[dict[str, Any]]] = {channel: [] for channel in CHANNELS}
    for game in reads.live_games(limit=SCAN):
        for channel in _channels_of(game["control"]):
            if len(found[channel]) < CANDIDATES:
                found[channel].append({key: game[key] for key in ("id", "black", "white", "control", "rating")})
    return found


def channels(after: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every channel's games as :func:`read_channels` gives them, from the cache when it holds them
    (read and kept for :data:`CACHE_S` s when not).  When ``after`` (a game id) is the first game of
    a channel, the list is read again unless another request did so within :data:`REFRESH_LOCK_S`
    s.  With the cache unreachable every call reads the list."""
    kept = cache.get(_KEY)
    if isinstance(kept, dict) and all(isinstance(kept.get(channel), list) for channel in CHANNELS):
        shown = {games[0]["id"] for games in kept.values() if games}
        if after not in shown or not cache.add(_LOCK_KEY, 1, REFRESH_LOCK_S):
            return kept
    fresh = read_channels()
    cache.set(_KEY, fresh, CACHE_S)
    return fresh


def pick(channel: str, after: str | None = None) -> dict[str, Any] | None:
    """The game channel ``channel`` shows now (a game of :func:`read_channels`), or None when no
    game of it is in play; with ``after`` (the id of the game a page showed until it ended), never
    that game.  Raises KeyError for a channel not in :data:`CHANNELS`."""
    if channel not in CHANNELS:
        raise KeyError(channel)
    return next((game for game in channels(after)[channel] if game["id"] != after), None)


def on_game_ended(sender: Any, game: Game, **kwargs: Any) -> None:
    """:data:`game.round.signals.game_ended` receiver: a game on a channel's list ended, so the
    channels' choice kept in the cache is dropped (one cache read, and one delete when it was
    there); the next request reads the live list again."""
    kept = cache.get(_KEY)
    if isinstance(kept, dict) and any(g.get("id") == game.id for games in kept.values()
                                      if isinstance(games, list) for g in games if isinstance(g, dict)):
        cache.delete(_KEY)
