"""Bitboard move generation for American checkers (English draughts).

A side is a 32-bit integer: bit ``n - 1`` is set when the side has a piece on
square ``n`` (squares 1-32 as in docs/rules.md, "Board and numbering"). A third integer marks the kings.
The functions here work on the side to move (``own``), the other side
(``opp``), the kings of both sides (``kings``) and a flag telling whether the
side to move is Black (Black moves toward higher square numbers).

Board geometry: square index ``i`` (0-31) lies on row ``i // 4`` counted from
the top as White sees the board. On even rows (0, 2, 4, 6) the dark squares are
columns 1, 3, 5, 7; on odd rows they are columns 0, 2, 4, 6. A diagonal step
therefore shifts the index by 3, 4 or 5 depending on the row parity, and a
jump always shifts it by 7 or 9.

This module is an implementation detail of :class:`game.rules.Position`; its
functions take and return plain integers and tuples so that perft can run
without building objects.
"""

from __future__ import annotations

from typing import TypeAlias

#: One jump from a square: (jumped bit, jumped index, landing index, landing bit).
Jump: TypeAlias = tuple[int, int, int, int]
#: Per square index 0-31, the jumps a piece there may make.
JumpTable: TypeAlias = tuple[tuple[Jump, ...], ...]
#: A complete capture route: (path of squares 1-32, captured squares in jump order, crowned).
Route: TypeAlias = tuple[tuple[int, ...], tuple[int, ...], bool]
#: A capture route without its path: (start bit, end bit, captured mask, crowned).
CaptureResult: TypeAlias = tuple[int, int, int, bool]
#: A position after a move: (mover's pieces, other side's pieces, kings).
Child: TypeAlias = tuple[int, int, int]

FULL = 0xFFFFFFFF

#: Direction numbers: up is toward square 1 (White's forward), down toward 32.
UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT = 0, 1, 2, 3
DIRECTIONS = (UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT)
_STEP = {UP_LEFT: (-1, -1), UP_RIGHT: (-1, 1), DOWN_LEFT: (1, -1), DOWN_RIGHT: (1, 1)}

#: Forward directions of a man of each colour.
BLACK_FORWARD = (DOWN_LEFT, DOWN_RIGHT)
WHITE_FORWARD = (UP_LEFT, UP_RIGHT)


def coordinates(index: int) -> tuple[int, int]:
    """Return (row, column) of square index 0-31, row 0 at the top (rank 8), column 0 = file a."""
    row = index // 4
    return row, 2 * (index % 4) + (1 if row % 2 == 0 else 0)


def index_at(row: int, column: int) -> int:
    """Return the square index 0-31 at (row, column), or -1 off the board or on a light square."""
    if 0 <= row < 8 and 0 <= column < 8 and (row + column) % 2 == 1:
        return row * 4 + column // 2
    return -1


#: NEIGHBOUR[d][i]: index one diagonal step from i in direction d, or -1.
NEIGHBOUR = tuple(
    tuple(index_at(coordinates(i)[0] + _STEP[d][0], coordinates(i)[1] + _STEP[d][1]) for i in range(32))
    for d in DIRECTIONS
)
#: LANDING[d][i]: index two steps from i in direction d (the square a jump lands on), or -1.
LANDING = tuple(
    tuple(index_at(coordinates(i)[0] + 2 * _STEP[d][0], coordinates(i)[1] + 2 * _STEP[d][1]) for i in range(32))
    for d in DIRECTIONS
)

