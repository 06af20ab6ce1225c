"""The heavy engine tests (mark ``heavy``) run only when asked for: ``pytest -m heavy tests/engine``.

.ci/run runs them as a step of their own; ``make test`` and plain ``pytest`` skip them.

The engine tests never load the checkout's own endgame database (``var/endgames``): what they see
does not depend on whether someone built it; tests/engine/test_endgames.py builds its own.
"""

from __future__ import annotations

import pytest

from game.engine import native


@pytest.fixture(autouse=True, scope="session")
def _no_checkout_endgames(tmp_path_factory):
    if not native.available():
        yield
        return
    original = native.ENDGAME_DIR
    native.ENDGAME_DIR = tmp_path_factory.mktemp("no-endgames")
    native.unload_endgames()
    yield
    native.ENDGAME_DIR = original
    native.unload_endgames()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "heavy" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="heavy: run with `pytest -m heavy tests/engine` (.ci/run does)")
    for item in items:
        if "heavy" in item.keywords:
            item.add_marker(skip)
