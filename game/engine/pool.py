"""Running engine work off the event loop: a bounded pool of worker processes (or threads).

Searches are CPU-bound Python, so they run in worker processes: a search
never holds the server's event loop or its GIL. At most ``workers`` searches
run at once and at most ``max_waiting`` more wait for a worker; beyond that
:meth:`EnginePool.run` refuses at once with :class:`EngineBusy` rather than
queueing without end. Workers are started with ``spawn``, so they never
inherit a copy of a threaded server, and import only :mod:`game.engine`
and :mod:`game.rules`. A worker whose parent process is gone (killed with
SIGKILL, so it could not stop its workers) exits within
:data:`PARENT_CHECK_S` seconds instead of living on as an orphan.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import functools
import multiprocessing
import os
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any, ParamSpec, TypeVar

__all__ = ["EngineBusy", "EnginePool", "shutdown_all"]

P = ParamSpec("P")
T = TypeVar("T")


#: Seconds between a worker's checks that the process that started it is still its parent.
PARENT_CHECK_S = 0.5


def _watch_parent(parent_pid: int) -> None:
    """Worker initializer: a daemon thread that ends the worker at once when ``parent_pid`` is no
    longer its parent (the parent died and the worker was handed to another process)."""
    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="engine-parent-watch", daemon=True).start()


_pools: weakref.WeakSet[EnginePool] = weakref.WeakSet()


def shutdown_all(wait: bool = True) -> None:
    """Stop the workers of every engine pool of this process (run at exit, and by the tests'
    teardown), waiting for them to exit when ``wait``."""
    for pool in list(_pools):
        pool.shutdown(wait=wait)


atexit.register(shutdown_all)


class EngineBusy(Exception):
    """Every worker is busy and the waiting line is full: try again later."""


class EnginePool:
    """A bounded pool of engine workers.

    ``workers``: searches running at once (processes or threads);
    ``kind``: ``"process"`` (default) or ``"thread"``; ``max_waiting``: calls
    that may wait for a free worker. Raises ValueError for a bad ``kind`` or
    a count below its minimum (1 worker, 0 waiting). The workers start on
    first use; :meth:`shutdown` stops them.
    """

    def __init__(self, workers: int = 2, kind: str = "process", max_waiting: int = 8) -> None:
        if kind not in ("process", "thread"):
            raise ValueError(f"kind must be 'process' or 'thread', not {kind!r}")
        if workers < 1 or max_waiting < 0:
            raise ValueError("an engine pool needs at least 1 worker and a waiting line of 0 or more")
        self.workers = workers
        self.kind = kind
        self.max_waiting = max_waiting
        self._executor: concurrent.futures.Executor | None = None
        self._lock = threading.Lock()
        self._in_flight = 0
        _pools.add(self)

    @property
    def in_flight(self) -> int:
        """Calls running or waiting now."""
        return self._in_flight

    def _get_executor(self) -> concurrent.futures.Executor:
        with self._lock:
            if self._executor is None:
                if self.kind == "process":
                    self._executor = concurrent.futures.ProcessPoolExecutor(
                        max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                        initializer=_watch_parent, initargs=(os.getpid(),))
                else:
                    self._executor = concurrent.futures.ThreadPoolExecutor(
                        max_workers=self.workers, thread_name_prefix="engine")
            return self._executor

    def _reset(self, broken: concurrent.futures.Executor) -> None:
        with self._lock:
            if self._executor is broken:
                self._executor = None
        broken.shutdown(wait=False, cancel_futures=True)

    def _enter(self) -> None:
        with self._lock:
            if self._in_flight >= self.workers + self.max_waiting:
                raise EngineBusy(f"the engine is busy ({self._in_flight} searches running or waiting)")
            self._in_flight += 1

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    async def run(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run ``function(*args, **kwargs)`` in a worker and return its result, without blocking the loop.

        ``function`` and its arguments must be picklable (module-level
        functions, plain data) for a process pool. Raises :class:`EngineBusy`
        when the pool is full, and whatever ``function`` raises. A worker
        process that died is replaced, and the call is tried once more.
        """
        self._enter()
        try:
            loop = asyncio.get_running_loop()
            call = functools.partial(function, *args, **kwargs)
            for attempt in (1, 2):
                executor = self._get_executor()
                try:
                    return await loop.run_in_executor(executor, call)
                except BrokenProcessPool:
                    self._reset(executor)
                    if attempt == 2:
                        raise
            raise AssertionError("unreachable: the second attempt returns or raises")
        finally:
            self._leave()

    def call(self, function: Callable[..., T], *args: Any, timeout: float | None = None, **kwargs: Any) -> T:
        """Synchronous :meth:`run` for callers without an event loop (scripts, benchmarks).

        Raises :class:`EngineBusy`, ``concurrent.futures.TimeoutError`` after
        ``timeout`` seconds, and whatever ``function`` raises.
        """
        self._enter()
        try:
            return self._get_executor().submit(function, *args, **kwargs).result(timeout=timeout)
        finally:
            self._leave()

    def shutdown(self, wait: bool = False) -> None:
        """Stop the workers (a running search is abandoned; ``wait``: until they have exited); the
        pool starts new ones if used again."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=wait, cancel_futures=True)
