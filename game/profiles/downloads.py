"""Streaming a player's whole archive (``/@/<name>/games.pdn``) without starving the live games.

- **Off the event loop, in threads of their own.**  Each batch (:func:`game.profiles.pdn_file.batch`:
  three queries, no replay) is read and written in the process's download threads
  (``PDN_DOWNLOAD_THREADS``, default 2): every download of the process takes turns there, so
  however many run, at most that many threads compete with the event loop for the GIL, and the
  game sockets' own database threads are never taken.  A batch holds the GIL for a small part of
  its time (1.4 s of CPU for 20,000 games, the rest is PostgreSQL's), so two threads let two
  downloads wait for the database side by side.  Memory holds one batch per download.
  While a download runs, the GIL is handed over every millisecond instead of every five
  (:data:`SWITCH_INTERVAL_S`), so the event loop never waits long for it.
- **Counted.**  Per session and per client address (``PDN_RATE_LIMIT_SESSION``,
  ``PDN_RATE_LIMIT_ADDRESS``) and, for a client without a session, per address again under the
  stricter ``PDN_RATE_LIMIT_ANONYMOUS`` (:mod:`game.http_limits`, in Redis, 429 with
  ``Retry-After``); and at most ``PDN_DOWNLOADS_PER_PROCESS`` at once in a process, more refused
  at once with 503 and ``Retry-After``.
- **Whole, or visibly cut.**  A file not finished ``PDN_DOWNLOAD_DEADLINE_S`` seconds after it
  started (keep it under Daphne's ``--http-timeout``) raises :class:`DownloadCut` before its next
  batch: the server aborts the connection (``checkers_site/serve.py``), so the chunked body
  never gets its last chunk and the client sees the file incomplete, never a shorter file that
  looks whole.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils.translation import gettext as _

from game import http_limits
from game.profiles import pdn_file

R = TypeVar("R")

#: Whole archives per session and per address (settings, limits' notation).
DOWNLOAD = http_limits.Rule("pdn_download", "PDN_RATE_LIMIT_SESSION", "PDN_RATE_LIMIT_ADDRESS")
#: Whole archives per address of clients without a session (no player id in their cookie): counted
#: per address only (its session setting is never read: there is no session to count).
ANONYMOUS = http_limits.Rule("pdn_anonymous", "PDN_RATE_LIMIT_ANONYMOUS", "PDN_RATE_LIMIT_ANONYMOUS")
#: Seconds a client refused for a full process is told to wait.
BUSY_RETRY_S = 10


class DownloadCut(Exception):
    """A file could not be finished within ``PDN_DOWNLOAD_DEADLINE_S``: raised from its stream so
    that the server aborts the response instead of ending it as if it were whole."""


#: Python's switch interval (s) while a download runs in the process: a thread holding the GIL
#: is asked to hand it over after this long, and the event loop waits for it at most this long
#: each time it wakes (the default, 5 ms, cost a move up to 5 ms at each of its wake-ups while a
#: download's thread computed).
SWITCH_INTERVAL_S = 0.001


class Slots:
    """The downloads running in this process, at most ``PDN_DOWNLOADS_PER_PROCESS`` (read at each
    :meth:`take`); while any runs, Python's switch interval is :data:`SWITCH_INTERVAL_S`, the
    process's own before and after.  Thread-safe: views take, streams on the event loop give back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.taken = 0
        self._interval = sys.getswitchinterval()

    def take(self) -> Callable[[], None] | None:
        """A slot, as the function that gives it back (once, however often it is called), or None
        when every slot is taken."""
        with self._lock:
            if self.taken >= settings.PDN_DOWNLOADS_PER_PROCESS:
                return None
            if self.taken == 0:
                self._interval = sys.getswitchinterval()
                sys.setswitchinterval(min(self._interval, SWITCH_INTERVAL_S))
            self.taken += 1
        given_back = threading.Event()

        def give_back() -> None:
            with self._lock:
                if not given_back.is_set():
                    given_back.set()
                    self.taken -= 1
                    if self.taken == 0:
                        sys.setswitchinterval(self._interval)

        return give_back


