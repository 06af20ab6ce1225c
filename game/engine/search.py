"""The search: iterative deepening, principal-variation alpha-beta (negamax) with a transposition table.

- **Iterative deepening** to a depth (plies) or within a time budget (ms). An
  iteration that runs out of time is abandoned; its best root move is kept
  only when it was searched completely and beat the previous iteration's.
  A new iteration starts only while less than half the budget has been used,
  so a search ends within the budget plus the time between two clock checks
  (a few milliseconds).
- **Principal variation search**: the first move with the full window, the
  others with a null window and a re-search when they beat it; quiet moves
  late in the list are searched one ply shallower first (late-move reduction).
- **Transposition table**: a dict from position key to (depth, bound, score,
  best move), reset for every search.
- **Quiescence**: at depth 0 a position in which the side to move must
  capture is searched on, captures only, until it is quiet; a node with a
  single legal move does not use up depth.
- **Move ordering**: the table's move, then captures (most pieces first),
  then two killer moves per ply, then the history heuristic.
- **Draws**: a position repeated since the last capture or man move (in the
  game or in the search) scores 0, as does a position at the forty-move limit.

Scores are in hundredths of a man (see :mod:`game.engine.evaluate`) from the
side to move's point of view; a forced win in ``n`` plies scores
``WIN - n`` and a forced loss ``-(WIN - n)``.

>>> from game.rules import Position
>>> result = search(Position.from_fen("B:W18,27:B14,K22"), depth=4)
>>> str(result.move), result.mate
('14x23x32', 1)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from typing import TypeAlias, TypedDict

from game.rules import FORTY_MOVE_PLIES, Move, Position
from game.rules.bitboard import count_quiet as _count_quiet
from game.rules.bitboard import jumpers as _jumpers

from .evaluate import evaluate
from .movegen import ChildMove, children, position_key, state_of, to_rules_move

__all__ = ["WIN", "MAX_DEPTH", "SearchResult", "SearchData", "search", "is_mate_score"]

#: Score of a win at the root; a win in n plies scores WIN - n.
WIN = 30_000
#: The deepest iteration the search starts (plies).
MAX_DEPTH = 60
#: Scores beyond WIN - MATE_RANGE are forced wins (and below its negation, forced losses).
MATE_RANGE = 1_000
#: Plies below the root after which single-move nodes no longer extend the search.
_EXTEND_LIMIT = 40
#: A mask: the clock is read when the node count has none of these bits set (every 64 nodes).
_CLOCK_EVERY = 63
#: Entries after which the transposition table is emptied.
_TABLE_LIMIT = 400_000

_EXACT, _LOWER, _UPPER = 0, 1, 2

#: A transposition table entry: (depth, bound, score, best move key).
_Entry: TypeAlias = tuple[int, int, int, int]


def _taken(move: ChildMove) -> int:
    return move[5]


def is_mate_score(score: int) -> bool:
    """True when ``score`` announces a forced win or loss."""
    return abs(score) > WIN - MATE_RANGE


class SearchData(TypedDict):
    """:meth:`SearchResult.as_dict`: a search result as plain data for JSON."""

    move: str | None
    score: int
    mate: int | None
    depth: int
    pv: list[str]
    nodes: int
    elapsed_ms: float


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """What a search found.

    ``move``: the best :class:`~game.rules.Move`, or None when the side to
    move has no legal move (it has lost); ``score``: hundredths of a man from
    the side to move's point of view (``-WIN`` when it has lost); ``mate``:
    plies to the end when the search proved a forced result (positive: the
    side to move wins, negative: it loses), else None; ``depth``: plies of the
    last completed iteration; ``pv``: the principal variation, a tuple of
    :class:`~game.rules.Move` starting with ``move``; ``nodes``: positions
    visited; ``elapsed_ms``: wall time of the search in milliseconds.
    """

    move: Move | None
    score: int
    mate: int | None
    depth: int
    pv: tuple[Move, ...]
    nodes: int
    elapsed_ms: float

    def as_dict(self) -> SearchData:
        """Plain data for JSON: moves as full notation strings."""
        return {"move": str(self.move) if self.move else None, "score": self.score, "mate": self.mate,
                "depth": self.depth, "pv": [str(m) for m in self.pv], "nodes": self.nodes,
                "elapsed_ms": round(self.elapsed_ms, 1)}


class _OutOfTime(Exception):
    pass


class _Searcher:
    """One search: its tables, counters and deadline."""

    def __init__(self, deadline: float | None, history: list[int]) -> None:
        self.deadline = deadline
        self.nodes = 0
        self.table: dict[int, _Entry] = {}
        self.killers: list[list[int]] = [[0, 0] for _ in range(MAX_DEPTH + _EXTEND_LIMIT + 64)]
        self.history_scores: dict[int, int] = {}
        self.path: list[int] = list(history)

    def check_clock(self) -> None:
        if self.deadline is not None and time.perf_counter() >= self.deadline:
            raise _OutOfTime

    def order(self, moves: list[ChildMove], captures: bool, tt_move: int, ply: int) -> list[ChildMove]:
        if len(moves) < 2:
            return moves
        if captures:
            moves.sort(key=lambda m: (m[0] == tt_move, m[5]), reverse=True)
            return moves
        killer_1, killer_2 = self.killers[ply]
        hist = self.history_scores

        def rank(m: ChildMove) -> int:
            key = m[0]
            if key == tt_move:
                return 1 << 40
            if key == killer_1:
                return 1 << 39
            if key == killer_2:
                return 1 << 38
            return hist.get(key, 0)

        moves.sort(key=rank, reverse=True)
        return moves

    def quiesce(self, own: int, opp: int, kings: int, black: bool, alpha: int, beta: int, ply: int) -> int:
        """Search captures only until the side to move has none; then the static evaluation."""
        self.nodes += 1
        if not self.nodes & _CLOCK_EVERY:
            self.check_clock()
        if not _jumpers(own, opp, kings, black):
            if not _count_quiet(own, opp, kings, black):
                return ply - WIN
            return evaluate(own, opp, kings, black)
        moves, _ = children(own, opp, kings, black)
        if len(moves) > 1:
            moves.sort(key=_taken, reverse=True)
        best = -WIN
        nxt = not black
        for _key, new_own, new_opp, new_kings, _irr, _n in moves:
            score = -self.quiesce(new_opp, new_own, new_kings, nxt, -beta, -alpha, ply + 1)
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        return best

    def node(self, own: int, opp: int, kings: int, black: bool, depth: int, alpha: int, beta: int,
             ply: int, progress: int) -> int:
        """Negamax score of the position within (alpha, beta); ``progress`` counts plies since a capture or man move."""
        if depth <= 0:
            return self.quiesce(own, opp, kings, black, alpha, beta, ply)
        self.nodes += 1
        if not self.nodes & _CLOCK_EVERY:
            self.check_clock()
        moves, captures = children(own, opp, kings, black)
        if not moves:
            return ply - WIN
        if progress >= FORTY_MOVE_PLIES:
            return 0
        key = position_key(own, opp, kings, black)
        path = self.path
        if progress >= 4:
            n = len(path)
            for back in range(4, min(progress, n) + 1, 2):
                if path[n - back] == key:
                    return 0
        tt_move = 0
        entry = self.table.get(key)
        if entry is not None:
            e_depth, bound, e_score, tt_move = entry
            if e_depth >= depth:
                if e_score > WIN - MATE_RANGE:
                    e_score -= ply
                elif e_score < MATE_RANGE - WIN:
                    e_score += ply
                if bound == _EXACT or (bound == _LOWER and e_score >= beta) or (bound == _UPPER and e_score <= alpha):
                    return e_score

        single = len(moves) == 1
        next_depth = depth if single and ply < _EXTEND_LIMIT else depth - 1
        self.order(moves, captures, tt_move, ply)
        original_alpha = alpha
        best = -WIN - 1
        best_key = 0
        nxt = not black
        path.append(key)
        try:
            for index, (mkey, new_own, new_opp, new_kings, irreversible, _taken) in enumerate(moves):
                child_progress = 0 if irreversible else progress + 1
                if index == 0:
                    score = -self.node(new_opp, new_own, new_kings, nxt, next_depth, -beta, -alpha,
                                       ply + 1, child_progress)
                else:
                    reduce = (not captures and index >= 3 and depth >= 3 and mkey != self.killers[ply][0]
                              and mkey != self.killers[ply][1])
                    score = -self.node(new_opp, new_own, new_kings, nxt, next_depth - 1 if reduce else next_depth,
                                       -alpha - 1, -alpha, ply + 1, child_progress)
                    if score > alpha and reduce:
                        score = -self.node(new_opp, new_own, new_kings, nxt, next_depth, -alpha - 1, -alpha,
                                           ply + 1, child_progress)
                    if alpha < score < beta:
                        score = -self.node(new_opp, new_own, new_kings, nxt, next_depth, -beta, -alpha,
                                           ply + 1, child_progress)
                if score > best:
                    best = score
                    best_key = mkey
                    if score > alpha:
                        alpha = score
                        if alpha >= beta:
                            if not captures:
                                killers = self.killers[ply]
                                if killers[0] != mkey:
                                    killers[1] = killers[0]
                                    killers[0] = mkey
                                self.history_scores[mkey] = self.history_scores.get(mkey, 0) + depth * depth
                            break
        finally:
            path.pop()

        if best >= beta:
            bound = _LOWER
        elif best > original_alpha:
            bound = _EXACT
        else:
            bound = _UPPER
        stored = best
        if stored > WIN - MATE_RANGE:
            stored += ply
        elif stored < MATE_RANGE - WIN:
            stored -= ply
        table = self.table
        if len(table) >= _TABLE_LIMIT:
            table.clear()
        table[key] = (depth, bound, stored, best_key)
        return best

    def principal_variation(self, own: int, opp: int, kings: int, black: bool, first: int, limit: int) -> list[int]:
        """Move keys of the line that starts with ``first`` and follows the table's best moves (at most ``limit``)."""
        line: list[int] = []
        seen: set[int] = set()
        current = (own, opp, kings, black)
        key = first
        while key and len(line) < limit:
            moves, _ = children(*current)
            child = next((m for m in moves if m[0] == key), None)
            if child is None:
                break
            line.append(key)
            current = (child[2], child[1], child[3], not current[3])
            state_key = position_key(*current)
            if state_key in seen:
                break
            seen.add(state_key)
            entry = self.table.get(state_key)
            key = entry[3] if entry is not None else 0
        return line


