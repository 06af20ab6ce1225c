"""Game events to every socket of a game: one Redis ``PUBLISH`` per event, fanned out in memory.

Publishing (:func:`publish`, :func:`publish_sync`) has one policy for every
publisher (the game socket, the computer, the pages): publish the committed
events; if Redis fails, the acting socket (when there is one) gets them
itself at once, and they are published again after
:data:`REPUBLISH_AFTER_S` seconds until one attempt succeeds.  Delivery is
at most once and the database stays the truth: a page that misses an event
sees a gap in ``v`` and asks for a snapshot.

Each server process (each event loop, in tests) has one :class:`Hub`.  The hub
keeps the game sockets of its process by game and holds one Redis pub/sub
connection subscribed to the pattern ``<prefix>:game:*``; an event of game
``g`` is published once to ``<prefix>:game:g`` and every process hands it to
its own sockets of ``g``.  Per move that is one Redis command and one read per
process, where channels-redis' group layer stored, popped and cleaned up a
copy per socket (``docs/performance.md``, "Live load").

Pub/sub keeps nothing: what is published while a process is not subscribed
never reaches it.  So the hub counts its subscriptions: every confirmation of
the subscription after the first (redis-py subscribes again by itself after a
reconnection, or the hub does after a failure) means events may have been
missed, and every socket of the process is told to resynchronise
(:meth:`Member.resync`: it sends its page a fresh snapshot, read after the
subscription is back, so nothing published before it is missing and
everything after it arrives).  Events carry ``v``, so a page ignores one it
already has.

A socket joins its game before reading its snapshot (:meth:`Hub.join`), so an
event committed after the snapshot was read always reaches it; the socket
holds events back until its snapshot is sent.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any, Protocol

import redis
import redis.asyncio
from django.conf import settings
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from checkers_site.ops import metrics
from game.round.events import Event, publications, read_publication
from game.sockets import in_background

log = logging.getLogger(__name__)

#: Seconds a socket's join waits for its process's first subscription before giving up.
JOIN_TIMEOUT_S = 5.0
#: Seconds between attempts to subscribe again after the subscription failed.
RETRY_S = 0.5
#: Redis connections of one process for publishing.
PUBLISH_MAX_CONNECTIONS = 50
#: The name the publishing connections give themselves (``CLIENT LIST``).
PUBLISH_CLIENT_NAME = "checkers-publish"


class Unavailable(Exception):
    """Redis could not be reached: no subscription (join) or no publish."""


#: Seconds after which events whose publish failed are published again (until one succeeds).
REPUBLISH_AFTER_S = (0.5, 2.0, 5.0)


class Member(Protocol):
    """What the hub needs of a game socket."""

    async def deliver(self, copies: list[tuple[str, str]], follow: dict[str, Any] | None) -> None:
        """Send one event to the page: ``copies`` are ``(roles, text)`` (an audience's roles, as
        :attr:`game.round.events.Audience.key`, and the JSON text of its copy), of which the socket
        sends the one for its role, if any; ``follow``: ``{"clock", "status"}`` of the state it
        carries, or None."""

    def resync(self) -> None:
        """Events may have been missed: send the page a fresh snapshot soon."""


def _prefix() -> str:
    return f"{settings.REDIS_PREFIX}:game:"


def channel(game_id: str) -> str:
    """The Redis pub/sub channel of a game's events: ``<prefix>:game:<id>``."""
    return _prefix() + game_id


class Hub:
    """The game sockets of one process (event loop) and its subscription to every game's events.

    ``members`` maps a game id to the set of this process's sockets of that
    game.  ``subscriptions`` counts the confirmations of the subscription so
    far (0: not subscribed yet).  Start it with :meth:`start`.
    """

    def __init__(self, url: str):
        self.url = url
        self.members: dict[str, set[Member]] = {}
        self.subscriptions = 0
        self.subscribed = asyncio.Event()
        self.prefix = _prefix()
        # A pooled connection that Redis closed (a restart, a failover) fails its next command:
        # the command is retried at once on a new connection, so the first publish after a
        # restart is not left to the republish half a second later.
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            url, max_connections=PUBLISH_MAX_CONNECTIONS, timeout=2,
            socket_timeout=5, socket_connect_timeout=5, client_name=PUBLISH_CLIENT_NAME,
            retry=AsyncRetry(NoBackoff(), 1))
        self.client = redis.asyncio.Redis(connection_pool=pool)
        self.reader: asyncio.Task | None = None

    def start(self) -> None:
        """Start the subscription (once)."""
        if self.reader is None:
            # A context of its own: its log lines are the process's, not those of the socket that
            # happened to start it (checkers_site/ops/logs.py).
            self.reader = asyncio.get_running_loop().create_task(self._read(), context=contextvars.Context())

    async def join(self, game_id: str, member: Member) -> None:
        """Give ``member`` every event of ``game_id`` published from now on.

        Waits for the process's first subscription (at most
        :data:`JOIN_TIMEOUT_S` seconds); raises :class:`Unavailable` when
        there is none by then (Redis down).
        """
        self.start()
        if not self.subscribed.is_set():
            try:
                await asyncio.wait_for(self.subscribed.wait(), JOIN_TIMEOUT_S)
            except TimeoutError:
                raise Unavailable("no subscription to the game events") from None
        self.members.setdefault(game_id, set()).add(member)

    def leave(self, game_id: str, member: Member) -> None:
        """Stop giving ``member`` the events of ``game_id`` (no error if it was not there)."""
        members = self.members.get(game_id)
        if members is not None:
            members.discard(member)
            if not members:
                del self.members[game_id]

    async def publish(self, game_id: str, texts: list[str]) -> None:
        """Publish the encoded events ``texts`` of ``game_id``, in order, in one round trip.

        Raises :class:`Unavailable` when Redis fails (some may have gone out).
        """
        name = self.prefix + game_id
        try:
            if len(texts) == 1:
                await self.client.publish(name, texts[0])
                return
            async with self.client.pipeline(transaction=False) as pipe:
                for text in texts:
                    pipe.publish(name, text)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            raise Unavailable(str(exc)) from exc

    async def _read(self) -> None:
        while True:
            connection = redis.asyncio.Redis.from_url(
                self.url, socket_connect_timeout=5, socket_keepalive=True)
            pubsub = connection.pubsub()
            try:
                await pubsub.psubscribe(self.prefix + "*")
                while True:
                    message = await pubsub.get_message(timeout=None)
                    if message is None:
                        continue
                    if message["type"] == "pmessage":
                        await self._dispatch(message["channel"], message["data"])
                    elif message["type"] == "psubscribe":
                        self._subscribed()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis failed: subscribe again, then resync
                self.subscribed.clear()
                log.warning("game events subscription lost: %s", exc)
                await asyncio.sleep(RETRY_S)
            finally:
                try:
                    await pubsub.aclose()
                    await connection.aclose()
                except Exception:  # noqa: BLE001 - the connection is already broken
                    pass

    def _subscribed(self) -> None:
        """A confirmation of the subscription: after the first, events may have been missed."""
        self.subscriptions += 1
        self.subscribed.set()
        if self.subscriptions > 1:
            sockets = [m for members in self.members.values() for m in members]
            metrics.resubscriptions.inc()
            metrics.resyncs.inc(len(sockets))
            log.warning("game events subscribed again: resynchronising %d sockets", len(sockets))
            for member in sockets:
                member.resync()

    async def _dispatch(self, name: bytes, data: bytes) -> None:
        game_id = name[len(self.prefix):].decode()
        members = self.members.get(game_id)
        if not members:
            return
        follow, copies = read_publication(data.decode())
        for member in list(members):
            try:
                await member.deliver(copies, follow)
            except Exception:  # one socket's failure must not stop the others
                log.exception("could not deliver an event of game %s", game_id)

    async def close(self) -> None:
        """Stop the subscription and close the connections (tests; a server just exits)."""
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)
            self.reader = None
        await self.client.aclose()


