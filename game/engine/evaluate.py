"""The static evaluation: how good a position is for the side to move, in hundredths of a man.

The terms, each from Black's point of view and subtracted for White's mirror image, with the
weights of :data:`WEIGHTS` (the compiled core's default weights, same names; docs/engine.md, "The
evaluation", says how they were tuned):

- **material**: a man is worth :data:`MAN` (100), a king :data:`KING` (130);
- **tempo and advancement**: each man earns points for the rows it has
  advanced, little in the opening and more as the board empties (a man
  near its crowning row is a threat), plus a bonus on the last two rows;
- **back-rank defence**: men still on their own back row (most on the
  "bridge" squares 1 and 3 for Black, 30 and 32 for White) while the opponent
  still has men that could crown;
- **centre control**: pieces on the four centre squares 14, 15, 18, 19 and,
  less, on 10, 11, 22, 23; kings lose a little on the edge;
- **trading down**: the side ahead in material gains as pieces come off;
- **the hunt**: in the ending, the side ahead keeps its kings close to the
  opponent's pieces instead of waiting for the forty-move rule.

>>> from game.rules import Position
>>> from game.engine.movegen import state_of
>>> evaluate(*state_of(Position.initial()))
0
>>> evaluate(*state_of(Position.from_fen("B:W30:B1,2"))) > MAN
True
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["WEIGHTS", "MAN", "KING", "evaluate"]

#: The weights, by the compiled core's names (its ``DEFAULT_WEIGHTS`` must hold the same values:
#: tests/engine/test_core_differential.py compares the two evaluations). Tuned by bench/texel.py.
WEIGHTS: dict[str, int] = {
    "man": 100, "king": 130,
    "tempo_opening": -5, "tempo_early": -2, "tempo_middle": 0, "tempo_late": 3,
    "row5": -10, "row6": 1, "row7": 0,
    "bridge": 35, "back": -8,
    "centre": -4, "inner": -5, "king_centre": 5, "king_edge": 1,
    "trade": 40, "hunt": 6,
}

#: Value of a man.
MAN = WEIGHTS["man"]
#: Value of a king.
KING = WEIGHTS["king"]
_TEMPO = (WEIGHTS["tempo_opening"], WEIGHTS["tempo_early"], WEIGHTS["tempo_middle"], WEIGHTS["tempo_late"])
_BRIDGE, _BACK = WEIGHTS["bridge"], WEIGHTS["back"]
_CENTRE, _INNER = WEIGHTS["centre"], WEIGHTS["inner"]
_KING_CENTRE, _KING_EDGE = WEIGHTS["king_centre"], WEIGHTS["king_edge"]
_TRADE, _HUNT = WEIGHTS["trade"], WEIGHTS["hunt"]


def _mask(*squares: int) -> int:
    mask = 0
    for square in squares:
        mask |= 1 << (square - 1)
    return mask


ROWS = tuple(0xF << (4 * r) for r in range(8))  # row 0 = squares 1-4 (White's crowning row)
BLACK_BRIDGE = _mask(1, 3)
BLACK_BACK = _mask(2, 4)
WHITE_BRIDGE = _mask(30, 32)
WHITE_BACK = _mask(29, 31)
CENTRE = _mask(14, 15, 18, 19)
INNER = _mask(10, 11, 22, 23)
EDGE = _mask(1, 2, 3, 4, 5, 12, 13, 20, 21, 28, 29, 30, 31, 32)


def _coordinates(index: int) -> tuple[int, int]:
    row = index // 4
    return row, 2 * (index % 4) + (1 if row % 2 == 0 else 0)


#: DISTANCE[i][j]: king steps from square index i to j (all dark squares share a colour).
DISTANCE = tuple(
    tuple(max(abs(_coordinates(i)[0] - _coordinates(j)[0]), abs(_coordinates(i)[1] - _coordinates(j)[1]))
          for j in range(32))
    for i in range(32)
)


def _row_weights(pieces: int) -> tuple[int, ...]:
    """Points for a Black man on each row 0-7 (row 7 never holds a man) with ``pieces`` on the board."""
    if pieces >= 20:
        tempo = _TEMPO[0]
    elif pieces > 12:
        tempo = _TEMPO[1]
    elif pieces > 8:
        tempo = _TEMPO[2]
    else:
        tempo = _TEMPO[3]
    bonus = (0, 0, 0, 0, WEIGHTS["row5"], WEIGHTS["row6"], WEIGHTS["row7"], 0)
    return tuple(tempo * row + bonus[row] for row in range(8))


#: ROW_WEIGHTS[pieces on the board][row] for Black men; White's rows are mirrored.
ROW_WEIGHTS = tuple(_row_weights(n) for n in range(25))
_BLACK_ROWS = tuple(zip(range(1, 7), ROWS[1:7], strict=True))
_WHITE_ROWS = tuple(zip(range(1, 7), ROWS[6:0:-1], strict=True))


def _bits(mask: int) -> Iterator[int]:
    while mask:
        bit = mask & -mask
        mask ^= bit
        yield bit.bit_length() - 1


def _hunt(kings: int, targets: int) -> int:
    """Sum over ``kings`` of the distance to the nearest piece of ``targets``."""
    total = 0
    target_list = list(_bits(targets))
    for k in _bits(kings):
        row = DISTANCE[k]
        total += min(row[t] for t in target_list)
    return total


def evaluate(own: int, opp: int, kings: int, black: bool) -> int:
    """Score of the position for the side to move (positive: better for it), in hundredths of a man.

    Arguments as in :mod:`game.engine.movegen`. The score is static: it does
    not look at captures pending (the search resolves them first).
    """
    if black:
        b, w = own, opp
    else:
        b, w = opp, own
    bm = b & ~kings
    wm = w & ~kings
    bk = b & kings
    wk = w & kings
    n_bm = bm.bit_count()
    n_wm = wm.bit_count()
    n_bk = bk.bit_count()
    n_wk = wk.bit_count()
    pieces = n_bm + n_wm + n_bk + n_wk
    material = MAN * (n_bm - n_wm) + KING * (n_bk - n_wk)
    score = material

    weights = ROW_WEIGHTS[pieces]
    for row, mask in _BLACK_ROWS:
        if bm & mask:
            score += weights[row] * (bm & mask).bit_count()
    for row, mask in _WHITE_ROWS:
        if wm & mask:
            score -= weights[row] * (wm & mask).bit_count()

    if n_wm:
        score += _BRIDGE * (bm & BLACK_BRIDGE).bit_count() + _BACK * (bm & BLACK_BACK).bit_count()
    if n_bm:
        score -= _BRIDGE * (wm & WHITE_BRIDGE).bit_count() + _BACK * (wm & WHITE_BACK).bit_count()

    score += _CENTRE * ((b & CENTRE).bit_count() - (w & CENTRE).bit_count())
    score += _INNER * ((b & INNER).bit_count() - (w & INNER).bit_count())
    if bk or wk:
        score += _KING_CENTRE * ((bk & CENTRE).bit_count() - (wk & CENTRE).bit_count())
        score -= _KING_EDGE * ((bk & EDGE).bit_count() - (wk & EDGE).bit_count())

    if material and pieces < 24:
        # Thousandths of the material difference per piece off, truncated toward zero as in C.
        trade = material * (24 - pieces) * _TRADE
        score += abs(trade) // 1000 if trade > 0 else -(abs(trade) // 1000)
    if pieces <= 10 and b and w:
        if material > 0 and bk:
            score -= _HUNT * _hunt(bk, w)
        elif material < 0 and wk:
            score += _HUNT * _hunt(wk, b)
    return score if black else -score