#: This process's download slots.
slots = Slots()
_executor: ThreadPoolExecutor | None = None


def in_download_thread(func: Callable[..., R]) -> Callable[..., Any]:
    """``func`` as a coroutine function run in this process's download threads
    (``PDN_DOWNLOAD_THREADS``), stale database connections closed before and after, as Django
    does around a request."""
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(settings.PDN_DOWNLOAD_THREADS, thread_name_prefix="pdn-download")

    def run(*args: Any) -> R:
        close_old_connections()
        try:
            return func(*args)
        finally:
            close_old_connections()

    return sync_to_async(run, thread_sensitive=False, executor=_executor)


async def texts(player_id: str, site: str, give_back: Callable[[], None],
                deadline_s: float | None = None) -> AsyncIterator[str]:
    """The PDN file of ``player_id``'s games, oldest first, a batch (text) at a time; gives its slot
    back when it ends, however it ends.  Raises :class:`DownloadCut` when ``deadline_s`` (default
    ``PDN_DOWNLOAD_DEADLINE_S``) seconds pass before the last batch."""
    deadline = time.monotonic() + (settings.PDN_DOWNLOAD_DEADLINE_S if deadline_s is None else deadline_s)
    read = in_download_thread(pdn_file.batch)
    try:
        cursor: pdn_file.Cursor = None
        while True:
            if time.monotonic() > deadline:
                raise DownloadCut(f"the file of {player_id} was not finished in time")
            batch = await read(player_id, site, cursor)
            if batch.text:
                yield batch.text
            if batch.cursor is None:
                return
            cursor = batch.cursor
            await asyncio.sleep(0)   # the loop's other work before this download's next turn
    finally:
        give_back()


def refused(request: HttpRequest, player_id: str | None) -> HttpResponse | None:
    """The answer refusing this download up front (429 over a rate, 503 with every slot of the
    process taken), or None.  Counts the request against the rates (Redis)."""
    address = http_limits.client_address(request)
    wait = http_limits.retry_after(DOWNLOAD, player_id, address)
    if wait is None and not player_id:
        wait = http_limits.retry_after(ANONYMOUS, None, address)
    if wait is not None:
        return _plain(429, _("Too many archive downloads; try again in %(seconds)s s.") % {"seconds": wait}, wait)
    return None


def _plain(status: int, text: str, retry_after_s: int) -> HttpResponse:
    response = HttpResponse(text + "\n", status=status, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry_after_s)
    return response


def response(request: HttpRequest, player_id: str | None, account_player: str,
             filename: str) -> HttpResponse | StreamingHttpResponse:
    """The whole-archive download of the account whose player id is ``account_player`` for this
    request (``player_id`` the viewer's, None for a client without a session): refused up front
    (:func:`refused`, or 503 when the process runs ``PDN_DOWNLOADS_PER_PROCESS`` already), else
    streamed (:func:`texts`; a HEAD request gets the headers only)."""
    refusal = refused(request, player_id)
    if refusal is not None:
        return refusal
    give_back = slots.take()
    if give_back is None:
        return _plain(503, _("Too many archive downloads right now; try again in %(seconds)s s.")
                      % {"seconds": BUSY_RETRY_S}, BUSY_RETRY_S)
    if request.method == "HEAD":
        give_back()
        streamed = StreamingHttpResponse([], content_type="application/x-pdn; charset=utf-8")
    else:
        streamed = StreamingHttpResponse(texts(account_player, request.get_host(), give_back),
                                         content_type="application/x-pdn; charset=utf-8")
        weakref.finalize(streamed, give_back)   # a response dropped before its stream started
    streamed["Content-Disposition"] = f'attachment; filename="{filename}"'
    return streamed
