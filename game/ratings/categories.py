"""The categories a game is rated in, by its time control (pure Python, no Django).

As lichess: a live control's expected duration is ``initial + 40 x increment`` seconds (a game
of forty moves each); up to 179 s is bullet, up to 479 s blitz, up to 1499 s rapid, longer
classical.  Day controls (``3d``) are correspondence.  Untimed games have no category: they are
never rated.
"""

from __future__ import annotations

from game.clock import TimeControl

BULLET, BLITZ, RAPID, CLASSICAL, CORRESPONDENCE = "bullet", "blitz", "rapid", "classical", "correspondence"
#: Every category, fastest first.
CATEGORIES = (BULLET, BLITZ, RAPID, CLASSICAL, CORRESPONDENCE)
#: The longest expected duration (s) of each live category but the last.
LIMITS_S = ((BULLET, 179), (BLITZ, 479), (RAPID, 1499))
#: Moves a side is expected to play: the increment's weight in the expected duration.
EXPECTED_MOVES = 40


def expected_duration_s(control: TimeControl) -> int | None:
    """``initial + 40 x increment`` (s) of a live control; None for correspondence and untimed.

    >>> expected_duration_s(TimeControl.parse("3+2")), expected_duration_s(TimeControl.parse("3d"))
    (260, None)
    """
    if control.base_s is None:
        return None
    return control.base_s + EXPECTED_MOVES * control.increment_s


def category_of(control: TimeControl | str) -> str | None:
    """The category of ``control`` (a :class:`TimeControl` or its text), or None when untimed.

    >>> [category_of(tc) for tc in ("1+0", "3+2", "15+10", "30+0", "3d", "untimed")]
    ['bullet', 'blitz', 'rapid', 'classical', 'correspondence', None]

    Raises :class:`game.clock.TimeControlError` for text that is no time control.
    """
    if isinstance(control, str):
        control = TimeControl.parse(control)
    if control.days is not None:
        return CORRESPONDENCE
    duration = expected_duration_s(control)
    if duration is None:
        return None
    for category, limit in LIMITS_S:
        if duration <= limit:
            return category
    return CLASSICAL
