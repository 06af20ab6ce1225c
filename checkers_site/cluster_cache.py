"""Django's Redis cache on a Redis Cluster (``REDIS_CLUSTER_URL``; ``CACHES`` in the settings).

Django's own :class:`~django.core.cache.backends.redis.RedisCache` speaks to
one server: this backend is that cache with a ``redis.cluster.RedisCluster``
client, and its commands over several keys (which may fall in several slots)
split per key.  ``LOCATION`` is the cluster URL (``redis://h1:p1,h2:p2``).
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient, RedisSerializer

from checkers_site import redis_cluster


class RedisClusterCacheClient(RedisCacheClient):
    """The cache's client: one cluster client shared by every call (it is thread-safe)."""

    def __init__(self, servers: list[str], **options: Any):
        super().__init__(servers, **options)
        self._url = ",".join(servers)
        self._options = {k: v for k, v in options.items() if k in ("socket_timeout", "socket_connect_timeout")}
        self._cluster: Any = None
        self.serializer = RedisSerializer()

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        """The cluster client (connects on first use: raises ``redis.RedisError`` or
        ``RedisClusterException`` when no node answers)."""
        if self._cluster is None:
            self._cluster = redis_cluster.sync_client(self._url, **self._options)
        return self._cluster

    def get_many(self, keys: Any) -> dict[Any, Any]:
        keys = list(keys)
        values = self.get_client(None).mget_nonatomic(keys)
        return {k: self.serializer.loads(v) for k, v in zip(keys, values, strict=True) if v is not None}

    def set_many(self, data: Any, timeout: Any) -> None:
        pipeline = self.get_client(None, write=True).pipeline(transaction=False)
        for key, value in data.items():
            if timeout == 0:
                pipeline.delete(key)
            else:
                pipeline.set(key, self.serializer.dumps(value), ex=timeout)
        pipeline.execute()

    def delete_many(self, keys: Any) -> None:
        client = self.get_client(None, write=True)
        for key in keys:
            client.delete(key)


class RedisClusterCache(RedisCache):
    """:class:`~django.core.cache.backends.redis.RedisCache` on a Redis Cluster."""

    def __init__(self, server: str, params: dict[str, Any]):
        super().__init__(server, params)
        self._class = RedisClusterCacheClient
