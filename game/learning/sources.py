"""Where a puzzle comes from, in words: the puzzle page's "From" line.

The puzzles mined from recorded games (:mod:`game.learning.mining`, ``game/learning/data``) keep
their origin as one line of data, for example ``london1992.pdn game 1 (Chinook v M Tinsley, London
1992, game 1), ply 33: 3-7 in place of 14-18, then 30-26``: the file and the game's number in it;
in brackets the players (Black first), the event and the round or the opening; then the ply where
the puzzle's line leaves the game, the move played there and the game's own move.  :func:`describe`
turns such a line into sentences in the page's language: the players when the record names them
("Red v White" names nobody), the event, its place and year when it has one.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext

#: ``<file> game <n> (<inside>), ply <n>: <move>[ in place of <move>|the game's move][, then <move>]``.
_SOURCE = re.compile(
    r"^\S+ game \d+ \((?P<inside>[^()]+)\), ply (?P<ply>\d+): (?P<move>[0-9x-]+)"
    r"(?: in place of (?:the game's move|(?P<game_move>[0-9x-]+)))?(?:, then [0-9x-]+)?$")
#: An event's place and year: ``London 1992``.
_PLACE_YEAR = re.compile(r"^(?P<place>.+?) (?P<year>1[5-9]\d\d|20\d\d)$")
#: Names that name nobody: a record without its players.
_NOBODY = {"red", "white", "black", "?", ""}


def _person(name: str) -> str:
    """``Anderson, A.`` -> ``A. Anderson``; other names as they are."""
    last, comma, first = name.partition(", ")
    return f"{first} {last}" if comma and first else name.strip()


def _game_sentence(inside: str) -> str | None:
    """The sentence about the game: players, event, place and year as the record has them."""
    parts = inside.rsplit(", ", 2)
    if len(parts) < 3 or " v " not in parts[0]:
        return None
    black, white = (_person(p) for p in parts[0].split(" v ", 1))
    event = parts[1].strip()
    named = black.lower() not in _NOBODY and white.lower() not in _NOBODY
    place_year = _PLACE_YEAR.match(event)
    values = {"black": black, "white": white, "event": event}
    if named and place_year:
        return gettext("A game between %(black)s (Black) and %(white)s (White), %(place)s, %(year)s.") % {
            **values, **place_year.groupdict()}
    if named:
        return gettext("A game between %(black)s (Black) and %(white)s (White), from %(event)s.") % values
    if place_year:
        return gettext("A game played in %(place)s in %(year)s.") % place_year.groupdict()
    return gettext("A game from %(event)s.") % values


def describe(source: str) -> str:
    """``source`` (a puzzle's ``source``, str) in sentences of the active language; a line of
    another shape is returned as it is (it is data, not words to translate).  Never raises."""
    found = _SOURCE.match(source or "")
    game = _game_sentence(found["inside"]) if found else None
    if not found or game is None:
        return source
    values = {"ply": found["ply"], "move": found["move"], "game_move": found["game_move"]}
    if found["game_move"]:
        line = gettext("At ply %(ply)s, %(move)s is played in place of the game's %(game_move)s.") % values
    elif " in place of " in source:
        line = gettext("At ply %(ply)s, %(move)s is played in place of the game's move.") % values
    else:
        line = gettext("At ply %(ply)s, %(move)s was played in the game.") % values
    return f"{game} {line}"
