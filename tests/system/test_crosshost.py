"""The cross-host load test, short: ``bench/crosshost.py``'s whole scenario (three hosts, two Daphne
processes on each behind the shipped nginx routing, the three-master Redis Cluster with its
replicas across hosts, PostgreSQL through PgBouncer in transaction pooling) with 30 games at a
think time of 1 s: 2 s of play, then 13 s measured during which the Redis master of host 3 is
killed (at 3 s) and, once its replica has taken over, the Daphne process h2-2 (at 8 s).

Asserted: no move a client saw is missing from the database or stored otherwise, no stored
move that no client sent at that ply, every game's plies contiguous and legal; no game ended
that no player ended; outage windows (clock pauses) only for games of the failed shard, some
of them, none for every game; every host's games moved; each process read about one event per
event of its own games (routing by game: ``bench/crosshost.py`` says how that is counted); the
killed process's sockets all came back.  The 60-s runs and their figures are in
``docs/performance/14-cross-host.md``.

Marked ``crosshost``: skipped unless selected (``pytest -m crosshost tests/system``), which
.ci/run does as a step of its own; it needs root, iproute2, nginx and PgBouncer.
"""

from __future__ import annotations

import shutil

import pytest

from bench import crosshost
from tests.system.hosts import pgbouncer_binary, unavailable

WHY_NOT = unavailable() or ("" if shutil.which("nginx") else "nginx is not installed") or (
    "" if pgbouncer_binary() else "PgBouncer is not installed")

pytestmark = [pytest.mark.crosshost, pytest.mark.skipif(bool(WHY_NOT), reason=WHY_NOT or "-")]


def test_games_across_hosts_through_a_failover_and_a_killed_process():
    result = crosshost.run(crosshost.options(games=30, think=1.0, warmup=2.0, duration=13.0, failover_at=3.0,
                                             daphne_kill_at=8.0))
    print(crosshost.table(result))
    totals, details = result["totals"], result["details"]
    assert totals["moves_acknowledged"] > 0 and totals["moves_stored"] >= totals["moves_acknowledged"]
    assert totals["lost"] == 0, details["lost"]
    assert totals["doubled"] == 0, details["doubled"]
    assert totals["false_results"] == 0, details["false_results"]
    assert totals["paused_games"] > 0
    assert totals["paused_other_shard_games"] == 0 and totals["every_game_windows"] == 0
    assert result["failover"]["heir_host"] != result["failover"]["host"]
    for host, figures in result["hosts"].items():
        assert figures["games_with_moves"] > 0 and figures["moves"] > 0, host
        # One read per event of the host's own games; a game's sockets spread over processes
        # would read each event once per process (2 or 3 here).
        assert 0.8 <= figures["events_ratio"] <= 1.2, (host, figures["processes"])
    assert result["daphne_kill"]["sockets"] > 0 and result["daphne_kill"]["all_back_after_s"] is not None
    assert result["problems"] == []
