"""A game socket's flag: when the side to move runs out of time, as the socket follows the clock.

The server decides every clock (:class:`game.clock.Clock`, asked by the actions); a socket only
keeps the moment the clock of the last state it sent runs out (:attr:`Flag.deadline`), so that
a message arriving after it first asks the clock (the game may end on time instead), and a
player's socket arms a timer for that moment, so that the game ends on time without waiting for
a message.  Any number of such checks end a game once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from game.errors import ActionError

#: A ``clock_check`` this many seconds before the server's own deadline is honoured (the page's
#: countdown may run a little ahead).
CLOCK_CHECK_LEAD_S = 1.0
#: A player's socket checks the clock this long after the side to move should run out.
CLOCK_TIMER_SLACK_S = 0.05


class Flag:
    """The moment the side to move runs out as one socket follows it; ``check`` asks the server's
    clock (an action) and publishes what it decides."""

    def __init__(self, check: Callable[[], Awaitable[None]]):
        self._check = check
        #: ``time.monotonic()`` at which the side to move runs out (None: no clock runs).
        self.deadline: float | None = None
        self._timer: asyncio.Task[None] | None = None

    def follow(self, follow: dict[str, Any] | None, timer: bool) -> None:
        """Follow the clock of a state sent to the page: ``follow`` is its ``{"clock", "status"}``
        (:func:`game.round.events.follow_of`; None: no state).  ``timer``: also check the clock
        at that moment (a player's socket)."""
        self.stop()
        self.deadline = None
        clock = follow.get("clock") if follow else None
        if not clock or follow is None or follow.get("status") != "active":
            return
        lefts = [ms for ms in (clock[clock["running"]] if clock["running"] else None, clock["first_move_ms"])
                 if ms is not None]
        if not lefts:
            return
        delay_s = min(lefts) / 1000
        self.deadline = time.monotonic() + delay_s
        if timer:
            self._timer = asyncio.get_running_loop().create_task(self._after(delay_s))

    def passed(self, now: float) -> bool:
        """Whether the side to move has run out by ``now`` (monotonic s) as followed."""
        return self.deadline is not None and now >= self.deadline

    def near(self, now: float) -> bool:
        """Whether a page's ``clock_check`` at ``now`` (monotonic s) is honoured: within
        :data:`CLOCK_CHECK_LEAD_S` of the deadline, or past it."""
        return self.deadline is not None and now >= self.deadline - CLOCK_CHECK_LEAD_S

    def stop(self) -> None:
        """Disarm the timer (the socket closes, or follows another state)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _after(self, delay_s: float) -> None:
        await asyncio.sleep(delay_s + CLOCK_TIMER_SLACK_S)
        with contextlib.suppress(ActionError):
            await self._check()
