"""Prometheus metrics of the live site, and the ``/metrics`` page that shows them.

One server process: the metrics live in prometheus_client's default registry.
Several Daphne processes: set ``PROMETHEUS_MULTIPROC_DIR`` to an empty folder
(emptied at every start of the service) in the environment of every process;
each then writes its values to files there and a scrape of any process adds up
every process's (prometheus_client's multiprocess mode; the gauges count the
live processes only).

The instruments are few and cheap on the hot path: counters with their labels
bound once, incremented where the thing happens.

===============================================  ================================================
``checkers_moves_accepted_total``                moves played from a game socket and stored
``checkers_moves_refused_total{code}``           moves refused, by error code (``illegal_move``...)
``checkers_move_seconds``                        a move's frame arriving to its events published
``checkers_gc_pause_seconds{generation}``        the garbage collector's pauses (checkers_site/ops/collector.py)
``checkers_keepalives_answered_total``           pings answered by the websocket transport (checkers_site/keepalive.py)
``checkers_open_sockets{kind}``                  open ``game`` and ``lobby`` sockets
``checkers_events_published_total``              game events published to Redis
``checkers_events_republished_total``            events published again after a failure
``checkers_event_publish_failures_total{when}``  publishes that failed (``first``, ``again``)
``checkers_resubscriptions_total``               the hub subscribing again (events may be lost)
``checkers_resyncs_total``                       sockets sent a snapshot after a resubscription
``checkers_game_events_read_total{wanted}``      game events this process read from Redis: ``yes`` for a
                                                 game it has sockets of, ``no`` for one it has none of
                                                 (the latter is the cost of routing: a game's sockets on
                                                 several processes, or a subscription being dropped)
``checkers_game_subscriptions``                  games this process is subscribed to
``checkers_claims_total{outcome}``               claims, by outcome (``claimed_win``, ``opponent_present``...)
``checkers_presence_failures_total{op}``         presence reads and writes that Redis failed
``checkers_engine_in_flight{pool}``              searches running or waiting (``computer``, ``analysis``)
``checkers_engine_queue_length{pool}``           searches waiting for a worker
``checkers_engine_wait_seconds{pool}``           a search's wait for a worker
``checkers_engine_busy_total{pool}``             searches refused: every worker busy, the line full
``checkers_db_pool_connections{state}``          PostgreSQL pool: ``size``, ``available``, ``max``
``checkers_db_pool_requests_waiting``            requests waiting for a pooled connection
``checkers_db_pool_requests_total`` ...          connections lent, queued, failed (this process)
``checkers_db_pool_sampled{stat}``               multiprocess mode: the same, sampled, summed
``checkers_http_request_seconds{view,method,``   each page or JSON request Django answered: the time
``status}``                                      from the first middleware to its response (a streamed
                                                 one's start); ``_count`` is the rate by view and status
===============================================  ================================================

``/metrics`` (:func:`view`) answers only when ``METRICS_ENABLED`` (default on),
and only to a client address in ``METRICS_ALLOWED_ADDRESSES`` (default the
loopback addresses) or a request with ``Authorization: Bearer <METRICS_TOKEN>``.
"""

from __future__ import annotations

import atexit
import hmac
import logging
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

#: Several processes write their values to files in this folder (None: one process, in memory).
MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None

LATENCY_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
ENGINE_WAIT_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

GC_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

moves_accepted = Counter("checkers_moves_accepted", "Moves played from a game socket and stored.")
moves_refused = Counter("checkers_moves_refused", "Moves refused, by error code.", ["code"])
move_seconds = Histogram("checkers_move_seconds", "A move's frame arriving to its events published.",
                         buckets=LATENCY_BUCKETS)
moves_stored = Counter("checkers_moves_stored", "Moves stored, by the game row they were decided on: the one kept "
                       "after the game's last move here (one statement) or the row locked and read.", ["row"])
moves_on_kept_row = moves_stored.labels("kept")
moves_on_locked_row = moves_stored.labels("locked")
keepalives_answered = Counter("checkers_keepalives_answered", "Game pages' pings answered by the websocket transport.")
handshakes_shed = Counter("checkers_websocket_handshakes_shed", "Websocket handshakes answered 4503 (busy) after "
                          "waiting WEBSOCKET_SHED_AFTER_S for their turn (checkers_site/connect_gate.py).")
gc_pause = Histogram("checkers_gc_pause_seconds", "Pauses of Python's garbage collector, by generation.",
                     ["generation"], buckets=GC_BUCKETS)
