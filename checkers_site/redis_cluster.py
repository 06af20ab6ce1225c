"""The site's Redis Cluster, when ``REDIS_CLUSTER_URL`` names one (``docs/scaling.md``, "Redis Cluster").

``REDIS_CLUSTER_URL`` lists some (or all) of the cluster's nodes:
``redis://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002``; a client learns the
rest, and which node serves which slot, from any one that answers.  Empty: no
cluster, everything is on the one Redis of ``REDIS_URL`` (the default).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster
from redis.exceptions import RedisClusterException, RedisError

from checkers_site.redis_pools import BlockingPool


def nodes(url: str) -> list[tuple[str, int]]:
    """The ``(host, port)`` of each node named in ``url`` (``redis://h1:p1,h2:p2``, port 6379 when
    left out).  Raises ``ValueError`` when ``url`` names none or is not a ``redis://`` URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "redis+cluster"):
        raise ValueError(f"a Redis Cluster URL starts with redis:// ({url!r})")
    found = []
    for entry in parts.netloc.rsplit("@", 1)[-1].split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, _, port = entry.rpartition(":") if ":" in entry else (entry, "", "6379")
        found.append((host or "127.0.0.1", int(port)))
    if not found:
        raise ValueError(f"no node in the Redis Cluster URL {url!r}")
    return found


def limits_url(url: str) -> str:
    """``url`` as the ``limits`` library's storage URL for a cluster (``redis+cluster://h1:p1,...``)."""
    return "redis+cluster://" + ",".join(f"{host}:{port}" for host, port in nodes(url))


def async_client(url: str, **options: Any) -> redis.asyncio.cluster.RedisCluster:
    """An asyncio cluster client of the nodes in ``url``; ``options`` go to each node's connections
    (``socket_timeout``, ``client_name``...).  Connects on first use."""
    startup = [redis.asyncio.cluster.ClusterNode(host, port) for host, port in nodes(url)]
    return redis.asyncio.cluster.RedisCluster(startup_nodes=startup, **options)


def sync_client(url: str, **options: Any) -> redis.cluster.RedisCluster:
    """A synchronous cluster client of the nodes in ``url`` (connects at once: raises
    ``redis.RedisError`` when no node answers)."""
    startup = [redis.cluster.ClusterNode(host, port) for host, port in nodes(url)]
    return redis.cluster.RedisCluster(startup_nodes=startup, **options)


#: What a Redis command may raise, on one server or a cluster (some cluster errors are no ``RedisError``).
ERRORS: tuple[type[Exception], ...] = (RedisError, RedisClusterException, OSError)
#: The same and ``ValueError``, which a synchronous client raises when a socket closed under it.
ERRORS_OR_VALUE: tuple[type[Exception], ...] = (*ERRORS, ValueError)


def site_async_client(max_connections: int, **options: Any) -> Any:
    """A new asyncio client of the site's Redis for one event loop: the cluster of
    ``REDIS_CLUSTER_URL`` when set, else the server of ``REDIS_URL`` through a
    :class:`checkers_site.redis_pools.BlockingPool` of ``max_connections`` (callers wait up to 2 s
    for a free one).  ``options``: connection options (``socket_timeout``, ``retry``...)."""
    from django.conf import settings

    if settings.REDIS_CLUSTER_URL:
        options.pop("retry", None)   # the cluster client retries on the new topology itself
        return async_client(settings.REDIS_CLUSTER_URL, max_connections=max_connections, **options)
    pool = BlockingPool.from_url(settings.REDIS_URL, max_connections=max_connections, timeout=2, **options)
    return redis.asyncio.Redis(connection_pool=pool)


def site_sync_client(**options: Any) -> Any:
    """A synchronous client of the site's Redis (the cluster of ``REDIS_CLUSTER_URL`` when set,
    else ``REDIS_URL``); ``options`` as for :func:`site_async_client`.  A cluster client connects
    at once: raises ``redis.RedisError`` or ``RedisClusterException`` when no node answers."""
    from django.conf import settings

    if settings.REDIS_CLUSTER_URL:
        options.pop("retry", None)
        return sync_client(settings.REDIS_CLUSTER_URL, **options)
    return redis.Redis.from_url(settings.REDIS_URL, **options)


def site_limits_url() -> str:
    """The ``limits`` library's storage URL of the site's Redis: ``redis+cluster://...`` for the
    cluster of ``REDIS_CLUSTER_URL`` when set, else ``REDIS_URL``."""
    from django.conf import settings

    return limits_url(settings.REDIS_CLUSTER_URL) if settings.REDIS_CLUSTER_URL else settings.REDIS_URL


def limits_storage(url: str, key_prefix: str) -> Any:
    """The ``limits`` storage at ``url`` (:func:`site_limits_url`) under ``key_prefix``; its errors
    are raised as ``limits.errors.StorageError``.  Each moving window is one key, so one slot."""
    from limits.errors import StorageError
    from limits.storage import storage_from_string

    try:
        return storage_from_string(url, key_prefix=key_prefix, wrap_exceptions=True,
                                   socket_timeout=2, socket_connect_timeout=2)
    except ERRORS as exc:   # a cluster client connects at once
        raise StorageError(exc) from exc
