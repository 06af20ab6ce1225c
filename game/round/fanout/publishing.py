"""Publishing a game's committed events, with one policy for every publisher.

The game socket, the computer and the pages (:func:`publish` on the event loop,
:func:`publish_sync` from a thread) publish the committed events; if Redis fails, this
process's own sockets of the game (and the acting socket, when there is one) get them at once,
and they are published again after :data:`REPUBLISH_AFTER_S` seconds until one attempt
succeeds (:class:`Republish`).  Meanwhile an outage window of that game is open
(:mod:`game.round.outages`): its clock charges nobody for that time.  Delivery is at most once and the
database stays the truth: a page that misses an event sees a gap in ``v`` and asks for a
snapshot; a page that gets an event twice ignores the second.  Every publication, once out, is
told to the rooms above (:data:`game.round.signals.events_published`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Protocol

from checkers_site.ops import metrics
from game.round import outages, signals
from game.round.events import Event, publications
from game.round.fanout.hubs import hub, hubs
from game.round.fanout.transport import Unavailable, sync_publisher
from game.sockets import in_background

log = logging.getLogger(__name__)

#: Seconds after which events whose publish failed are published again; after the last, again
#: every as many seconds, until one attempt succeeds or :data:`REPUBLISH_FOR_S` have passed.
REPUBLISH_AFTER_S = (0.5, 2.0, 5.0)
#: Seconds during which events whose publish failed are still published again.
REPUBLISH_FOR_S = 600.0


class Fallback(Protocol):
    """The acting socket, which gets its own events directly when they cannot be published."""

    async def send_event(self, event: Event) -> None:
        """Send ``event`` (its copy for this socket's role) to this socket's page."""


class Republish:
    """The one policy for events of ``game_id`` (encoded: ``texts``) whose first publish failed:
    the waits before each new attempt (:meth:`delays`), what each attempt counts and logs
    (:meth:`done`), and the outage window open from :meth:`begin` until the end of it all
    (:meth:`end`: once, however it ends)."""

    def __init__(self, game_id: str, texts: list[str]):
        self.game_id = game_id
        self.texts = texts
        self.outage: int | None = None

    def begin(self, exc: Exception) -> None:
        """The first publish failed with ``exc``: counted, logged, an outage window of the game open."""
        metrics.first_publish_failed.inc()
        log.warning("could not publish to game %s: %s", self.game_id, exc)
        self.outage = outages.tracker.begin("republish", [self.game_id])

    @staticmethod
    def delays() -> Iterator[float]:
        """The waits before each attempt (:data:`REPUBLISH_AFTER_S`, then its last one again)."""
        yield from REPUBLISH_AFTER_S
        waited = sum(REPUBLISH_AFTER_S)
        while waited < REPUBLISH_FOR_S:
            waited += REPUBLISH_AFTER_S[-1]
            yield REPUBLISH_AFTER_S[-1]

    def done(self, failed: Unavailable | None) -> bool:
        """Count one attempt, which ``failed`` or (None) published the events: True when it did."""
        if failed is not None:
            metrics.republish_failed.inc()
            log.warning("could not publish to game %s again: %s", self.game_id, failed)
            return False
        metrics.events_republished.inc(len(self.texts))
        return True

    def end(self) -> None:
        """The attempts are over: this publish's outage window ends."""
        if self.outage is not None:
            outages.tracker.end(self.outage)
            self.outage = None


async def publish(game_id: str, events: Sequence[Event], fallback: Fallback | None = None) -> bool:
    """Send committed ``events`` to every socket of the game, in order (one round trip).

    Returns False when Redis failed: the change is stored all the same; this process's own
    sockets of the game (``fallback``, the acting socket, among them) are then sent the events
    at once and they are published again in the background (:class:`Republish`).  Then
    :data:`game.round.signals.events_published` tells the rooms above (the players' other pages).
    """
    if not events:
        return True
    published = await _publish(game_id, events, fallback)
    _tell_rooms(game_id, events)
    return published


async def _publish(game_id: str, events: Sequence[Event], fallback: Fallback | None) -> bool:
    texts = publications(events)
    the_hub = hub()
    try:
        await the_hub.publish(game_id, texts)
        metrics.events_published.inc(len(texts))
        return True
    except Unavailable as exc:
        again = Republish(game_id, texts)
        again.begin(exc)
    try:
        reached = await the_hub.deliver_here(game_id, texts)
        if fallback is not None and fallback not in reached:
            for event in events:
                await fallback.send_event(event)
    finally:
        in_background(_republish(again))
    return False


def _tell_rooms(game_id: str, events: Sequence[Event]) -> None:
    """:data:`game.round.signals.events_published`; a receiver's failure is logged, never raised
    (the events are out)."""
    for receiver, result in signals.events_published.send_robust(sender=Event, game_id=game_id, events=events):
        if isinstance(result, Exception):
            log.error("a receiver of the events of game %s failed: %r (%s)", game_id, result, receiver)


async def _republish(again: Republish) -> None:
    """Publish again on the event loop until it works.  While the process's subscription is lost,
    the next attempt comes as soon as it is back (Redis is up again), so the outage window
    closes with it."""
    try:
        for delay in again.delays():
            the_hub = hub()
            line = the_hub.line_lost(again.game_id)
            if line is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(line.restored.wait(), delay)
            else:
                await asyncio.sleep(delay)
            failed = None
            try:
                await the_hub.publish(again.game_id, again.texts)
            except Unavailable as exc:
                failed = exc
            if again.done(failed):
                return
    finally:
        again.end()


def publish_sync(game_id: str, events: Sequence[Event]) -> bool:
    """:func:`publish` for synchronous callers (the pages): publish, or else deliver the events
    to this process's sockets of the game and publish them again from a background thread; then
    :data:`game.round.signals.events_published`, from this thread.  Returns False when the first
    try failed."""
    if not events:
        return True
    published = _publish_sync(game_id, events)
    _tell_rooms(game_id, events)
    return published


def _publish_sync(game_id: str, events: Sequence[Event]) -> bool:
    texts = publications(events)
    try:
        sync_publisher.publish(game_id, texts)
        metrics.events_published.inc(len(texts))
        return True
    except Unavailable as exc:
        again = Republish(game_id, texts)
        again.begin(exc)
    _deliver_here_from_thread(game_id, texts)
    threading.Thread(target=_republish_sync, args=(again,), name=f"republish:{game_id}", daemon=True).start()
    return False


def _republish_sync(again: Republish) -> None:
    """Publish again from a thread until it works."""
    try:
        for delay in again.delays():
            time.sleep(delay)
            failed = None
            try:
                sync_publisher.publish(again.game_id, again.texts)
            except Unavailable as exc:
                failed = exc
            if again.done(failed):
                return
    finally:
        again.end()


def _deliver_here_from_thread(game_id: str, texts: list[str]) -> None:
    """:meth:`~game.round.fanout.hubs.Hub.deliver_here` on the hub of each running event loop (a
    server has one), from a synchronous caller's thread; waits at most a second for it."""
    for found in hubs():
        assert found.loop is not None
        future = asyncio.run_coroutine_threadsafe(found.deliver_here(game_id, texts), found.loop)
        try:
            future.result(timeout=1)
        except Exception as exc:  # noqa: BLE001 - the republish and the resync still cover them
            log.warning("could not deliver the events of game %s here: %s", game_id, exc)
