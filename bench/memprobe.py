"""Daphne with a memory probe: what a server process holds, written out while it serves.

``bench/load.py --memprobe DIR`` starts its Daphne processes through this file instead of
``python -m daphne`` (same arguments).  Every ``MEMPROBE_EVERY`` seconds (60) a thread appends one
JSON line to ``DIR/memprobe-<pid>.jsonl``:

- ``t_s`` (since the process started), ``rss_mb``, and glibc's heap (``mallinfo2``: bytes in use
  by malloc, bytes free inside its arenas): RSS that malloc holds but nobody uses is fragmentation,
  not a leak;
- ``arenas``: every glibc arena (``malloc_stats``: the main one and the threads'), bytes taken
  from the system and in use; ``mallinfo2`` covers the main arena only;
- ``pymalloc``: Python's small-object allocator (arenas allocated, bytes in them);
- ``gc_objects``: objects the garbage collector tracks, and ``types``: the count of every type
  with at least ``MEMPROBE_MIN`` (10) of them, so two probes can be compared type by type;
  ``gc_collections`` per generation so far;
- with ``MEMPROBE_TRIM=1``, after each probe ``malloc_trim(0)`` (glibc gives free pages back)
  and ``rss_after_trim_mb``: how much of the RSS was free memory malloc kept;
- with ``MEMPROBE_TRACEMALLOC=N`` (frames kept per allocation; tracemalloc slows the process
  down noticeably, for short runs only): Python's traced memory, and the 25 source lines whose
  allocations grew most since the first probe after ``MEMPROBE_BASELINE_S`` (120 s), and
  ``traced_total_mb``, the traced memory of the site (this probe's own snapshots left out).

Nothing here changes how the site runs apart from the probe's own pauses (counting every
object takes ~0.1 s per 300,000 objects, once a probe).
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import re
import sys
import threading
import time
import tracemalloc
from collections import Counter

STARTED = time.monotonic()


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def _mallinfo() -> dict | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Mallinfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return None
    mb = lambda n: round(n / 2**20, 1)  # noqa: E731
    return {"arena_mb": mb(info.arena), "mmap_mb": mb(info.hblkhd), "in_use_mb": mb(info.uordblks),
            "free_in_arenas_mb": mb(info.fordblks), "releasable_mb": mb(info.keepcost)}


def _rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[1])
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def _stderr_of(function) -> str:
    """What ``function`` writes to the C stderr (fd 2), read through a pipe."""
    read, write = os.pipe()
    saved = os.dup(2)
    try:
        os.dup2(write, 2)
        function()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    return b"".join(chunks).decode(errors="replace")


def _glibc_arenas() -> dict | None:
    """``malloc_stats()``: system and in-use MB of each glibc arena, and in all (mmap included)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        text = _stderr_of(libc.malloc_stats)
    except (OSError, AttributeError):
        return None
    system = [int(n) for n in re.findall(r"system bytes\s*=\s*(\d+)", text)]
    in_use = [int(n) for n in re.findall(r"in use bytes\s*=\s*(\d+)", text)]
    mb = lambda n: round(n / 2**20, 1)  # noqa: E731
    if not system:
        return None
    # The last pair is the total (mmap included); the others are the arenas.
    return {"count": len(system) - 1, "system_mb": [mb(n) for n in system[:-1]],
            "in_use_mb": [mb(n) for n in in_use[:-1]], "total_system_mb": mb(system[-1]),
            "total_in_use_mb": mb(in_use[-1])}


def _pymalloc() -> dict:
    """Arenas of pymalloc from ``sys._debugmallocstats``."""
    out = {}
    for line in _stderr_of(sys._debugmallocstats).splitlines():
        for key, name in (("# arenas allocated current", "arenas"),
                          ("# bytes in allocated blocks", "allocated_bytes"),
                          ("# bytes in available blocks", "available_bytes")):
            if line.startswith(key):
                out[name] = int(line.split("=")[-1].replace(",", "").strip())
    return out


def _probe(path: str, least: int, baseline_s: float, state: dict) -> None:
    counts = Counter(type(o).__qualname__ for o in gc.get_objects())
    line: dict = {"t_s": round(time.monotonic() - STARTED, 1), "rss_mb": _rss_mb(),
                  "malloc": _mallinfo(), "arenas": _glibc_arenas(), "pymalloc": _pymalloc(),
                  "gc_objects": sum(counts.values()), "gc_collections": [s["collections"] for s in gc.get_stats()],
                  "types": {name: n for name, n in counts.most_common() if n >= least}}
    if tracemalloc.is_tracing():
        current, _peak = tracemalloc.get_traced_memory()
        line["traced_mb"] = round(current / 2**20, 1)
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, __file__)])
        line["traced_total_mb"] = round(sum(stat.size for stat in snapshot.statistics("filename")) / 2**20, 1)
        if state.get("baseline") is None and line["t_s"] >= baseline_s:
            state["baseline"], state["baseline_t"] = snapshot, line["t_s"]
        elif state.get("baseline") is not None:
            diffs = sorted(snapshot.compare_to(state["baseline"], "lineno"), key=lambda d: -d.size_diff)[:25]
            line["grown_since_s"] = state["baseline_t"]
            line["grown"] = [{"where": f"{d.traceback[0].filename}:{d.traceback[0].lineno}",
                              "kb": round(d.size_diff / 1024, 1), "count": d.count_diff} for d in diffs]
    if os.environ.get("MEMPROBE_TRIM") == "1":
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        line["rss_after_trim_mb"] = _rss_mb()
    with open(path, "a") as handle:
        handle.write(json.dumps(line) + "\n")


def start_probe() -> None:
    folder = os.environ.get("MEMPROBE_DIR")
    if not folder:
        return
    frames = int(os.environ.get("MEMPROBE_TRACEMALLOC", "0") or 0)
    if frames:
        tracemalloc.start(frames)
    every = float(os.environ.get("MEMPROBE_EVERY", "60"))
    least = int(os.environ.get("MEMPROBE_MIN", "10"))
    baseline_s = float(os.environ.get("MEMPROBE_BASELINE_S", "120"))
    path = os.path.join(folder, f"memprobe-{os.getpid()}.jsonl")
    state: dict = {}

    def loop() -> None:
        deadline = time.monotonic() + 6 * 3600       # bounded: the bench never runs this long
        while time.monotonic() < deadline:
            time.sleep(every)
            try:
                _probe(path, least, baseline_s, state)
            except Exception as exc:  # noqa: BLE001 - the probe must never stop the server
                with open(path, "a") as handle:
                    handle.write(json.dumps({"probe_error": repr(exc)}) + "\n")

    threading.Thread(target=loop, name="memprobe", daemon=True).start()


def main() -> None:
    start_probe()
    from daphne.cli import CommandLineInterface

    sys.argv = ["daphne", *sys.argv[1:]]
    CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
