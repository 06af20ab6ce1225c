"""The site's cache (``CACHES``): Django's Redis cache, failing open.

The cache holds allauth's log-in and sign-up rate limits (and a guest's log-in remembered for a
seek it made before, :mod:`game.accounts.identity`).  Without this, a Redis that does not answer
made every log-in, sign-up and password reset page answer 500: allauth counts in the cache before
it looks at the form.  Here, as the site's other limits do (:mod:`game.http_limits`,
:mod:`game.round.admission`), a cache that cannot reach Redis answers as an empty cache that
keeps nothing: ``get`` gives the default, ``add`` and ``set`` succeed without storing, ``delete``
deletes nothing.  So the pages work, uncounted, until Redis is back, and a warning is logged.

After a failure the cache does not try Redis again for :data:`RETRY_AFTER_S` seconds (each thread
has a cache object of its own, Django's ``caches``, and so its own wait): a Redis that does not
answer at all (each try waits for the connect timeout, 2 s) costs a page one wait, not one per
command (a log-in runs about ten).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

from checkers_site.cluster_cache import RedisClusterCache

log = logging.getLogger(__name__)

#: Seconds during which a cache whose Redis just failed answers without trying it.
RETRY_AFTER_S = 5.0

T = TypeVar("T")


def _unreachable_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [RedisError, OSError]
    try:
        from redis.exceptions import RedisClusterException
    except ImportError:  # an older redis-py: its cluster errors are RedisErrors
        pass
    else:
        errors.append(RedisClusterException)
    return tuple(errors)


#: What a Redis that cannot be reached raises (refused, reset, timed out, no node of a cluster).
UNREACHABLE = _unreachable_errors()


class FailOpen:
    """Mixed into a Redis cache backend: each command that fails to reach Redis gives the answer
    of an empty cache that keeps nothing (see the module docstring)."""

    #: Until when (time.monotonic()) this cache object answers without trying Redis.
    _down_until = 0.0

    def _failing_open(self, answer: Callable[[], T], fallback: T, what: str) -> T:
        """``answer()`` (a call to Redis), or ``fallback`` when Redis failed now or less than
        :data:`RETRY_AFTER_S` seconds ago."""
        if time.monotonic() < self._down_until:
            return fallback
        try:
            return answer()
        except UNREACHABLE as exc:
            self._down_until = time.monotonic() + RETRY_AFTER_S
            log.warning("cache unavailable (%s not kept, limits not counted for %.0f s): %s",
                        what, RETRY_AFTER_S, exc)
            return fallback

    def add(self, key: Any, value: Any, timeout: Any = None, version: Any = None) -> bool:
        return self._failing_open(functools.partial(super().add, key, value, timeout, version),  # type: ignore[misc]
                                  True, "add")

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        return self._failing_open(functools.partial(super().get, key, default, version),  # type: ignore[misc]
                                  default, "get")

    def set(self, key: Any, value: Any, timeout: Any = None, version: Any = None) -> None:
        self._failing_open(functools.partial(super().set, key, value, timeout, version),  # type: ignore[misc]
                           None, "set")

    def touch(self, key: Any, timeout: Any = None, version: Any = None) -> bool:
        return self._failing_open(functools.partial(super().touch, key, timeout, version),  # type: ignore[misc]
                                  False, "touch")

    def delete(self, key: Any, version: Any = None) -> bool:
        return self._failing_open(functools.partial(super().delete, key, version),  # type: ignore[misc]
                                  False, "delete")

    def get_many(self, keys: Any, version: Any = None) -> dict[Any, Any]:
        return self._failing_open(functools.partial(super().get_many, keys, version),  # type: ignore[misc]
                                  {}, "get_many")

    def has_key(self, key: Any, version: Any = None) -> bool:
        return self._failing_open(functools.partial(super().has_key, key, version),  # type: ignore[misc]
                                  False, "has_key")

    def set_many(self, data: Any, timeout: Any = None, version: Any = None) -> list[Any]:
        return self._failing_open(functools.partial(super().set_many, data, timeout, version),  # type: ignore[misc]
                                  [], "set_many")

    def delete_many(self, keys: Any, version: Any = None) -> None:
        self._failing_open(functools.partial(super().delete_many, keys, version),  # type: ignore[misc]
                           None, "delete_many")


class FailOpenRedisCache(FailOpen, RedisCache):
    """Django's :class:`~django.core.cache.backends.redis.RedisCache`, failing open."""


class FailOpenRedisClusterCache(FailOpen, RedisClusterCache):
    """:class:`checkers_site.cluster_cache.RedisClusterCache` (a Redis Cluster), failing open."""