def _history_keys(positions: Iterable[Position]) -> list[int]:
    return [position_key(*state_of(p)) for p in positions]


def search(position: Position, *, time_ms: float | None = None, depth: int | None = None,
           history: Sequence[Position] = (), no_progress: int = 0) -> SearchResult:
    """Search ``position`` for the best move.

    ``time_ms``: the time budget in milliseconds (wall time); ``depth``: the
    deepest iteration in plies (at most :data:`MAX_DEPTH`). At least one of
    them is needed; with both, the search stops at whichever comes first.
    ``history``: the game's earlier positions, oldest first, so that the search
    knows which positions would repeat (only those since the last capture or
    man move matter); ``no_progress``: plies played since the last capture or
    man move (the forty-move rule draws at 80).

    Returns a :class:`SearchResult`; its ``move`` is None when the side to
    move has no legal move. Even with a tiny budget the first iteration
    (depth 1) is completed, so a legal move always comes back. Raises
    ValueError when neither a budget nor a depth is given, or they are not
    positive, and TypeError when ``position`` is not a
    :class:`~game.rules.Position`.
    """
    if not isinstance(position, Position):
        raise TypeError(f"position must be a Position, not {type(position).__name__}")
    if time_ms is None and depth is None:
        raise ValueError("give a time budget (time_ms) or a depth")
    if time_ms is not None and time_ms <= 0:
        raise ValueError(f"time_ms must be positive, not {time_ms}")
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be at least 1, not {depth}")
    started = time.perf_counter()
    max_depth = min(depth or MAX_DEPTH, MAX_DEPTH)
    own, opp, kings, black = state_of(position)
    root_moves, captures = children(own, opp, kings, black)
    if not root_moves:
        return SearchResult(None, -WIN, 0, 0, (), 1, (time.perf_counter() - started) * 1000)

    keep = max(0, min(no_progress, len(history)))
    searcher = _Searcher(None, _history_keys(history[len(history) - keep:]) if keep else [])
    root_key = position_key(own, opp, kings, black)
    best_key = root_moves[0][0]
    best_score = 0
    completed = 0
    deadline = None if time_ms is None else started + time_ms / 1000
    soft_limit = None if time_ms is None else started + time_ms / 2000

    for iteration in range(1, max_depth + 1):
        if iteration > 1:
            searcher.deadline = deadline
        alpha, beta = -WIN - 1, WIN + 1
        iteration_best = None
        iteration_score = -WIN - 1
        searcher.order(root_moves, captures, best_key, 0)
        searcher.path.append(root_key)
        try:
            for index, (mkey, new_own, new_opp, new_kings, irreversible, _taken) in enumerate(root_moves):
                child_progress = 0 if irreversible else no_progress + 1
                next_depth = iteration if len(root_moves) == 1 else iteration - 1
                if index == 0:
                    score = -searcher.node(new_opp, new_own, new_kings, not black, next_depth, -beta, -alpha,
                                           1, child_progress)
                else:
                    score = -searcher.node(new_opp, new_own, new_kings, not black, next_depth, -alpha - 1, -alpha,
                                           1, child_progress)
                    if score > alpha:
                        score = -searcher.node(new_opp, new_own, new_kings, not black, next_depth, -beta, -alpha,
                                               1, child_progress)
                if score > iteration_score:
                    iteration_score = score
                    iteration_best = mkey
                    if score > alpha:
                        alpha = score
        except _OutOfTime:
            searcher.path.pop()
            if iteration_best is not None:
                best_key, best_score = iteration_best, iteration_score
            break
        searcher.path.pop()
        # Every root move scores above -WIN - 1, so a completed iteration has a best move.
        assert iteration_best is not None
        best_key, best_score = iteration_best, iteration_score
        completed = iteration
        searcher.table[root_key] = (iteration, _EXACT, best_score, best_key)
        if is_mate_score(best_score) and WIN - abs(best_score) <= iteration:
            break
        if len(root_moves) == 1 and iteration >= 4:
            break
        if soft_limit is not None and time.perf_counter() >= soft_limit:
            break

    line_keys = searcher.principal_variation(own, opp, kings, black, best_key, max(completed, 1) + 8)
    pv: list[Move] = []
    current = position
    for key in line_keys:
        try:
            move = to_rules_move(current, key)
        except ValueError:
            break
        pv.append(move)
        current = current.play(move)
    mate = None
    if is_mate_score(best_score):
        plies = WIN - abs(best_score)
        mate = plies if best_score > 0 else -plies
    return SearchResult(pv[0], best_score, mate, completed, tuple(pv), searcher.nodes,
                        (time.perf_counter() - started) * 1000)
