"""Time controls and the arithmetic of the server's clocks (pure Python, no Django).

A game is untimed, live (base minutes plus an increment in seconds a move,
written ``"5+3"``) or correspondence (days a move, written ``"3d"``).  The
server owns the clock: remaining times are stored in ms at the start of the
current turn together with the wall-clock time that turn started, so a
restarted server continues them exactly.

In a live game a side's clock does not run for its first move; instead that
move must come within :data:`FIRST_MOVE_S` seconds or the game may be aborted.
The increment is added after each move from the second on.  In a
correspondence game each move has its own allowance of whole days.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

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
    def parse(cls, text: str) -> "TimeControl":
        """Read ``untimed``, ``M+S`` (1–180 minutes, 0–60 s) or ``1d``/``3d``/``7d``.

        Raises :class:`TimeControlError`.
        """
        if not isinstance(text, str):
            raise TimeControlError("A time control is a string such as '5+3'.")
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
        if self.live:
            return f"{self.base_s}+{self.increment_s}"
        return "-"

    def start_ms(self) -> int | None:
        """Each side's time at the start in ms (for correspondence: one move's allowance); None untimed."""
        if self.days:
            return self.days * 86_400_000
        if self.live:
            return self.base_s * 1000
        return None


def elapsed_ms(since: datetime | None, now: datetime) -> int:
    """Whole ms from ``since`` to ``now`` (0 when ``since`` is None or in the future)."""
    if since is None:
        return 0
    return max(0, int((now - since).total_seconds() * 1000))


def runs(control: TimeControl, ply: int) -> bool:
    """Whether the side to move at ``ply`` is charged for its time (not a live game's first move of a side)."""
    if control.days:
        return True
    return control.live and ply >= 2


def after_move(control: TimeControl, left_ms: int, ply: int) -> int:
    """The mover's time once its move at ``ply`` (0-based) is accepted with ``left_ms`` left.

    Live: plus the increment (not for a side's first move). Correspondence: a
    fresh allowance for the next move.
    """
    if control.days:
        return control.start_ms()
    if ply >= 2:
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
