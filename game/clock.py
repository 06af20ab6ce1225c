"""Time controls and the server's clocks (pure Python, no Django).

A game is untimed, live (base minutes plus an increment in seconds a move,
written ``"5+3"``) or correspondence (days a move, written ``"3d"``).  The
server owns the clock: remaining times are stored in ms at the start of the
current turn together with the wall-clock time that turn started, so a
restarted server continues them exactly.

In a live game a side's clock does not run for its first move; instead that
move must come within :data:`FIRST_MOVE_S` seconds or the game may be aborted.
The increment is added after each move from the second on.  In a
correspondence game each move has its own allowance of whole days.

:class:`Clock` is the one place that charges a turn, decides that a side is
out of time, adds increments and writes the clocks' public state: the actions
(:mod:`game.round.progress`, :mod:`game.round.actions`) ask it once per action
and the events (:mod:`game.round.events`) once per state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypedDict

from game.rules import Color, Outcome, Termination
from game.rules.ballots import opening_plies

#: Seconds a side has for its first move in a live timed game before the game is aborted.
FIRST_MOVE_S = 30
#: The live time controls offered on the home page and as seek pools: (base minutes, increment s).
STANDARD = ("1+0", "3+2", "5+0", "10+5", "15+10")
#: The correspondence controls offered: days a move.
CORRESPONDENCE = ("1d", "3d", "7d")
MAX_BASE_MINUTES = 180
MAX_INCREMENT_S = 60

_LIVE = re.compile(r"^(\d{1,3})\+(\d{1,2})$")
_DAYS = re.compile(r"^([137])d$")


#: Time controls read so far, by their text (a site has a handful).
_PARSED: dict[str, TimeControl] = {}


class TimeControlError(ValueError):
    """A time control string that is not ``untimed``, ``M+S`` within bounds, or ``1d``/``3d``/``7d``."""


@dataclass(frozen=True)
class TimeControl:
    """A time control: ``base_s`` and ``increment_s`` for live play, ``days`` for correspondence.

    >>> TimeControl.parse("3+2")
    TimeControl(base_s=180, increment_s=2, days=None)
    >>> str(TimeControl.parse("7d")), TimeControl.parse("10+5").pdn()
    ('7d', '600+5')
    """

    base_s: int | None = None
    increment_s: int = 0
    days: int | None = None

    @classmethod
    def parse(cls, text: object) -> TimeControl:
        """Read ``untimed``, ``M+S`` (1 to 180 minutes, 0 to 60 s) or ``1d``/``3d``/``7d``.

        Raises :class:`TimeControlError`.  Stored games' controls are read on every action and
        state, so the few distinct texts are parsed once each.
        """
        if not isinstance(text, str):
            raise TimeControlError("A time control is a string such as '5+3'.")
        found = _PARSED.get(text)
        if found is None:
            found = cls._read(text)
            if len(_PARSED) < 1024:
                _PARSED[text] = found
        return found

    @classmethod
    def _read(cls, text: str) -> TimeControl:
        text = text.strip().lower()
        if text in ("", "untimed", "-"):
            return cls()
        if match := _DAYS.match(text):
            return cls(days=int(match.group(1)))
        if match := _LIVE.match(text):
            minutes, increment = int(match.group(1)), int(match.group(2))
            if not 1 <= minutes <= MAX_BASE_MINUTES or increment > MAX_INCREMENT_S:
                raise TimeControlError(
                    f"Choose 1 to {MAX_BASE_MINUTES} minutes and 0 to {MAX_INCREMENT_S} seconds a move.")
            return cls(base_s=minutes * 60, increment_s=increment)
        raise TimeControlError(f"Unknown time control '{text[:20]}': use e.g. 5+3, 1d or untimed.")

    def __str__(self) -> str:
        if self.days:
            return f"{self.days}d"
        if self.base_s is None:
            return "untimed"
        return f"{self.base_s // 60}+{self.increment_s}"

    @property
    def timed(self) -> bool:
        """True for live and correspondence controls."""
        return self.base_s is not None or self.days is not None

    @property
    def live(self) -> bool:
        """True for a base-plus-increment control."""
        return self.base_s is not None

    def label(self) -> str:
        """Words for pages: ``"5+3"``, ``"3 days a move"``, ``"Untimed"``."""
        if self.days:
            return f"{self.days} day{'s' if self.days > 1 else ''} a move"
        return str(self) if self.live else "Untimed"

    def pdn(self) -> str:
        """The PDN ``TimeControl`` tag value (seconds, as in PGN): ``"300+3"``, ``"1/259200"``, ``"-"``."""
        if self.days:
            return f"1/{self.days * 86400}"
        if self.base_s is not None:
            return f"{self.base_s}+{self.increment_s}"
        return "-"

    def start_ms(self) -> int | None:
        """Each side's time at the start in ms (for correspondence: one move's allowance); None untimed."""
        if self.days:
            return self.days * 86_400_000
        if self.base_s is not None:
            return self.base_s * 1000
        return None


def elapsed_ms(since: datetime | None, now: datetime) -> int:
    """Whole ms from ``since`` to ``now`` (0 when ``since`` is None or in the future)."""
    if since is None:
        return 0
    return max(0, int((now - since).total_seconds() * 1000))


#: A time during which game events could not be delivered (``docs/protocol.md``, "Outages"):
#: ``(start, end)``, ``end`` None while it lasts.
Pause = tuple[datetime, datetime | None]


def paused_ms(pauses: Iterable[Pause], since: datetime | None, now: datetime) -> int:
    """Whole ms from ``since`` to ``now`` that fall in any of ``pauses`` (overlapping pauses count
    once; a pause still lasting, ``end`` None, runs to ``now``); 0 when ``since`` is None.

    >>> from datetime import timedelta, timezone
    >>> t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> s = lambda a, b=None: (t0 + timedelta(seconds=a), b if b is None else t0 + timedelta(seconds=b))
    >>> paused_ms([s(5, 10), s(8, 12), s(20)], t0, t0 + timedelta(seconds=25))
    12000
    >>> paused_ms([s(-5, 3)], t0, t0 + timedelta(seconds=2))
    2000
    """
    if since is None or now <= since:
        return 0
    spans = sorted((max(start, since), min(end or now, now)) for start, end in pauses)
    total, reach = 0.0, since
    for start, end in spans:
        start = max(start, reach)
        if end > start:
            total += (end - start).total_seconds()
            reach = end
    return int(total * 1000)


def runs(control: TimeControl, ply: int) -> bool:
    """Whether the side to move at ``ply`` is charged for its time (not a live game's first move of a side)."""
    if control.days:
        return True
    return control.live and ply >= 2


def after_move(control: TimeControl, left_ms: int, ply: int, increment: bool = True) -> int:
    """The mover's time once its move at ``ply`` (0-based) is accepted with ``left_ms`` left.

    Live: plus the increment (not for a side's first move, nor for a side that went berserk:
    ``increment`` False). Correspondence: a fresh allowance for the next move.
    """
    if control.days:
        return control.days * 86_400_000
    if ply >= 2 and increment:
        return left_ms + control.increment_s * 1000
    return left_ms


#: Seconds the player to move must have been away before the opponent may claim: live timed games.
CLAIM_AFTER_LIVE_S = 60
#: The same for untimed games (no clock decides them otherwise).
CLAIM_AFTER_UNTIMED_S = 120


def claim_after_s(control: TimeControl, live_s: int = CLAIM_AFTER_LIVE_S,
                  untimed_s: int = CLAIM_AFTER_UNTIMED_S) -> int | None:
    """Seconds of absence of the player to move after which the opponent may claim the win or a
    draw (``live_s`` in live timed games, ``untimed_s`` in untimed ones); None where claims do
    not apply (correspondence: the days clock decides)."""
    if control.days:
        return None
    return live_s if control.live else untimed_s


class ClockState(TypedDict):
    """The public clocks of a timed game (``state["clock"]`` of every event): each side's time
    left in ms (the running side's already charged up to the moment of the state), the side whose
    clock runs, and the time left for a live game's first move of a side (no clock runs then)."""

    control: str
    label: str
    B: int
    W: int
    running: str | None
    first_move_ms: int | None


class StoredClocks(Protocol):
    """What :meth:`Clock.of` reads of a stored game (:class:`game.models.Game` has it)."""

    time_control: str
    black_ms: int | None
    white_ms: int | None
    turn_started_at: datetime | None
    ply: int
    fen: str
    status: str
    ballot: int | None
    black_berserk: bool
    white_berserk: bool


@dataclass(frozen=True)
class Expiry:
    """A side to move out of time: the game's ``outcome`` (lost on time, or aborted when a live
    game's first move of a side did not come within :data:`FIRST_MOVE_S`), the event's name
    (``"flagged"`` or ``"aborted"``) and the stored times it leaves (ms by side)."""

    outcome: Outcome
    what: str
    times: dict[Color, int]


@dataclass(frozen=True)
class Clock:
    """The clocks of one game as stored: each side's time (ms) at the start of the current turn,
    the side to move, the ply and when the turn started.  ``active``: the game is in play.
    ``pauses``: times during which the game's events could not be delivered, charged to nobody
    (neither on the clock nor for a live game's first move).  ``berserk``: the sides that went
    berserk (:mod:`game.round.berserk`), whose moves get no increment.

    >>> from datetime import timedelta, timezone
    >>> t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> c = Clock(TimeControl.parse("1+2"), 60_000, 60_000, Color.BLACK, 4, t0, True)
    >>> c.after_move(t0 + timedelta(seconds=10))
    {<Color.BLACK: 'B'>: 52000}
    >>> c.expiry(t0 + timedelta(seconds=61)).what
    'flagged'
    """

    control: TimeControl
    black_ms: int | None
    white_ms: int | None
    turn: Color
    ply: int
    started_at: datetime | None
    active: bool
    #: Times during which the game's events could not be delivered: charged to nobody.
    pauses: tuple[Pause, ...] = ()
    #: The sides that went berserk: no increment for their moves.
    berserk: frozenset[Color] = frozenset()

    @classmethod
    def of(cls, game: StoredClocks, pauses: tuple[Pause, ...] = ()) -> Clock:
        """The clock of a stored game; ``pauses`` (:data:`Pause`) are not charged.  Its ``ply``
        counts the players' own plies: a 3-move ballot's three plies, played by the site, are
        not theirs, so White's first own move (ply 4 of the game) is a side's first move
        (docs/rules.md, "3-move ballots").  A seat marked berserk gets no increment."""
        berserk = frozenset(side for side, marked in ((Color.BLACK, game.black_berserk),
                                                      (Color.WHITE, game.white_berserk)) if marked)
        return cls(TimeControl.parse(game.time_control), game.black_ms, game.white_ms,
                   Color(game.fen[0]), game.ply - opening_plies(game.ballot), game.turn_started_at,
                   game.status == "active", pauses, berserk)

    def stored_ms(self, side: Color) -> int:
        """``side``'s time at the start of the turn, ms (0 in an untimed game)."""
        ms = self.black_ms if side is Color.BLACK else self.white_ms
        return ms or 0

    def spent_ms(self, now: datetime) -> int:
        """Whole ms of the current turn up to ``now`` that are charged: all of them but those in
        :attr:`pauses` (an outage of the game's events, ``docs/protocol.md``)."""
        spent = elapsed_ms(self.started_at, now)
        if self.pauses and spent:
            spent -= paused_ms(self.pauses, self.started_at, now)
        return max(0, spent)

    @property
    def running(self) -> Color | None:
        """The side whose clock runs: the side to move of a timed game in play, unless it is a
        live game's first move of that side."""
        return self.turn if self.active and runs(self.control, self.ply) else None

    def expiry(self, now: datetime) -> Expiry | None:
        """The end on time as of ``now``, when the side to move of a timed game in play is out of
        time; None otherwise (in time, untimed, or not in play)."""
        if not self.active or not self.control.timed:
            return None
        spent = self.spent_ms(now)
        if self.control.live and self.ply < 2:
            if spent >= FIRST_MOVE_S * 1000:
                return Expiry(Outcome(Termination.ABORTED, None), "aborted", {})
            return None
        if self.stored_ms(self.turn) - spent > 0:
            return None
        return Expiry(Outcome(Termination.TIME_FORFEIT, self.turn.opponent), "flagged", {self.turn: 0})

    def after_move(self, now: datetime) -> dict[Color, int]:
        """The mover's stored time once its move is accepted at ``now``: charged for the turn (when
        its clock ran) and given the increment (live, from a side's second move, unless the side
        went berserk) or a fresh allowance (correspondence).  Empty in an untimed game."""
        if not self.control.timed:
            return {}
        left = self.stored_ms(self.turn)
        if runs(self.control, self.ply):
            left -= self.spent_ms(now)
        return {self.turn: after_move(self.control, left, self.ply, self.turn not in self.berserk)}

    def charged(self, now: datetime) -> dict[Color, int]:
        """The side to move's stored time charged for its turn up to ``now``, for a game that ends
        other than by a move (resignation, agreement, claim, abort), so the final clocks are those
        the players saw.  Empty when no clock runs.  Called only when :meth:`expiry` found
        nothing, so never below 1 ms."""
        if self.running is None:
            return {}
        return {self.turn: max(1, self.stored_ms(self.turn) - self.spent_ms(now))}

    def state(self, now: datetime) -> ClockState | None:
        """The public clocks as of ``now`` (:class:`ClockState`), or None in an untimed game."""
        control = self.control
        if not control.timed:
            return None
        spent = self.spent_ms(now)
        times = {Color.BLACK: self.stored_ms(Color.BLACK), Color.WHITE: self.stored_ms(Color.WHITE)}
        running = self.running
        if running is not None:
            times[running] = max(0, times[running] - spent)
        first_move_ms = None
        if self.active and control.live and self.ply < 2:
            first_move_ms = max(0, FIRST_MOVE_S * 1000 - spent)
        return {"control": str(control), "label": control.label(), "B": times[Color.BLACK],
                "W": times[Color.WHITE], "running": running.value if running else None,
                "first_move_ms": first_move_ms}
