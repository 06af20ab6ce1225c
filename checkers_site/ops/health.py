"""Health endpoints for a load balancer: cheap, no session, no cookie.

``GET /healthz`` (liveness): ``200 ok`` while the process serves requests; it
touches neither the database nor Redis.

``GET /readyz`` (readiness): the database answers ``SELECT 1`` and Redis
``PING`` (with ``REDIS_CLUSTER_URL``, every master of the cluster too:
``"redis_cluster"``), each within :data:`CHECK_TIMEOUT_S` seconds, checked side by side;
``200`` with ``{"database": "ok", "redis": "ok"}``, else ``503`` with the
failed check's ``"timeout"`` or ``"error: <kind>"`` (the exception's class: the
full message, which may name hosts, goes to the log only).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
from collections.abc import Callable
from typing import Any

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpResponse
from redis.backoff import NoBackoff
from redis.retry import Retry

from checkers_site import redis_cluster

log = logging.getLogger(__name__)

#: Seconds each readiness check may take.
CHECK_TIMEOUT_S = 1.0

# A few threads of their own: a hung database must not take the threads pages run in, and checks
# that pile up behind a hung one time out instead of queueing more work.
_executor = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="readyz")
_redis: redis.Redis | None = None


def check_database() -> str:
    """``"ok"`` when the default database answers ``SELECT 1`` (a pooled connection, given back)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return "ok"
    finally:
        connection.close()


def check_redis() -> str:
    """``"ok"`` when ``REDIS_URL`` answers ``PING``."""
    global _redis
    if _redis is None:
        _redis = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=CHECK_TIMEOUT_S,
                                      socket_connect_timeout=CHECK_TIMEOUT_S, retry=Retry(NoBackoff(), 0))
    _redis.ping()
    return "ok"


_cluster: Any = None


def check_redis_cluster() -> str:
    """``"ok"`` when every master of the cluster of ``REDIS_CLUSTER_URL`` answers ``PING``."""
    global _cluster
    if _cluster is None:
        _cluster = redis_cluster.sync_client(settings.REDIS_CLUSTER_URL, socket_timeout=CHECK_TIMEOUT_S,
                                             socket_connect_timeout=CHECK_TIMEOUT_S)
    _cluster.ping(target_nodes=_cluster.PRIMARIES)
    return "ok"


CHECKS: dict[str, Callable[[], str]] = {"database": check_database, "redis": check_redis}
if settings.REDIS_CLUSTER_URL:
    CHECKS["redis_cluster"] = check_redis_cluster


def _outcome(name: str, future: concurrent.futures.Future | asyncio.Future, done: bool) -> str:
    if not done:
        log.warning("readiness: %s did not answer within %s s", name, CHECK_TIMEOUT_S)
        return "timeout"
    exc = future.exception()
    if exc is None:
        return future.result()
    log.warning("readiness: %s failed: %s", name, exc)
    return f"error: {type(exc).__name__}"


def _answer(results: dict[str, str]) -> HttpResponse:
    ready = all(result == "ok" for result in results.values())
    response = HttpResponse(json.dumps(results), status=200 if ready else 503, content_type="application/json")
    # Not logged again by Django as a server error (nor sent to Sentry) at every probe: the failed
    # check has its own line above.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def liveness() -> HttpResponse:
    return HttpResponse("ok\n", content_type="text/plain")


def readiness() -> HttpResponse:
    """The readiness answer, for a synchronous caller."""
    futures = {name: _executor.submit(check) for name, check in CHECKS.items()}
    done, _ = concurrent.futures.wait(futures.values(), timeout=CHECK_TIMEOUT_S)
    return _answer({name: _outcome(name, future, future in done) for name, future in futures.items()})


async def readiness_async() -> HttpResponse:
    """The readiness answer, on the event loop (the checks run in :data:`_executor`)."""
    futures = {name: asyncio.wrap_future(_executor.submit(check)) for name, check in CHECKS.items()}
    done, _ = await asyncio.wait(futures.values(), timeout=CHECK_TIMEOUT_S)
    return _answer({name: _outcome(name, future, future in done) for name, future in futures.items()})
