"""The lobby's news to every home page: one message a change for all the processes, one frame a page.

A change to a pool (a seek made, cancelled, paired, put back) is published once, as the pool's id, to
the channel ``<prefix>:game:~lobby`` (:func:`changed`; the changes a process makes in one turn of its
event loop go as one message), whatever the number of pages watching.  Each process's
:class:`Fanout` reads that channel on its hub's pub/sub connection
(:meth:`game.round.fanout.hubs.Hub.listen`), gathers the pools changed within :data:`WINDOW_S`,
then reads their counts and their visible seeks (two pipelined reads side by side), encodes the
news once and writes those same texts to its lobby sockets:

- to a page that watches the seeks, one ``seeks`` frame with every pool changed in the window
  (``pools``, and their counts in ``waiting``); a page whose player blocks or is blocked by the
  player of a listed seek gets a copy of its own without it (:func:`game.lobby.seeklist.visible`);
- to the other lobby sockets, one ``pool`` frame a pool changed.

So a change costs one ``PUBLISH``, one read a process, and one frame a page, and a burst of changes
within the window costs no more than one.  A process whose subscription was lost sends every
pool's news to its pages when it is back (:meth:`Fanout.resync`); each page's own refresh every
10 s (:meth:`game.lobby.socket.LobbyConsumer.send_counts`) covers what a failed publish missed.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Iterable
from typing import Protocol

import orjson

from game.lobby import pools, seeklist
from game.lobby.pairing import POOLS, is_pool_id
from game.round.fanout import Unavailable, hub
from game.sockets import in_background

log = logging.getLogger(__name__)

#: The key of the lobby's channel in the hub (``<prefix>:game:~lobby``; no game id has a ``~``).
CHANNEL_KEY = "~lobby"
#: Seconds a process gathers the changes it hears before it reads and sends them.
WINDOW_S = 0.05


class Page(Protocol):
    """What the fan-out needs of a lobby socket (:class:`game.lobby.socket.LobbyConsumer`)."""

    #: The page shows the seeks (it sent ``watch``).
    watching: bool
    #: The players whose seeks this page is not shown.
    hidden: frozenset[str]

    async def send_text(self, text: str) -> None:
        """Write ``text``, one frame already encoded, to the page as it is
        (:func:`checkers_site.handshakes.send_frame`)."""


def encode(message: dict) -> str:
    """``message`` as the compact JSON text of one frame."""
    return orjson.dumps(message).decode()


class Fanout:
    """The lobby sockets of one process (event loop) and the changes heard for them."""

    def __init__(self) -> None:
        self.pages: set[Page] = set()
        #: Pools heard changed and not sent yet.
        self.changed: set[str] = set()
        #: The task that waits out the window, then reads and sends (None: nothing heard).
        self.sending: asyncio.Task | None = None
        self.listening = False
        self._subscribing = asyncio.Lock()

    async def join(self, page: Page) -> None:
        """Send ``page`` the news of every change heard from now on.  The process's first page
        subscribes it to the lobby's channel and waits until Redis has confirmed it.  Raises
        :class:`~game.round.fanout.transport.Unavailable` (the page is left out) when Redis could
        not confirm it."""
        if not self.listening:
            async with self._subscribing:
                if not self.listening:
                    await hub().listen(CHANNEL_KEY, self)
                    self.listening = True
        self.pages.add(page)

    def leave(self, page: Page) -> None:
        """Send ``page`` nothing more (no error if it was not there)."""
        self.pages.discard(page)

    async def hear(self, data: bytes) -> None:
        """A change published by some process: pool ids separated by spaces (others are ignored)."""
        self.note(pool for pool in data.decode(errors="replace").split() if is_pool_id(pool))

    def resync(self) -> None:
        """The subscription is back after a loss: changes may have been missed, so every pool's."""
        self.note(POOLS)

    def note(self, pool_ids: Iterable[str]) -> None:
        """Send the news of ``pool_ids`` at the end of the window (one opens if none is open)."""
        self.changed.update(pool_ids)
        if self.changed and self.sending is None:
            self.sending = in_background(self._send_while_changed())

    async def _send_while_changed(self) -> None:
        try:
            while self.changed:
                await asyncio.sleep(WINDOW_S)
                changed, self.changed = self.changed, set()
                try:
                    await self.send_news(sorted(changed))
                except pools.MatchmakingUnavailable as exc:
                    log.warning("lobby: could not read the pools that changed: %s", exc)
                except Exception:  # a failure here must not stop the later news
                    log.exception("lobby: sending the news of %s failed", changed)
        finally:
            self.sending = None

    async def send_news(self, pool_ids: list[str]) -> None:
        """Read the counts and visible seeks of ``pool_ids`` and write them to every page here, each
        text encoded once.  Raises :class:`game.lobby.pools.MatchmakingUnavailable`."""
        listed = await seeklist.lists(pool_ids)
        seeks_text = encode(seeklist.visible(listed, frozenset()))
        counts_texts = [encode({"type": "pool", "pool": pool, "waiting": waiting})
                        for pool, waiting in listed["waiting"].items()]
        owners = listed.get("owners")
        for page in list(self.pages):
            try:
                if not page.watching:
                    for text in counts_texts:
                        await page.send_text(text)
                elif owners and page.hidden and not page.hidden.isdisjoint(owners.values()):
                    await page.send_text(encode(seeklist.visible(listed, page.hidden)))
                else:
                    await page.send_text(seeks_text)
            except Exception as exc:  # noqa: BLE001 - a page that closed as the news went out
                log.debug("lobby: news to a closing socket: %s", exc)


_fanouts: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Fanout] = weakref.WeakKeyDictionary()


def fanout() -> Fanout:
    """The fan-out of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    found = _fanouts.get(loop)
    if found is None:
        found = _fanouts[loop] = Fanout()
    return found


_outgoing: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, set[str]] = weakref.WeakKeyDictionary()


def changed(pool: str) -> None:
    """Tell every process that ``pool`` changed (its count, its seeks): one ``PUBLISH`` at the event
    loop's next turn, with every pool changed until then.  A failed publish is logged (the pages'
    own refresh shows the change within 10 s)."""
    loop = asyncio.get_running_loop()
    pending = _outgoing.get(loop)
    if pending is None:
        pending = _outgoing[loop] = set()
        in_background(_publish(loop))
    pending.add(pool)


async def _publish(loop: asyncio.AbstractEventLoop) -> None:
    pool_ids = _outgoing.pop(loop, set())
    try:
        await hub().publish(CHANNEL_KEY, [" ".join(sorted(pool_ids))])
    except Unavailable as exc:
        log.warning("lobby: could not publish the change of %s: %s", ", ".join(sorted(pool_ids)), exc)
