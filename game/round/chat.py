"""A game's chat: the players' room and the spectators' room, kept apart.

- ``players``: the two seats write and read it, before, during and after the game.  Spectators
  never receive its lines, neither live nor in a snapshot.  In a game against the computer it
  is not offered (a line is refused ``chat_computer``); the computer itself says "Good game"
  there once a game it played is finished (:func:`farewell`).
- ``spectators``: everyone not seated writes and reads it.  The players neither receive nor
  write it while the game goes on, and read and write it once the game is over.

:func:`say` is the action: *check* (the text, the writer's seat and room, the rates) → *do*
(store one :class:`~game.models.ChatLine`) → *events* (one :class:`~game.round.events.ChatEvent`
addressed to the room's readers).  A refusal raises :class:`ActionError` with a ``chat_*`` code
and stores nothing.  Lines do not change the game's version: they are not game events
(``docs/protocol.md``, "Chat"), so a line never makes a move or premove stale.  Each line has an
``id`` (growing with every line stored); pages merge lines by ``id``, so a line received twice (a
republish, a snapshot after the live event) is shown once, and every snapshot carries each
readable room's last :data:`HISTORY_LINES` lines (:func:`history`).
"""

from __future__ import annotations

import functools
import logging
import time
import unicodedata
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import limits
from django.conf import settings
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext_lazy as _
from limits.errors import StorageError
from limits.strategies import MovingWindowRateLimiter

from checkers_site import clients, redis_cluster
from game.errors import ActionError, no_such_game
from game.i18n import lazy_text
from game.models import ChatLine, Game
from game.names import display_name
from game.players import is_computer
from game.round import events, store
from game.round.progress import Progress
from game.rules import Color

log = logging.getLogger(__name__)

PLAYERS = ChatLine.Room.PLAYERS.value
SPECTATORS = ChatLine.Room.SPECTATORS.value
ROOMS = (PLAYERS, SPECTATORS)

#: The longest line, in characters (Unicode code points) after trimming.
MAX_CHARS = 140
#: At most this many lines ...
RATE_LINES = 3
#: ... in any window of this many seconds, per socket and per writer (a seat, or a spectator's
#: session) in a game, across every server process.
RATE_WINDOW_S = 5
#: And at most this many lines of one client address (all its sessions: free guest sessions cost
#: nothing) in a game in the same window: a household or a classroom behind one address still
#: talks, thirty throwaway sessions of one address do not flood a room.
RATE_ADDRESS_LINES = 6
#: Combining marks (Unicode ``Mn``, ``Me``) one letter may carry: enough for any script's
#: accents and an emoji's variation selector and keycap, not for a letter piled with marks that
#: spill over the lines around it.
MAX_MARKS = 4
#: Lines of each room a snapshot carries (the most recent ones).
HISTORY_LINES = 50
#: What the computer says in the players' room when a game it played is finished.
FAREWELL = "Good game"

#: Characters refused besides Unicode's control characters (``Cc``) and lone surrogates (``Cs``):
#: the bidirectional embeddings, overrides and isolates, which turn the text after them around.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Unicode categories refused too: line and paragraph separators (``Zl``, ``Zp``: a line break).
#: Unassigned code points are let through (a newer emoji than this Python knows), noncharacters
#: (U+FDD0-U+FDEF, U+FFFE and U+FFFF of every plane) are not.
_REFUSED_CATEGORIES = ("Cc", "Cs", "Zl", "Zp")


def _noncharacter(ch: str) -> bool:
    code = ord(ch)
    return 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE
#: Letters and symbols that show as nothing (the braille blank, the Hangul fillers): a line of
#: these, whitespace and invisible format characters (``Cf``: zero-width spaces, tags) is empty.
_BLANKS = frozenset("\u2800\u115f\u1160\u3164\uffa0")


