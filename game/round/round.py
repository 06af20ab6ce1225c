"""One live game in one process: its :class:`Round`, the one owner of what the process knows of it.

A game with sockets in this process has exactly one Round here, made by the process's hub
(:meth:`game.round.fanout.hubs.Hub.round`) when its first socket joins or an action of it
starts, and dropped once nothing of it is left: no socket, no action waiting its turn, no
pending notice, no computer at work.  The Round holds:

- the **turn**: the game's actions in this process run one at a time (:meth:`Round.run`), and
  one that finds the game's row held by another process's transaction gives its database
  thread back and tries again shortly, so a slow game keeps its slowness to itself;
- the **kept row and record** (:class:`~game.round.records.Kept`): the game's row and rules'
  record as this process's last move of it stored them, so that its next move is decided and
  stored without reading the row or replaying plies (:meth:`Round.move`);
- the **members** (this process's sockets of the game), the joins waiting for the game's
  subscription to be confirmed, and the events delivered here while Redis could not take
  them (``echoes``);
- the game's **snapshots** (:class:`~game.round.snapshots.Snapshots`);
- the **audience notice** waiting to go out and the **computer's** work in the game.

Everything here runs on the process's event loop; the actions themselves run in its database
threads (:func:`game.sockets.in_db_thread`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any, Protocol, TypeVar

from django.conf import settings

from game.errors import busy
from game.round import actions
from game.round.progress import Progress
from game.round.records import Kept
from game.round.snapshots import Snapshots
from game.round.store import RowBusy, without_waiting
from game.sockets import in_db_thread

R = TypeVar("R")

#: Seconds between two tries of an action whose game row was held, doubling up to the last.
RETRY_S = (0.01, 0.02, 0.05, 0.1, 0.2)


class Member(Protocol):
    """What a Round needs of a game socket of this process."""

    async def deliver(self, copies: list[tuple[str, str]], follow: dict[str, Any] | None) -> None:
        """Send one event to the page: ``copies`` are ``(roles, text)`` (an audience's roles, as
        :attr:`game.round.events.Audience.key`, and the JSON text of its copy), of which the socket
        sends the one for its role, if any; ``follow``: ``{"clock", "status"}`` of the state it
        carries, or None."""

    def resync(self) -> None:
        """Events may have been missed: send the page a fresh snapshot soon."""


class Round:
    """One game in this process (see the module docstring).  ``release`` is called whenever
    the Round may have become idle (:attr:`idle`): its hub then drops it."""

    def __init__(self, game_id: str, kept: Kept | None = None,
                 release: Callable[[Round], None] | None = None):
        self.game_id = game_id
        self.kept = kept
        self.members: set[Member] = set()
        #: Joins waiting for the game's subscription to be confirmed.
        self.joining: list[asyncio.Future[bool]] = []
        #: Events this process delivered itself while they could not be published (their echo,
        #: when the republish succeeds, is not delivered again).
        self.echoes: list[str] = []
        self.snapshots = Snapshots(game_id)
        #: The ``audience`` notice waiting to go out (at most one at a time).
        self.audience: asyncio.Task[None] | None = None
        #: The computer's work in this game, and whether it should look again when done.
        self.computer: asyncio.Task[None] | None = None
        self.computer_again = False
        self._turn = asyncio.Lock()
        self._queued = 0
        self._release = release

    @property
    def idle(self) -> bool:
        """Whether nothing of the game is left here: no socket, no join, no action, no task."""
        return (not self.members and not self.joining and not self._queued
                and (self.audience is None or self.audience.done())
                and (self.computer is None or self.computer.done()))

    def released(self) -> None:
        """Tell the hub that the Round may be idle now (it drops it if so)."""
        if self._release is not None:
            self._release(self)

    async def run(self, action: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """Run ``action(game_id, *args, **kwargs)`` in a database thread, after the actions of
        this game that this process started before it, trying again while the game's row is
        held elsewhere.  Raises what the action raises, and :class:`ActionError` ``busy`` when
        the row was still held after ``DATABASE_LOCK_TIMEOUT_MS``."""
        async with self._turn_held():
            return await self._tries(lambda: action(self.game_id, *args, **kwargs))

    async def move(self, player_id: str | None, text: str, v: int, arrived_at: datetime | None = None) -> Progress:
        """Play a move in the game's turn (:func:`game.round.actions.play_move`), on the row and
        record this process kept after the game's last move, if any (on the first try only: a
        try that found the row held may have played on them); keeps the ones the move stored
        once it has committed.  Raises what ``play_move`` raises."""
        async with self._turn_held():
            unused = [self.kept]
            self.kept = None

            def play() -> Progress:
                kept, unused[0] = unused[0], None
                return actions.play_move(self.game_id, player_id, text, v, arrived_at=arrived_at, kept=kept)

            progress = await self._tries(play)
            self.kept = progress.kept
            return progress

    @contextlib.asynccontextmanager
    async def _turn_held(self) -> AsyncIterator[None]:
        """The game's turn, counted from the moment it is asked for until it is given back."""
        self._queued += 1
        try:
            async with self._turn:
                yield
        finally:
            self._queued -= 1
            self.released()

    async def _tries(self, call: Callable[[], R]) -> R:
        """``call()`` in a database thread, again while the row is held (:class:`RowBusy`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settings.DATABASE_LOCK_TIMEOUT_MS / 1000
        attempt = 0
        while True:
            try:
                return await in_db_thread(without_waiting(call))()
            except RowBusy:
                if loop.time() >= deadline:
                    raise busy() from None
                await asyncio.sleep(RETRY_S[min(attempt, len(RETRY_S) - 1)])
                attempt += 1