EVEN_ROWS = sum(1 << i for i in range(32) if (i // 4) % 2 == 0)
ODD_ROWS = FULL ^ EVEN_ROWS
ROW_TOP = 0x0000000F  # squares 1-4: White crowns here
ROW_BOTTOM = 0xF0000000  # squares 29-32: Black crowns here

#: Squares from which a step in direction d stays on the board, split by row parity.
STEP_EVEN = tuple(sum(1 << i for i in range(32) if NEIGHBOUR[d][i] >= 0) & EVEN_ROWS for d in DIRECTIONS)
STEP_ODD = tuple(sum(1 << i for i in range(32) if NEIGHBOUR[d][i] >= 0) & ODD_ROWS for d in DIRECTIONS)
#: Index shift of a step in direction d from an even row and from an odd row.
SHIFT_EVEN = (-4, -3, 4, 5)
SHIFT_ODD = (-5, -4, 3, 4)
#: Squares from which a jump in direction d lands on the board, and the jump's index shift.
JUMP_FROM = tuple(sum(1 << i for i in range(32) if LANDING[d][i] >= 0) for d in DIRECTIONS)
JUMP_SHIFT = (-9, -7, 7, 9)

for _d in DIRECTIONS:
    for _i in range(32):
        _n = NEIGHBOUR[_d][_i]
        if _n >= 0:
            assert _n - _i == (SHIFT_EVEN[_d] if (_i // 4) % 2 == 0 else SHIFT_ODD[_d])
        if LANDING[_d][_i] >= 0:
            assert LANDING[_d][_i] - _i == JUMP_SHIFT[_d]


def _jump_table(directions: tuple[int, ...]) -> JumpTable:
    return tuple(
        tuple(
            (1 << NEIGHBOUR[d][i], NEIGHBOUR[d][i], LANDING[d][i], 1 << LANDING[d][i])
            for d in directions
            if LANDING[d][i] >= 0
        )
        for i in range(32)
    )


#: Per square: (jumped bit, jumped index, landing index, landing bit) for each possible jump.
JUMPS_BLACK_MAN = _jump_table(BLACK_FORWARD)
JUMPS_WHITE_MAN = _jump_table(WHITE_FORWARD)
JUMPS_KING = _jump_table(DIRECTIONS)

# Unpacked constants for the hot paths below.
_SE0, _SE1, _SE2, _SE3 = STEP_EVEN
_SO0, _SO1, _SO2, _SO3 = STEP_ODD
_JF0, _JF1, _JF2, _JF3 = JUMP_FROM


def _shl(x: int, n: int) -> int:
    return x << n if n >= 0 else x >> -n


def jumpers(own: int, opp: int, kings: int, black: bool) -> int:
    """Return the bitboard of the side to move's pieces that have at least one jump."""
    empty = FULL & ~(own | opp)
    if black:
        down, up = own, own & kings
    else:
        down, up = own & kings, own
    result = 0
    if up:
        # up-left: even rows step -4, odd rows -5, jump -9
        p = up & _JF0 & (empty << 9)
        if p:
            result |= p & ((_SE0 & (opp << 4)) | (_SO0 & (opp << 5)))
        # up-right: even -3, odd -4, jump -7
        p = up & _JF1 & (empty << 7)
        if p:
            result |= p & ((_SE1 & (opp << 3)) | (_SO1 & (opp << 4)))
    if down:
        # down-left: even +4, odd +3, jump +7
        p = down & _JF2 & (empty >> 7)
        if p:
            result |= p & ((_SE2 & (opp >> 4)) | (_SO2 & (opp >> 3)))
        # down-right: even +5, odd +4, jump +9
        p = down & _JF3 & (empty >> 9)
        if p:
            result |= p & ((_SE3 & (opp >> 5)) | (_SO3 & (opp >> 4)))
    return result


def count_quiet(own: int, opp: int, kings: int, black: bool) -> int:
    """Return the number of quiet moves (steps) of the side to move."""
    empty = FULL & ~(own | opp)
    if black:
        down, up = own, own & kings
    else:
        down, up = own & kings, own
    n = 0
    if up:
        n += ((((up & _SE0) >> 4) | ((up & _SO0) >> 5)) & empty).bit_count()
        n += ((((up & _SE1) >> 3) | ((up & _SO1) >> 4)) & empty).bit_count()
    if down:
        n += ((((down & _SE2) << 4) | ((down & _SO2) << 3)) & empty).bit_count()
        n += ((((down & _SE3) << 5) | ((down & _SO3) << 4)) & empty).bit_count()
    return n


def quiet_moves(own: int, opp: int, kings: int, black: bool) -> list[tuple[int, int]]:
    """Return the quiet moves of the side to move as a list of (from index, to index)."""
    empty = FULL & ~(own | opp)
    if black:
        groups = ((own, (DOWN_LEFT, DOWN_RIGHT)), (own & kings, (UP_LEFT, UP_RIGHT)))
    else:
        groups = ((own, (UP_LEFT, UP_RIGHT)), (own & kings, (DOWN_LEFT, DOWN_RIGHT)))
    moves: list[tuple[int, int]] = []
    for pieces, directions in groups:
        if not pieces:
            continue
        for d in directions:
            se, so = SHIFT_EVEN[d], SHIFT_ODD[d]
            for movers, shift in ((pieces & STEP_EVEN[d], se), (pieces & STEP_ODD[d], so)):
                targets = _shl(movers, shift) & empty
                while targets:
                    bit = targets & -targets
                    targets ^= bit
                    to = bit.bit_length() - 1
                    moves.append((to - shift, to))
    moves.sort()
    return moves


def capture_routes(own: int, opp: int, kings: int, black: bool) -> list[Route]:
    """Return every complete capture route of the side to move.

    Each route is ``(path, captured, crowned)``: ``path`` a tuple of squares
    numbered 1-32 (start, then every landing square), ``captured`` a tuple of
    the jumped squares in jump order, ``crowned`` True when a man ends on its
    crowning row (which ends the move, docs/rules.md, "Crowning"). Jumped pieces stay
    on the board until the route ends and cannot be jumped twice; the start
    square counts as empty. The order of the routes is unspecified.
    """
    starts = jumpers(own, opp, kings, black)
    routes: list[Route] = []
    if not starts:
        return routes
    empty = FULL & ~(own | opp)
    crown_row = ROW_BOTTOM if black else ROW_TOP
    man_table = JUMPS_BLACK_MAN if black else JUMPS_WHITE_MAN
    append = routes.append
    while starts:
        bit = starts & -starts
        starts ^= bit
        start = bit.bit_length() - 1
        man = not kings & bit
        table = man_table if man else JUMPS_KING
        free = empty | bit
        stack: list[tuple[int, int, tuple[int, ...], tuple[int, ...]]] = [(start, 0, (start + 1,), ())]
        while stack:
            at, taken, path, captured = stack.pop()
            extended = False
            for over_bit, over, land, land_bit in table[at]:
                if opp & over_bit and not taken & over_bit and free & land_bit:
                    extended = True
                    if man and land_bit & crown_row:
                        append((path + (land + 1,), captured + (over + 1,), True))
                    else:
                        stack.append((land, taken | over_bit, path + (land + 1,), captured + (over + 1,)))
            if not extended and captured:
                append((path, captured, False))
    return routes


def capture_results(own: int, opp: int, kings: int, black: bool, starts: int) -> list[CaptureResult]:
    """Return (start bit, end bit, captured mask, crowned) for every capture route from ``starts``.

    The same routes as :func:`capture_routes`, without the paths (for perft).
    """
    empty = FULL & ~(own | opp)
    crown_row = ROW_BOTTOM if black else ROW_TOP
    man_table = JUMPS_BLACK_MAN if black else JUMPS_WHITE_MAN
    results: list[CaptureResult] = []
    append = results.append
    while starts:
        bit = starts & -starts
        starts ^= bit
        man = not kings & bit
        table = man_table if man else JUMPS_KING
        free = empty | bit
        stack = [(bit.bit_length() - 1, 0)]
        while stack:
            at, taken = stack.pop()
            extended = False
            for over_bit, _over, land, land_bit in table[at]:
                if opp & over_bit and not taken & over_bit and free & land_bit:
                    extended = True
                    if man and land_bit & crown_row:
                        append((bit, land_bit, taken | over_bit, True))
                    else:
                        stack.append((land, taken | over_bit))
            if not extended and taken:
                append((bit, 1 << at, taken, False))
    return results


def count_captures(own: int, opp: int, kings: int, black: bool, starts: int) -> int:
    """Return the number of complete capture routes from the pieces in ``starts``."""
    empty = FULL & ~(own | opp)
    crown_row = ROW_BOTTOM if black else ROW_TOP
    man_table = JUMPS_BLACK_MAN if black else JUMPS_WHITE_MAN
    total = 0
    while starts:
        bit = starts & -starts
        starts ^= bit
        king = kings & bit
        table = JUMPS_KING if king else man_table
        free = empty | bit
        stack = [(bit.bit_length() - 1, 0)]
        while stack:
            at, taken = stack.pop()
            extended = False
            for over_bit, _over, land, land_bit in table[at]:
                if opp & over_bit and not taken & over_bit and free & land_bit:
                    extended = True
                    if not king and land_bit & crown_row:
                        total += 1
                    else:
                        stack.append((land, taken | over_bit))
            if not extended:
                total += 1
    return total


def count_moves(own: int, opp: int, kings: int, black: bool) -> int:
    """Return the number of legal moves of the side to move (capture is compulsory)."""
    starts = jumpers(own, opp, kings, black)
    if starts:
        return count_captures(own, opp, kings, black, starts)
    return count_quiet(own, opp, kings, black)


def children(own: int, opp: int, kings: int, black: bool) -> list[Child]:
    """Return the positions after each legal move, as (mover's pieces, other side's pieces, kings).

    The mover is the side that was to move; in the returned positions the
    other side is to move.
    """
    result: list[Child] = []
    starts = jumpers(own, opp, kings, black)
    crown_row = ROW_BOTTOM if black else ROW_TOP
    if starts:
        for from_bit, to_bit, taken, crowned in capture_results(own, opp, kings, black, starts):
            new_kings = kings & ~taken
            if new_kings & from_bit:
                new_kings = (new_kings & ~from_bit) | to_bit
            elif crowned:
                new_kings |= to_bit
            result.append(((own & ~from_bit) | to_bit, opp & ~taken, new_kings))
        return result
    empty = FULL & ~(own | opp)
    if black:
        groups = ((own, 2), (own & kings, 0))
    else:
        groups = ((own, 0), (own & kings, 2))
    for pieces, first in groups:
        if not pieces:
            continue
        for d in (first, first + 1):
            for movers, shift in ((pieces & STEP_EVEN[d], SHIFT_EVEN[d]), (pieces & STEP_ODD[d], SHIFT_ODD[d])):
                targets = (movers << shift if shift > 0 else movers >> -shift) & empty
                while targets:
                    to_bit = targets & -targets
                    targets ^= to_bit
                    from_bit = to_bit >> shift if shift > 0 else to_bit << -shift
                    moved = from_bit | to_bit
                    if kings & from_bit:
                        new_kings = kings ^ moved
                    elif to_bit & crown_row:
                        new_kings = kings | to_bit
                    else:
                        new_kings = kings
                    result.append((own ^ moved, opp, new_kings))
    return result


def count_replies(positions: list[Child], black: bool) -> int:
    """Sum of :func:`count_moves` over ``positions``, a list of (other side, side to move, kings).

    The shape is what :func:`children` returns; ``black`` tells whether the side
    to move in them is Black. Inlined for perft's last two plies.
    """
    full = FULL
    se0, se1, se2, se3 = _SE0, _SE1, _SE2, _SE3
    so0, so1, so2, so3 = _SO0, _SO1, _SO2, _SO3
    jf0, jf1, jf2, jf3 = _JF0, _JF1, _JF2, _JF3
    total = 0
    for opp, own, kings in positions:
        empty = full ^ (own | opp)
        if black:
            down = own
            up = own & kings
        else:
            down = own & kings
            up = own
        starts = 0
        if up:
            p = up & jf0 & (empty << 9)
            if p:
                starts = p & ((se0 & (opp << 4)) | (so0 & (opp << 5)))
            p = up & jf1 & (empty << 7)
            if p:
                starts |= p & ((se1 & (opp << 3)) | (so1 & (opp << 4)))
        if down:
            p = down & jf2 & (empty >> 7)
            if p:
                starts |= p & ((se2 & (opp >> 4)) | (so2 & (opp >> 3)))
            p = down & jf3 & (empty >> 9)
            if p:
                starts |= p & ((se3 & (opp >> 5)) | (so3 & (opp >> 4)))
        if starts:
            total += count_captures(own, opp, kings, black, starts)
            continue
        if up:
            total += (((((up & se0) >> 4) | ((up & so0) >> 5)) & empty).bit_count()
                      + ((((up & se1) >> 3) | ((up & so1) >> 4)) & empty).bit_count())
        if down:
            total += (((((down & se2) << 4) | ((down & so2) << 3)) & empty).bit_count()
                      + ((((down & se3) << 5) | ((down & so3) << 4)) & empty).bit_count())
    return total


def perft(own: int, opp: int, kings: int, black: bool, depth: int) -> int:
    """Count the leaf positions ``depth`` plies ahead (bulk counting at the last ply)."""
    if depth <= 0:
        return 1
    if depth == 1:
        return count_moves(own, opp, kings, black)
    if depth == 2:
        return count_replies(children(own, opp, kings, black), not black)
    total = 0
    nxt = not black
    d = depth - 1
    for mover, other, k in children(own, opp, kings, black):
        total += perft(other, mover, k, nxt, d)
    return total


def perft_cached(own: int, opp: int, kings: int, black: bool, depth: int,
                 table: dict[tuple[int, int, int, bool, int], int], min_depth: int = 3) -> int:
    """:func:`perft` with a transposition table (a dict) for subtrees of ``min_depth`` plies or more.

    Equal positions reached by different move orders are counted once and
    reused; the totals are the same as :func:`perft`.
    """
    if depth < min_depth:
        return perft(own, opp, kings, black, depth)
    key = (own, opp, kings, black, depth)
    total = table.get(key)
    if total is not None:
        return total
    total = 0
    nxt = not black
    d = depth - 1
    for mover, other, k in children(own, opp, kings, black):
        total += perft_cached(other, mover, k, nxt, d, table, min_depth)
    table[key] = total
    return total