def clean_text(text: str) -> str:
    """``text`` trimmed (Unicode whitespace at both ends), checked to be a line one may send.

    Raises :class:`ActionError` ``chat_invalid`` (a control character: newline, tab, NUL, ...,
    a lone surrogate or a bidirectional override; or a letter with more than :data:`MAX_MARKS`
    combining marks), ``chat_empty`` (nothing but whitespace), ``chat_too_long`` (over
    :data:`MAX_CHARS` characters).

    >>> clean_text("  Good luck!  ")
    'Good luck!'
    >>> [_code(clean_text, t) for t in ("\u200b", "\u2800 \u115f", "x\u2028y", "\uffff", "gg \U0001fae8")]
    ['chat_empty', 'chat_empty', 'chat_invalid', 'chat_invalid', 'gg \U0001fae8']
    """
    trimmed = text.strip()
    if any(unicodedata.category(ch) in _REFUSED_CATEGORIES or ch in _BIDI_CONTROLS or _noncharacter(ch)
           for ch in trimmed):
        raise ActionError("chat_invalid", _("A chat line cannot hold control characters."))
    if all(ch.isspace() or ch in _BLANKS or unicodedata.category(ch) == "Cf" for ch in trimmed):
        raise ActionError("chat_empty", _("Type something to send."))
    if len(trimmed) > MAX_CHARS:
        raise ActionError("chat_too_long", lazy_text(_("A chat line holds at most %(max)s characters."),
                                                     max=MAX_CHARS))
    if most_marks(trimmed) > MAX_MARKS:
        raise ActionError("chat_invalid", lazy_text(_("A letter of a chat line carries at most %(max)s accents "
                                                      "or marks."), max=MAX_MARKS))
    return trimmed


def most_marks(text: str) -> int:
    """The most combining marks (Unicode ``Mn``, ``Me``) in a row in ``text``: those one letter carries.

    >>> most_marks("café"), most_marks("Vie\u0323\u0302t"), most_marks("1\ufe0f\u20e3"), most_marks("a" + "\u0301" * 9)
    (0, 2, 2, 9)
    """
    most = run = 0
    for ch in text:
        if unicodedata.category(ch) in ("Mn", "Me"):
            run += 1
            most = max(most, run)
        else:
            run = 0
    return most


def _code(check, text: str) -> str:
    """``check(text)``, or the code of the :class:`ActionError` it raises (for the examples)."""
    try:
        return check(text)
    except ActionError as exc:
        return exc.code


def against_computer(game: Game) -> bool:
    """True when the computer holds one of the seats of ``game``."""
    return is_computer(game.black_player) or is_computer(game.white_player)


def readable_rooms(game: Game, seat: Color | None) -> tuple[str, ...]:
    """The rooms a viewer in ``seat`` (None: a spectator) reads now: a spectator the spectators'
    room; a player the players' room, and the spectators' room too once the game is over."""
    if seat is None:
        return (SPECTATORS,)
    return ROOMS if game.is_over else (PLAYERS,)


def audience_of(room: str, game: Game) -> events.Audience:
    """Who receives a new line of ``room`` in ``game`` as it is now: the seats for the players'
    room; the spectators for theirs, and everyone once the game is over."""
    if room == PLAYERS:
        return events.SEATS
    return events.EVERYONE if game.is_over else events.SPECTATORS


def line_payload(line: ChatLine) -> dict[str, Any]:
    """A stored line as sent: ``{"id": int, "room": str, "seat": "B"|"W"|None, "name": str,
    "text": str}``."""
    return {"id": line.id, "room": line.room, "seat": line.seat or None, "name": line.name,
            "text": line.text}


def history(game: Game, seat: Color | None) -> dict[str, list[dict[str, Any]]]:
    """The last :data:`HISTORY_LINES` lines of each room a viewer in ``seat`` reads
    (:func:`readable_rooms`), oldest first: ``{room: [line_payload, ...]}`` (one query a room)."""
    return histories(game, [seat])


