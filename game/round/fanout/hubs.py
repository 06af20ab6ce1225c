"""Each process's :class:`Hub`: the owner of its games' :class:`~game.round.round.Round` objects
and of their subscriptions to the games' events.

The hub keeps one Round per game of the process (:meth:`Hub.round`) and one or more pub/sub
:class:`~game.round.fanout.line.Line` connections: the first socket of a game subscribes its
channel on the game's line (and waits for Redis to confirm), the last one to leave unsubscribes
it.  An event of game ``g`` is published once to ``<prefix>:game:g`` and reaches only the
processes with sockets of ``g``, which hand it to those sockets in memory: one Redis command
and one read per process serving the game (``checkers_game_events_read_total`` counts them).

A socket joins its game before reading its snapshot (:meth:`Hub.join`), so an event committed
after the snapshot was read always reaches it; the socket holds events back until its snapshot
is sent.  On one Redis server a hub has one line for every game; on a Redis Cluster
(``REDIS_CLUSTER_URL``) one per shard, each resubscribed on its own after a failover
(``docs/scaling.md``, "Redis Cluster").

The same lines read the channels of the process's *listeners* (:meth:`Hub.listen`), the rooms
above whose news is not a game's: the lobby's seek changes (:mod:`game.lobby.fanout`) are
published once to ``<prefix>:game:~lobby`` and read once by each process, on the connection
its games use.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections import OrderedDict
from typing import Any

from django.conf import settings

from checkers_site.ops import metrics
from game.round.events import read_publication
from game.round.fanout.line import Line, Listener, link_notice
from game.round.fanout.transport import ClusterTransport, Transport, Unavailable, prefix, record, transport
from game.round.records import Kept
from game.round.round import Member, Round

log = logging.getLogger(__name__)

#: Seconds a socket's join waits for its process's first subscription before giving up.
JOIN_TIMEOUT_S = 5.0
#: Seconds a socket's join waits for its game's subscription to be confirmed while the link to Redis
#: is up.  A busy process (a crowd connecting at once) confirms late, not never: failing the join
#: sends the page away to reconnect, which adds to the crowd.  A link that breaks meanwhile lets
#: the join go on at once (the ``link`` notice, then a snapshot when it is back).  Under the
#: deployment's 10-s handshake timeout (deploy/systemd); past this the join fails (4503) and the
#: page comes back later.
JOIN_PATIENCE_S = 8.0
#: Events this process delivered itself while they could not be published, whose own echo (when
#: the republish succeeds) is not delivered again; at most this many by game.
ECHOES_KEPT = 64
#: Games whose kept row and record (:class:`~game.round.records.Kept`) outlive their Round, so
#: that a page that reconnects plays its next move on them: at most this many, the least recently
#: dropped going first.
KEPT_AFTER_ROUND = 256


class Hub:
    """The games of one process (event loop) and its subscriptions to their events.

    ``rounds`` maps a game id to its :class:`~game.round.round.Round`.  ``lines`` are the pub/sub
    connections (:class:`~game.round.fanout.line.Line`): one on a single Redis server, one per
    shard on a cluster (``cluster_url``, sharded pub/sub).
    """

    def __init__(self, url: str, cluster_url: str = ""):
        self.url = url
        self.rounds: dict[str, Round] = {}
        self.kept: OrderedDict[str, Kept] = OrderedDict()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.prefix = prefix()
        self.transport: Transport = transport(url, cluster_url)
        self.lines: dict[int, Line] = {}
        #: The readers of the channels that are not games', by key (after the prefix, starting with
        #: ``~``, which no game id has): subscribed while the process runs.
        self.listeners: dict[str, Listener] = {}
        self._listening: dict[str, asyncio.Event] = {}

    # -- the games' Rounds

    def round(self, game_id: str) -> Round:
        """The game's Round in this process, made now if it has none."""
        found = self.rounds.get(game_id)
        if found is None:
            found = self.rounds[game_id] = Round(game_id, self.kept.pop(game_id, None), release=self._release)
        return found

    def _release(self, round_: Round) -> None:
        """Drop ``round_`` once it is idle; its kept row and record stay a while (:data:`KEPT_AFTER_ROUND`)."""
        if not round_.idle or self.rounds.get(round_.game_id) is not round_:
            return
        del self.rounds[round_.game_id]
        if round_.kept is not None:
            self.kept[round_.game_id] = round_.kept
            while len(self.kept) > KEPT_AFTER_ROUND:
                self.kept.popitem(last=False)

    @property
    def members(self) -> dict[str, set[Member]]:
        """This process's sockets by game (games with none are left out)."""
        return {g: r.members for g, r in self.rounds.items() if r.members}

    def has_members(self, game_id: str) -> bool:
        """Whether ``game_id`` has sockets in this process (a listener's key: always)."""
        if game_id in self.listeners:
            return True
        found = self.rounds.get(game_id)
        return found is not None and bool(found.members)

    def forget_snapshots(self) -> None:
        """Trust no snapshot kept of any game (as a process that has just started)."""
        for round_ in self.rounds.values():
            round_.snapshots.reset()

    # -- the client that publishes

    @property
    def client(self) -> Any:
        """The client the events are published with on one server (``redis.asyncio.Redis``); None on a
        cluster, whose shards have one each (:meth:`ClusterTransport.publisher`)."""
        return self.transport.client

    @client.setter
    def client(self, client: Any) -> None:
        self.transport.client = client

    # -- what the lines say, for the whole process (one line on a single Redis server)

    @property
    def subscriptions(self) -> int:
        """The link confirmations of every line so far."""
        return sum(line.subscriptions for line in self.lines.values())

    @property
    def lost(self) -> bool:
        """Whether some line's subscription is lost now."""
        return any(line.lost for line in self.lines.values())

    @property
    def confirmed(self) -> set[str]:
        """The games whose subscription Redis has confirmed on their line's current connection."""
        return set().union(*(line.confirmed for line in self.lines.values())).difference(self.listeners)

    def start(self) -> None:
        """Start the subscription of a single Redis server (once; a cluster's lines start as their
        first game joins)."""
        self.loop = asyncio.get_running_loop()
        if not isinstance(self.transport, ClusterTransport):
            self._line_by_key(0).start()

    def _line_by_key(self, key: int) -> Line:
        line = self.lines.get(key)
        if line is None:
            line = self.lines[key] = Line(self, key)
        return line

    def line_of(self, game_id: str) -> Line:
        """The line that reads ``game_id``'s channel (the cluster's slots must be known: after a join)."""
        return self._line_by_key(self.transport.line_key(self.prefix + game_id))

    # -- sockets joining and leaving

    async def join(self, game_id: str, member: Member) -> Round:
        """Give ``member`` every event of ``game_id`` published from now on; returns the game's Round.

        Waits for the first subscription of the game's line (at most
        :data:`JOIN_TIMEOUT_S` seconds), then for the game's (at most
        :data:`JOIN_PATIENCE_S` while the link stays up); raises
        :class:`~game.round.fanout.transport.Unavailable` when there is none by then (Redis
        down).  A line whose subscription was lost later lets sockets join at once (their
        snapshot comes from the database; events of this process reach them; their game is
        subscribed with the others when the link is back) and gives them the ``link`` notice
        that it is down, then a snapshot when it is back.
        """
        round_ = self.round(game_id)
        try:
            line = await self._line_ready(game_id)
            round_.members.add(member)
            if line.last_command.get(game_id) != "subscribe":
                line.command("subscribe", game_id)
            if line.lost:
                await member.deliver(link_notice(False), None)
            elif game_id not in line.confirmed and not await self._confirmation(round_, member):
                # The link broke while the join waited: as a join while it is down.
                await member.deliver(link_notice(False), None)
            return round_
        finally:
            round_.released()

    async def _line_ready(self, game_id: str) -> Line:
        """The game's line, started and subscribed at least once (or lost since).  Raises
        :class:`~game.round.fanout.transport.Unavailable`."""
        self.start()
        try:
            await asyncio.wait_for(self.transport.ready(), JOIN_TIMEOUT_S)
        except TimeoutError:
            raise Unavailable("no answer from the Redis Cluster") from None
        line = self.line_of(game_id)
        line.start()
        if not line.subscribed.is_set() and not line.lost:
            try:
                await asyncio.wait_for(line.subscribed.wait(), JOIN_TIMEOUT_S)
            except TimeoutError:
                raise Unavailable("no subscription to the game events") from None
        return line

    async def _confirmation(self, round_: Round, member: Member) -> bool:
        """Wait for the game's subscription to be confirmed: True, or False when the line's link
        broke first.  Raises :class:`~game.round.fanout.transport.Unavailable` (the member has
        left) when none came within :data:`JOIN_PATIENCE_S`."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        round_.joining.append(future)
        try:
            return await asyncio.wait_for(asyncio.shield(future), JOIN_PATIENCE_S)
        except TimeoutError:
            self.leave(round_.game_id, member)
            raise Unavailable(f"no subscription to the events of game {round_.game_id}") from None
        finally:
            if future in round_.joining:
                round_.joining.remove(future)

    async def listen(self, key: str, listener: Listener) -> None:
        """Give ``listener`` every message published to channel ``<prefix>:game:<key>`` (``key``
        starts with ``~``) from now on, for as long as the process runs; waits for Redis to confirm
        the subscription, as :meth:`join` does (on a line lost now: not at all).  Raises
        :class:`~game.round.fanout.transport.Unavailable` when none came in time (Redis down)."""
        line = await self._line_ready(key)
        self.listeners[key] = listener
        confirmed = self._listening.setdefault(key, asyncio.Event())
        if line.last_command.get(key) != "subscribe":
            confirmed.clear()
            line.command("subscribe", key)
        if line.lost or key in line.confirmed:
            return
        try:
            await asyncio.wait_for(confirmed.wait(), JOIN_PATIENCE_S)
        except TimeoutError:
            raise Unavailable(f"no subscription to {key}") from None

    def subscription_confirmed(self, game_id: str) -> None:
        """A line has ``game_id``'s subscription confirmed: its waiting joins (or listener) go on."""
        self.count_subscriptions()
        if game_id in self._listening:
            self._listening[game_id].set()
        self.wake_joins(game_id, True)

    def wake_joins(self, game_id: str, confirmed: bool) -> None:
        """Let the joins waiting for ``game_id``'s subscription go on: ``confirmed``, or False when
        the line's link broke first (they join as while it is down)."""
        found = self.rounds.get(game_id)
        if found is None:
            return
        joining, found.joining = found.joining, []
        for future in joining:
            if not future.done():
                future.set_result(confirmed)

    def count_subscriptions(self) -> None:
        """Set the gauge of the games subscribed (confirmed) on every line (listeners left out)."""
        metrics.game_subscriptions.set(sum(len(line.confirmed.difference(self.listeners))
                                           for line in self.lines.values()))

    def leave(self, game_id: str, member: Member) -> None:
        """Stop giving ``member`` the events of ``game_id`` (no error if it was not there)."""
        found = self.rounds.get(game_id)
        if found is None or member not in found.members:
            return
        found.members.discard(member)
        if not found.members:
            found.echoes.clear()
            found.snapshots.reset()     # no events of the game reach this process from now on
            line = self.line_of(game_id)
            line.confirmed.discard(game_id)
            if line.last_command.get(game_id) == "subscribe":
                line.command("unsubscribe", game_id)
            self.count_subscriptions()
        found.released()

    def line_lost(self, game_id: str) -> Line | None:
        """The line of ``game_id`` when its subscription is lost now, else None."""
        if not self.lines:
            return None
        try:
            line = self.line_of(game_id)
        except IndexError:   # a cluster's slots not known yet
            return None
        return line if line.lost else None

    # -- events in and out

    async def publish(self, game_id: str, texts: list[str]) -> None:
        """Publish the encoded events ``texts`` of ``game_id`` (or the messages of a listener's key:
        :meth:`listen`), in order, in one round trip.

        Raises :class:`~game.round.fanout.transport.Unavailable` when the publish fails, whatever
        the client raised (some may have gone out): redis-py raised ``AttributeError`` from a
        connection it had half closed during a failover, and a publish that failed so must still be
        delivered here, counted in an outage window and published again as any other.
        """
        record(game_id, texts)
        try:
            await self.transport.publish(self.prefix + game_id, texts)
        except Exception as exc:
            raise Unavailable(f"{type(exc).__name__}: {exc}") from exc

    async def dispatch(self, name: bytes, data: bytes) -> None:
        """An event came on channel ``name``: to the game's sockets here, unless it is the echo
        of one delivered here already (its publish had failed)."""
        key = name[len(self.prefix):].decode()
        listener = self.listeners.get(key)
        if listener is not None:
            await listener.hear(data)
            return
        found = self.rounds.get(key)
        if found is None or not found.members:
            metrics.game_events_read.labels(wanted="no").inc()
            return
        metrics.game_events_read.labels(wanted="yes").inc()
        text = data.decode()
        if text in found.echoes:
            found.echoes.remove(text)
            return
        await self._deliver(found, text)

    async def _deliver(self, round_: Round, text: str) -> None:
        follow, copies = read_publication(text)
        round_.snapshots.saw(copies)     # before any socket is sent it
        for member in list(round_.members):
            try:
                await member.deliver(copies, follow)
            except Exception:  # one socket's failure must not stop the others
                log.exception("could not deliver an event of game %s", round_.game_id)

    async def deliver_here(self, game_id: str, texts: list[str]) -> set[Member]:
        """Deliver published events ``texts`` of ``game_id`` to this process's sockets of that game
        at once, without Redis (their publish failed); their echo, when the republish succeeds,
        is not delivered again.  Returns the sockets they went to."""
        found = self.rounds.get(game_id)
        if found is None or not found.members:
            return set()
        reached = set(found.members)
        for text in texts:
            found.echoes.append(text)
            await self._deliver(found, text)
        del found.echoes[:-ECHOES_KEPT]
        return reached

    async def close(self) -> None:
        """Stop the subscriptions and close the connections (tests; a server just exits)."""
        for line in list(self.lines.values()):
            await line.close()
        await self.transport.aclose()


_hubs: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Hub] = weakref.WeakKeyDictionary()


def hub() -> Hub:
    """The hub of the running event loop (a server has one loop; each test has its own)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = Hub(settings.REDIS_URL, settings.REDIS_CLUSTER_URL)
    return found


def hubs() -> list[Hub]:
    """Every hub of this process whose event loop is running (a server has one)."""
    return [found for loop, found in list(_hubs.items())
            if not loop.is_closed() and loop.is_running() and found.loop is loop]
