"""Server processes give their allocator's free memory back to the system."""

from __future__ import annotations

import threading

from checkers_site.ops import memory


def test_trimming_is_available_on_this_c_library():
    assert memory.trim() is True


def test_a_server_process_runs_the_trimming_thread():
    memory.start_process()   # once per process: an earlier import of the ASGI app may have started it
    assert "malloc-trim" in {thread.name for thread in threading.enumerate()}