def histories(game: Game, seats: list[Color | None]) -> dict[str, list[dict[str, Any]]]:
    """:func:`history` for viewers in each of ``seats`` together: the last lines of every room one
    of them reads, each room read once."""
    found: dict[str, list[dict[str, Any]]] = {}
    for seat in seats:
        for room in readable_rooms(game, seat):
            if room not in found:
                rows = list(ChatLine.objects.filter(game_id=game.id, room=room).order_by("-id")[:HISTORY_LINES])
                found[room] = [line_payload(line) for line in reversed(rows)]
    return found


@dataclass
class LineRate:
    """The lines of one socket in the last :data:`RATE_WINDOW_S` seconds (monotonic times).

    >>> rate = LineRate()
    >>> [rate.allows(t) and rate.count(t) is None for t in (0.0, 1.0, 2.0, 3.0)]
    [True, True, True, False]
    >>> rate.allows(5.5)
    True
    """

    times: deque[float] = field(default_factory=deque)

    def allows(self, now: float) -> bool:
        """Whether one more line at ``now`` stays within the rate (nothing is counted)."""
        while self.times and self.times[0] <= now - RATE_WINDOW_S:
            self.times.popleft()
        return len(self.times) < RATE_LINES

    def count(self, now: float) -> None:
        """Count one line sent at ``now``."""
        self.times.append(now)


@functools.cache
def _limiter(url: str, prefix: str) -> MovingWindowRateLimiter:
    return MovingWindowRateLimiter(redis_cluster.limits_storage(url, f"{prefix}:chat"))


_WRITER_RATE = limits.RateLimitItemPerSecond(RATE_LINES, RATE_WINDOW_S)
_ADDRESS_RATE = limits.RateLimitItemPerSecond(RATE_ADDRESS_LINES, RATE_WINDOW_S)


def writer_allows(game_id: str, player_id: str, address: str | None = None) -> bool:
    """Count one line of ``player_id`` from client ``address`` (None: unknown, not counted) in
    game ``game_id`` in Redis (moving windows shared by every tab and server process); False, and
    the line counted nowhere, when the writer already sent :data:`RATE_LINES` lines, or the
    address :data:`RATE_ADDRESS_LINES`, in the last :data:`RATE_WINDOW_S` seconds.  When Redis
    cannot answer the line is let through (the socket's own rate still holds).  Synchronous."""
    counted = [(_WRITER_RATE, ("writer", player_id))]
    if address:
        counted.append((_ADDRESS_RATE, ("address", address)))
    try:
        limiter = _limiter(redis_cluster.site_limits_url(), settings.REDIS_PREFIX)
        if not all(limiter.test(rate, game_id, *key) for rate, key in counted):
            return False
        # Tested first, so that a line one rate refuses is counted by none; each hit is atomic.
        return all(limiter.hit(rate, game_id, *key) for rate, key in counted)
    except StorageError as exc:
        log.warning("chat rate unavailable, line let through: %s", exc)
        return True


@dataclass
class Speaker:
    """One socket's voice in the chat: its session's player id and name, its language (for a
    generated guest name), its own :class:`LineRate` and its client address (as the limits count
    it, :func:`checkers_site.clients.counted`; by default the one of the connection it is made
    for, :func:`checkers_site.clients.current`)."""

    player_id: str | None
    session_name: str | None = None
    language: str | None = None
    rate: LineRate = field(default_factory=LineRate)
    address: str | None = field(default_factory=lambda: clients.counted(clients.current()))

    def spectator_name(self) -> str:
        """The name a spectator writes under: the session's display name, or the session's guest
        name (``Guest 4821``, in the socket's language) when it has none or an unusable one."""
        with translation.override(self.language):
            try:
                return display_name(self.session_name, self.player_id)
            except ActionError:
                return display_name(None, self.player_id)