open_sockets = Gauge("checkers_open_sockets", "Open websockets by kind.", ["kind"],
                     multiprocess_mode="livesum")
game_sockets = open_sockets.labels("game")
lobby_sockets = open_sockets.labels("lobby")
events_published = Counter("checkers_events_published", "Game events published to Redis.")
events_republished = Counter("checkers_events_republished", "Game events published again after a failure.")
publish_failures = Counter("checkers_event_publish_failures", "Publishes of game events that failed.", ["when"])
first_publish_failed = publish_failures.labels("first")
republish_failed = publish_failures.labels("again")
resubscriptions = Counter("checkers_resubscriptions",
                          "The hub's subscription confirmed again: events may have been missed.")
resyncs = Counter("checkers_resyncs", "Sockets sent a fresh snapshot after the hub subscribed again.")
game_events_read = Counter("checkers_game_events_read", "Game events this process read from Redis, by whether "
                           "it has sockets of the game.", ["wanted"])
game_subscriptions = Gauge("checkers_game_subscriptions", "Games whose events this process is subscribed to.",
                           multiprocess_mode="livesum")
claims = Counter("checkers_claims", "Claims against a player who left, by outcome.", ["outcome"])
presence_failures = Counter("checkers_presence_failures", "Presence reads and writes Redis failed.", ["op"])
engine_in_flight = Gauge("checkers_engine_in_flight", "Engine searches running or waiting.", ["pool"],
                         multiprocess_mode="livesum")
engine_queue = Gauge("checkers_engine_queue_length", "Engine searches waiting for a worker.", ["pool"],
                     multiprocess_mode="livesum")
engine_wait = Histogram("checkers_engine_wait_seconds", "An engine search's wait for a worker.", ["pool"],
                        buckets=ENGINE_WAIT_BUCKETS)
engine_busy = Counter("checkers_engine_busy", "Engine searches refused: every worker busy.", ["pool"])
# Multiprocess mode: each process samples its own pool (DB_POOL_SAMPLE_S); the gauges add up the live ones.
db_pool_gauge = Gauge("checkers_db_pool_sampled", "PostgreSQL connection pool, sampled per process.",
                      ["stat"], multiprocess_mode="livesum") if MULTIPROC_DIR else None

http_seconds = Histogram("checkers_http_request_seconds", "Requests Django answered, by view (the URL pattern's "
                         "name), method and status: seconds to the response.", ["view", "method", "status"],
                         buckets=HTTP_BUCKETS)

#: The ``view`` of a request no URL pattern matched (a 404, or answered by a middleware first).
UNRESOLVED = "unresolved"
#: The methods shown as they are; any other is shown as ``other`` (a client cannot add labels).
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

#: Seconds between two samples of a process's database pool in multiprocess mode.
DB_POOL_SAMPLE_S = 5.0

_refused: dict[str, Counter] = {}
_claims: dict[str, Counter] = {}


def move_accepted(arrived_mono: float) -> None:
    """A move that arrived at ``arrived_mono`` (``time.monotonic()``) was stored and published."""
    moves_accepted.inc()
    move_seconds.observe(time.monotonic() - arrived_mono)


def move_refused(code: str) -> None:
    """A move was refused with the error ``code``."""
    counter = _refused.get(code)
    if counter is None:
        counter = _refused[code] = moves_refused.labels(code)
    counter.inc()


def claim_outcome(outcome: str) -> None:
    """A claim ended with ``outcome``: ``claimed_win``, ``claimed_draw`` or a refusal's code."""
    counter = _claims.get(outcome)
    if counter is None:
        counter = _claims[outcome] = claims.labels(outcome)
    counter.inc()


def request_served(request: HttpRequest, status: int, seconds: float) -> None:
    """``request`` was answered with ``status`` after ``seconds``: one observation of
    ``checkers_http_request_seconds`` labelled with its view's name (:data:`UNRESOLVED` when no
    pattern matched), its method (``other`` beyond :data:`HTTP_METHODS`) and the status."""
    match = getattr(request, "resolver_match", None)
    view = match.view_name if match is not None else UNRESOLVED
    method = request.method if request.method is not None and request.method in HTTP_METHODS else "other"
    http_seconds.labels(view, method, str(status)).observe(seconds)


