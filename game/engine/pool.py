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
from typing import Any, ParamSpec, Protocol, TypeVar

__all__ = ["EngineBusy", "EnginePool", "PoolObserver", "shutdown_all"]

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


#: Every executor an engine pool of this process has started and not shut down: held here, not
#: only by its pool, so that the workers of a pool nobody refers to any more are stopped too.
_executors: set[concurrent.futures.Executor] = set()
_executors_lock = threading.Lock()


def shutdown_all(wait: bool = True) -> None:
    """Stop the workers of every engine pool of this process (run at exit, and by the tests'
    teardown), waiting for them to exit when ``wait``."""
    for pool in list(_pools):
        pool.shutdown(wait=wait)
    with _executors_lock:
        executors = list(_executors)
        _executors.clear()
    for executor in executors:
        executor.shutdown(wait=wait, cancel_futures=True)


_pools: weakref.WeakSet[EnginePool] = weakref.WeakSet()


atexit.register(shutdown_all)


class EngineBusy(Exception):
    """Every worker is busy and the waiting line is full: try again later."""


class PoolObserver(Protocol):
    """What a pool tells whoever watches it (the site's metrics): told under the pool's lock, so
    each call must be quick and must not call the pool."""

    def in_flight(self, running_or_waiting: int, workers: int) -> None:
        """Calls running or waiting now (those beyond ``workers`` wait), after each change."""

    def waited(self, seconds: float) -> None:
        """A call waited ``seconds`` from its submission until a worker started it."""

    def busy(self) -> None:
        """A call was refused with :class:`EngineBusy`."""


def _stamped(call: Callable[[], T]) -> tuple[float, T]:
    """Run ``call`` in the worker; return the (wall-clock) time it started with its result."""
    return time.time(), call()


class EnginePool:
    """A bounded pool of engine workers.

    ``workers``: searches running at once (processes or threads);
    ``kind``: ``"process"`` (default) or ``"thread"``; ``max_waiting``: calls
    that may wait for a free worker; ``observer``: told the calls in flight, each call's wait for a
    worker and each refusal (:class:`PoolObserver`). Raises ValueError for a bad ``kind`` or
    a count below its minimum (1 worker, 0 waiting). The workers start on
    first use; :meth:`shutdown` stops them.
    """

    def __init__(self, workers: int = 2, kind: str = "process", max_waiting: int = 8,
                 observer: PoolObserver | None = None) -> None:
        if kind not in ("process", "thread"):
            raise ValueError(f"kind must be 'process' or 'thread', not {kind!r}")
        if workers < 1 or max_waiting < 0:
            raise ValueError("an engine pool needs at least 1 worker and a waiting line of 0 or more")
        self.workers = workers
        self.kind = kind
        self.max_waiting = max_waiting
        self.observer = observer
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
                with _executors_lock:
                    _executors.add(self._executor)
            return self._executor

    def _reset(self, broken: concurrent.futures.Executor) -> None:
        with self._lock:
            if self._executor is broken:
                self._executor = None
        with _executors_lock:
            _executors.discard(broken)
        broken.shutdown(wait=False, cancel_futures=True)

    def _enter(self) -> None:
        with self._lock:
            if self._in_flight >= self.workers + self.max_waiting:
                if self.observer is not None:
                    self.observer.busy()
                raise EngineBusy(f"the engine is busy ({self._in_flight} searches running or waiting)")
            self._in_flight += 1
            if self.observer is not None:
                self.observer.in_flight(self._in_flight, self.workers)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1
            if self.observer is not None:
                self.observer.in_flight(self._in_flight, self.workers)

    async def _submit(self, loop: asyncio.AbstractEventLoop, executor: concurrent.futures.Executor,
                      call: Callable[[], T]) -> T:
        if self.observer is None:
            return await loop.run_in_executor(executor, call)
        submitted = time.time()
        started, result = await loop.run_in_executor(executor, functools.partial(_stamped, call))
        self.observer.waited(max(0.0, started - submitted))
        return result

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
                    return await self._submit(loop, executor, call)
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
            with _executors_lock:
                _executors.discard(executor)
            executor.shutdown(wait=wait, cancel_futures=True)