def _writer(game: Game, speaker: Speaker, room: str) -> tuple[Color | None, str]:
    """Check that ``speaker`` may write in ``room`` of ``game``; return its seat (None: a
    spectator) and the name it writes under.  Raises :class:`ActionError` ``no_session``,
    ``chat_computer``, ``chat_not_allowed``."""
    if not speaker.player_id:
        raise ActionError("no_session", _("Your browser session has no player id."))
    seat = game.seat_of(speaker.player_id)
    if room == PLAYERS:
        if seat is None:
            raise ActionError("chat_not_allowed", _("Only the two players write in the players' room."))
        if against_computer(game):
            raise ActionError("chat_computer", _("There is no chat with the computer."))
    elif seat is not None and not game.is_over:
        raise ActionError("chat_not_allowed", _("The spectators' room opens to the players when the game is over."))
    if seat is None:
        return None, speaker.spectator_name()
    return seat, getattr(game, Game.seat_fields(seat)[1])


def say(game_id: str, speaker: Speaker, room: str, text: str, now: float | None = None) -> Progress:
    """Write ``text`` in ``room`` (``"players"`` or ``"spectators"``) of game ``game_id`` for
    ``speaker``, as of ``now`` (monotonic seconds, for the socket's rate; default the current time).

    Checks the text (:func:`clean_text`), the room (:func:`_writer`), then the rates: the
    socket's and the writer's, :data:`RATE_LINES` lines per :data:`RATE_WINDOW_S` seconds each,
    and the client address's, :data:`RATE_ADDRESS_LINES` (:func:`writer_allows`).  Stores the
    line and returns :class:`Progress` with its ``chat`` event, addressed by :func:`audience_of`.
    The game row is read, not locked, and its version is unchanged.  Synchronous (the database;
    Redis for the writer's and the address's rates).

    Raises :class:`ActionError`: ``chat_invalid``, ``chat_empty``, ``chat_too_long``,
    ``no_such_game``, ``no_session``, ``chat_computer``, ``chat_not_allowed``, ``chat_too_fast``.
    """
    clean = clean_text(text)
    game = Game.objects.filter(pk=game_id).first()
    if game is None:
        raise no_such_game()
    seat, name = _writer(game, speaker, room)
    now = time.monotonic() if now is None else now
    assert speaker.player_id  # checked by _writer
    if not speaker.rate.allows(now) or not writer_allows(game_id, speaker.player_id, speaker.address):
        raise ActionError("chat_too_fast", lazy_text(
            _("Slow down: at most %(lines)s chat lines every %(seconds)s seconds."),
            lines=RATE_LINES, seconds=RATE_WINDOW_S))
    speaker.rate.count(now)
    line = ChatLine.objects.create(game=game, room=room, seat=seat.value if seat else "", name=name, text=clean)
    # Read again after the write: a game that ended meanwhile lets the players read this line too.
    game.status = Game.objects.filter(pk=game_id).values_list("status", flat=True).first() or game.status
    return Progress(game, [events.ChatEvent(line=line_payload(line), to=audience_of(room, game))])


def farewell(game_id: str, bot: str) -> Progress:
    """The computer (player id ``bot``) says :data:`FAREWELL` in the players' room of a finished
    game it played, once: under the game's row lock, so two server processes cannot both say it.
    Returns the ``chat`` event, or no events when it was said already, the game is not finished
    (an aborted game gets none) or ``bot`` holds no seat.  Raises :class:`ActionError`
    ``no_such_game``, ``busy`` (:func:`game.round.store.load_for_update`)."""
    with transaction.atomic():
        game = store.load_for_update(game_id)
        seat = game.seat_of(bot)
        if seat is None or game.status != Game.Status.FINISHED or said_farewell(game_id, seat):
            return Progress(game)
        line = ChatLine.objects.create(game=game, room=PLAYERS, seat=seat.value,
                                       name=getattr(game, Game.seat_fields(seat)[1]), text=FAREWELL)
        return Progress(game, [events.ChatEvent(line=line_payload(line), to=events.SEATS)])


def said_farewell(game_id: str, seat: Color) -> bool:
    """Whether ``seat`` already wrote in the players' room of ``game_id`` (the computer's farewell)."""
    return ChatLine.objects.filter(game_id=game_id, room=PLAYERS, seat=seat.value).exists()
