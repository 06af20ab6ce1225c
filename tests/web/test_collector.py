"""Python's garbage collector in a server process (checkers_site/ops/collector.py), tuned in a
process of its own: tuning the test process would change every later test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkers_site.ops import collector

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, django
django.setup()
from prometheus_client import REGISTRY
from checkers_site.ops import collector
before = gc.get_freeze_count()
first = collector.tune({thresholds!r}, freeze={freeze!r})
second = collector.tune("1,1,1")
junk = [[] for _ in range(10)]
for item in junk:
    item.append(item)          # cycles, which only the collector frees
del junk
gc.collect()
collector.flush()
count = REGISTRY.get_sample_value("checkers_gc_pause_seconds_count", {{"generation": "2"}})
print(json.dumps({{"threshold": gc.get_threshold(), "frozen_before": before, "frozen": gc.get_freeze_count(),
                  "first": first, "second": second, "full_collections_timed": count}}))
"""


def probe(thresholds: str, freeze: bool) -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "checkers_site.settings"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    done = subprocess.run([sys.executable, "-c", PROBE.format(thresholds=thresholds, freeze=freeze)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_server_process_freezes_what_it_made_and_collects_less_often():
    found = probe("", True)
    assert found["threshold"] == list(collector.SERVER_THRESHOLDS) == [10_000, 10, 10]
    assert found["frozen_before"] == 0 and found["frozen"] > 10_000
    assert (found["first"], found["second"]) == (True, False)
    assert found["full_collections_timed"] >= 1


def test_the_thresholds_and_the_freeze_follow_the_settings():
    found = probe("700,10,10", False)
    assert found["threshold"] == [700, 10, 10]
    assert found["frozen"] == 0


@pytest.mark.parametrize("text", ["1,2", "0,10,10", "700,0,10", "a,b,c", "700,10,10,10"])
def test_bad_thresholds_are_refused(text):
    with pytest.raises(ValueError):
        collector.parse_thresholds(text)

