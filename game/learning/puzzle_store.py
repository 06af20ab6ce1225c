"""The puzzles' storage: the shipped file and the database rows (storage only: nothing decided here).

The shipped set is ``game/learning/data/puzzles.jsonl``: one JSON object a line, as
:func:`game.learning.mining.solve` makes them plus ``source`` (where the position comes from).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .models import Puzzle

#: The shipped puzzles.
SHIPPED = Path(__file__).resolve().parent / "data" / "puzzles.jsonl"


def read(path: Path = SHIPPED) -> Iterator[dict[str, Any]]:
    """Every puzzle of a JSON-lines file (none when it does not exist)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def initial_rating(puzzle: dict[str, Any]) -> float:
    """A new puzzle's rating before anyone plays it: 1300, plus 150 a solver move past the first,
    plus 150 for a shot (a piece given first), plus 100 for a database win (docs/learning.md)."""
    moves = (len(puzzle["line"]) + 1) // 2
    themes = set(puzzle.get("themes", ()))
    return 1300.0 + 150 * (moves - 1) + 150 * ("shot" in themes) + 100 * (puzzle.get("gain") == "win")


def known_ids(path: Path | None) -> set[str]:
    """The ids of the puzzles in ``path`` (when given) and in the database."""
    ids = set(Puzzle.objects.values_list("id", flat=True))
    if path is not None:
        ids.update(p["id"] for p in read(path))
    return ids


def rows(puzzles: Iterable[dict[str, Any]], model: Any) -> list[Any]:
    """Unsaved ``model`` rows (the Puzzle model, or a migration's historical one) for ``puzzles``."""
    return [model(id=p["id"], before=p["before"], last_move=p["last_move"], fen=p["fen"], line=p["line"],
                  refutations=p.get("refutations", {}), themes=p.get("themes", []), source=p["source"][:200],
                  gain=p.get("gain", "material"), men=p.get("men", 1), rating=initial_rating(p))
            for p in puzzles]


def save(puzzles: Iterable[dict[str, Any]], model: Any = None) -> int:
    """Store the puzzles not stored yet; returns how many were new."""
    model = Puzzle if model is None else model
    fresh = rows(puzzles, model)
    before = model.objects.count()
    model.objects.bulk_create(fresh, ignore_conflicts=True, batch_size=500)
    return model.objects.count() - before
