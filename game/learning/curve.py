"""The win chance of a score: a logistic curve fitted on the results of real games.

A review turns the engine's score of a position (hundredths of a man, for the side to move, from a
search of :data:`~game.learning.judge.REVIEW_NODES` nodes) into the side to move's expected score,
``1 / (1 + exp(-K * score))``: 1 a sure win, ½ an even game (a draw, or equal chances), 0 a sure
loss. ``K`` was fitted by ``bench/win_chance.py`` on every position of the archive games that the
project ships (``tests/data/*.pdn``, with their results) scored at the review's effort: the ``K``
that makes the predicted score closest to the real result, in mean squared error, found by a
golden-section search (docs/learning.md, "The win chance"). Pure: no Django, no engine.

>>> round(win_chance(0), 3), win_chance(10**6) > 0.999, round(win_chance(-300) + win_chance(300), 6)
(0.5, True, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

#: The curve's slope (per hundredth of a man), fitted by ``bench/win_chance.py`` (docs/learning.md).
K = 0.0094


def win_chance(score: float, k: float = K) -> float:
    """The side to move's expected score (0-1) for an engine ``score`` (hundredths of a man, its view)."""
    x = -k * score
    if x > 700:  # exp would overflow: a score this bad is a sure loss
        return 0.0
    return 1.0 / (1.0 + math.exp(x))


def squared_error(k: float, samples: Sequence[tuple[float, float]]) -> float:
    """Mean squared difference between ``win_chance(score, k)`` and the result, over ``samples``:
    ``(score for Black in hundredths of a man, Black's result 1 / ½ / 0)``. Raises ValueError when
    ``samples`` is empty."""
    if not samples:
        raise ValueError("no samples to fit on")
    return sum((win_chance(score, k) - result) ** 2 for score, result in samples) / len(samples)


def fit(samples: Sequence[tuple[float, float]], low: float = 0.0001, high: float = 0.05,
        tolerance: float = 1e-6) -> float:
    """The ``K`` within ``[low, high]`` (per hundredth of a man) of least :func:`squared_error` on
    ``samples``, by golden-section search (the error is unimodal in ``K`` on real data).
    Raises ValueError for no samples or ``low >= high``."""
    if low >= high:
        raise ValueError(f"low must be below high, not {low} >= {high}")
    error: Callable[[float], float] = lambda k: squared_error(k, samples)  # noqa: E731
    ratio = (math.sqrt(5) - 1) / 2
    a, b = low, high
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = error(c), error(d)
    while b - a > tolerance:
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = error(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = error(d)
    return (a + b) / 2