_hubs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_sync_client: redis.Redis | None = None


def hub() -> Hub:
    """The hub of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = Hub(settings.REDIS_URL)
    return found


def _publish_sync(game_id: str, texts: list[str]) -> None:
    """:meth:`Hub.publish` for synchronous callers (views); raises :class:`Unavailable`."""
    global _sync_client
    if _sync_client is None:
        _sync_client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=5,
                                            socket_connect_timeout=5, client_name=PUBLISH_CLIENT_NAME,
                                            retry=Retry(NoBackoff(), 1))
    try:
        pipe = _sync_client.pipeline(transaction=False)
        for text in texts:
            pipe.publish(channel(game_id), text)
        pipe.execute()
    except (RedisError, OSError, ValueError) as exc:  # ValueError: a socket closed under redis-py
        raise Unavailable(str(exc)) from exc


class Fallback(Protocol):
    """The acting socket, which gets its own events directly when they cannot be published."""

    async def send_event(self, event: Event) -> None:
        """Send ``event`` (its copy for this socket's role) to this socket's page."""


async def publish(game_id: str, events: Sequence[Event], fallback: Fallback | None = None) -> bool:
    """Send committed ``events`` to every socket of the game, in order (one round trip).

    Returns False when Redis failed: the change is stored all the same;
    ``fallback`` (the acting socket) is then sent the events itself, and they
    are published again in the background after :data:`REPUBLISH_AFTER_S`
    (a page that gets one twice ignores the second: events carry ``v``).
    """
    if not events:
        return True
    texts = publications(events)
    try:
        await hub().publish(game_id, texts)
        metrics.events_published.inc(len(texts))
        return True
    except Unavailable as exc:
        metrics.first_publish_failed.inc()
        log.warning("could not publish to game %s: %s", game_id, exc)
    if fallback is not None:
        for event in events:
            await fallback.send_event(event)
    in_background(_republish(game_id, texts))
    return False


async def _republish(game_id: str, texts: list[str]) -> None:
    """Publish again, a few times, events whose publish failed.

    Without this the game's other sockets would wait for a next event to notice the gap, and
    the next event is the opponent's move, which waits for this one.
    """
    for delay in REPUBLISH_AFTER_S:
        await asyncio.sleep(delay)
        try:
            await hub().publish(game_id, texts)
            metrics.events_republished.inc(len(texts))
            return
        except Unavailable as exc:
            metrics.republish_failed.inc()
            log.warning("could not publish to game %s again: %s", game_id, exc)


def publish_sync(game_id: str, events: Sequence[Event]) -> bool:
    """:func:`publish` for synchronous callers (the pages): publish, or else publish again from a
    background thread after :data:`REPUBLISH_AFTER_S`.  Returns False when the first try failed."""
    if not events:
        return True
    texts = publications(events)
    try:
        _publish_sync(game_id, texts)
        metrics.events_published.inc(len(texts))
        return True
    except Unavailable as exc:
        metrics.first_publish_failed.inc()
        log.warning("could not publish to game %s: %s", game_id, exc)

    def again() -> None:
        for delay in REPUBLISH_AFTER_S:
            time.sleep(delay)
            try:
                _publish_sync(game_id, texts)
                metrics.events_republished.inc(len(texts))
                return
            except Unavailable as exc:
                metrics.republish_failed.inc()
                log.warning("could not publish to game %s again: %s", game_id, exc)

    threading.Thread(target=again, name=f"republish:{game_id}", daemon=True).start()
    return False

