"""The learning tests: reviews, puzzles, lessons. The heavy ones (mark ``heavy``: every shipped
puzzle verified again) run only when asked for: ``pytest -m heavy tests/learning`` (.ci/run does)."""

from __future__ import annotations

import pytest

from game.engine import native


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "heavy" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="heavy: run with `pytest -m heavy tests/learning` (.ci/run does)")
    for item in items:
        if "heavy" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def three_pieces(tmp_path_factory):
    """This process's searches and verdicts use a database of every position with at most 3 pieces
    (whatever the checkout has built), so what the tests see does not depend on var/endgames."""
    if not native.available():
        pytest.skip("the compiled core is not built")
    original = native.ENDGAME_DIR
    native.ENDGAME_DIR = tmp_path_factory.mktemp("endgames")
    path = native.ENDGAME_DIR / "endgames-3.bin"
    native.build_endgames(3, path)
    native.unload_endgames()
    native.load_endgames(path)
    yield path
    native.ENDGAME_DIR = original
    native.unload_endgames()