class EngineObserver:
    """What an engine pool (:class:`game.engine.EnginePool`, ``observer=``) tells about itself."""

    def __init__(self, pool: str) -> None:
        self.in_flight_gauge = engine_in_flight.labels(pool)
        self.queue_gauge = engine_queue.labels(pool)
        self.wait = engine_wait.labels(pool)
        self.busy_counter = engine_busy.labels(pool)

    def in_flight(self, running_or_waiting: int, workers: int) -> None:
        self.in_flight_gauge.set(running_or_waiting)
        self.queue_gauge.set(max(0, running_or_waiting - workers))

    def waited(self, seconds: float) -> None:
        self.wait.observe(seconds)

    def busy(self) -> None:
        self.busy_counter.inc()


# --- the database pool -----------------------------------------------------------------------

#: psycopg_pool's statistics shown, and the metric of each (cumulative ones since the pool opened).
POOL_GAUGES = {"pool_size": "size", "pool_available": "available", "pool_max": "max"}
POOL_COUNTERS = {"requests_num": "checkers_db_pool_requests", "requests_queued": "checkers_db_pool_requests_queued",
                 "requests_errors": "checkers_db_pool_requests_errors",
                 "connections_lost": "checkers_db_pool_connections_lost"}


def _pool_stats(alias: str = "default") -> dict[str, int] | None:
    """The statistics of this process's pool of ``alias``, or None (SQLite, or no pool opened yet:
    reading them never opens one)."""
    from django.db import connections

    wrapper = connections[alias]
    pools = getattr(type(wrapper), "_connection_pools", None)
    pool = pools.get(alias) if pools is not None else None
    return pool.get_stats() if pool is not None else None


class DatabasePoolCollector(Collector):
    """This process's PostgreSQL pool at scrape time (one process; multiprocess mode samples)."""

    def collect(self) -> Iterator[Any]:
        stats = _pool_stats()
        if stats is None:
            return
        connections = GaugeMetricFamily("checkers_db_pool_connections", "PostgreSQL pool connections.",
                                        labels=["state"])
        for stat, state in POOL_GAUGES.items():
            connections.add_metric([state], stats.get(stat, 0))
        yield connections
        yield GaugeMetricFamily("checkers_db_pool_requests_waiting", "Requests waiting for a pooled connection.",
                                value=stats.get("requests_waiting", 0))
        for stat, name in POOL_COUNTERS.items():
            yield CounterMetricFamily(name, f"psycopg_pool {stat} since the pool opened.", value=stats.get(stat, 0))


def _sample_pool_forever() -> None:
    assert db_pool_gauge is not None
    while True:
        try:
            stats = _pool_stats()
            if stats is not None:
                for stat in (*POOL_GAUGES, "requests_waiting", *POOL_COUNTERS):
                    db_pool_gauge.labels(stat).set(stats.get(stat, 0))
        except Exception as exc:  # noqa: BLE001 - a sample is a convenience; the next one tries again
            log.debug("could not sample the database pool: %s", exc)
        time.sleep(DB_POOL_SAMPLE_S)


_started = False


def start_process() -> None:
    """Once per server process (``checkers_site.asgi``): in multiprocess mode, sample the database
    pool in a daemon thread and drop this process's gauges when it exits."""
    global _started
    if _started or MULTIPROC_DIR is None:
        return
    _started = True
    atexit.register(multiprocess.mark_process_dead, os.getpid())
    threading.Thread(target=_sample_pool_forever, name="metrics-db-pool", daemon=True).start()


if MULTIPROC_DIR is None:
    REGISTRY.register(DatabasePoolCollector())


# --- /metrics --------------------------------------------------------------------------------

def allowed(request: HttpRequest) -> bool:
    """Whether ``request`` may read the metrics: ``Authorization: Bearer <METRICS_TOKEN>``, or a
    client address in ``METRICS_ALLOWED_ADDRESSES``."""
    token = getattr(settings, "METRICS_TOKEN", "")
    if token:
        given = request.headers.get("Authorization", "")
        if hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return True
    addresses = getattr(settings, "METRICS_ALLOWED_ADDRESSES", ["127.0.0.1", "::1"])
    return request.META.get("REMOTE_ADDR") in addresses


def exposition() -> bytes:
    """Every metric in Prometheus' text format (all processes' in multiprocess mode)."""
    if MULTIPROC_DIR is None:
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=MULTIPROC_DIR)
    return generate_latest(registry)


def view(request: HttpRequest) -> HttpResponse:
    """``GET /metrics``: 404 when ``METRICS_ENABLED`` is off, 403 to a client not allowed."""
    if not getattr(settings, "METRICS_ENABLED", True):
        return HttpResponse("Not found\n", status=404, content_type="text/plain")
    if not allowed(request):
        return HttpResponse("Forbidden\n", status=403, content_type="text/plain")
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
