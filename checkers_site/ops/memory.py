"""Giving freed memory back to the system, so a server process's resident size stays flat.

A server process's live objects stay the same over hours (docs/performance/10-memory.md), but
glibc's allocator keeps the pages it freed: under steady play the resident size of a Daphne process
crept up by 8 to 9 MB an hour, all of it free memory the allocator held.  A thread
of each server process calls ``malloc_trim(0)`` every ``MALLOC_TRIM_EVERY_S`` seconds (60; 0
turns it off), which returns those pages.  Without glibc (another C library) it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import threading
from collections.abc import Callable

from django.conf import settings

log = logging.getLogger(__name__)

_started = False


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def trim() -> bool:
    """Give the allocator's free pages back to the system now; False where that is not possible."""
    function = _malloc_trim()
    if function is None:
        return False
    function(0)
    return True


def start_process() -> bool:
    """Once per server process (``checkers_site.asgi``): start the thread that trims every
    ``MALLOC_TRIM_EVERY_S`` seconds.  Returns whether it runs."""
    global _started
    every = float(getattr(settings, "MALLOC_TRIM_EVERY_S", 60))
    function = _malloc_trim()
    if _started or every <= 0 or function is None:
        return False
    _started = True
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every):
            function(0)

    threading.Thread(target=loop, name="malloc-trim", daemon=True).start()
    return True
