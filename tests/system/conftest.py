"""The system tests.  The cross-host load test (mark ``crosshost``: three hosts, nginx, a Redis
Cluster's failover and a killed Daphne process under load) runs only when asked for:
``pytest -m crosshost tests/system`` (.ci/run runs it as a step of its own)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "crosshost" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="crosshost: run with `pytest -m crosshost tests/system` (.ci/run does)")
    for item in items:
        if item.get_closest_marker("crosshost") is not None:
            item.add_marker(skip)
