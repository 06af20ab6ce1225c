"""The compiled core (``game.engine._core``, from ``game/engine/core/core.c``) behind the engine's usual types.

The core generates moves on bitboards and searches a thousand times faster than
:mod:`game.engine.search` (docs/engine.md, "The compiled core"). ``make install``
builds it with the machine's C compiler; when it is missing (no compiler, a
failed build) :func:`available` is False and the engine's levels use the
pure-Python search, which also stays available as the reference
(``engine="python"`` in :mod:`game.engine.levels`).

The rules stay the single truth: every move the core returns becomes a
:class:`~game.rules.Move` only if :meth:`~game.rules.Position.legal_moves`
holds a move with the same path and captured squares, else
:class:`CoreDisagrees` is raised.

Endgame databases (``manage.py build_endgames``, docs/engine.md): the distance
to the end of every position with few pieces, in ``var/endgames/`` (or
``ENGINE_ENDGAME_DIR``). The first search of a process loads the largest one
there; without the files everything works as before.

>>> from game.rules import Position
>>> if available():
...     result = search(Position.from_fen("B:W18,27:B14,K22"), depth=4)
...     assert (str(result.move), result.mate) == ("14x23x32", 1)
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TypedDict

from game.rules import Color, Move, Position

from .search import WIN, SearchResult, is_mate_score

__all__ = ["CoreMissing", "CoreDisagrees", "available", "WEIGHT_NAMES", "default_weights", "weights",
           "set_weights", "reset_weights", "evaluate", "perft", "legal_moves", "search", "score_moves",
           "ENDGAME_DIR", "endgame_path", "EndgameStats", "build_endgames", "load_endgames", "unload_endgames",
           "endgame_pieces", "probe_endgame", "Verdict", "endgame_verdict", "MAX_ENDGAME_LINE", "endgame_line",
           "verify_endgames", "endgame_positions", "NETWORK_PATH", "load_network", "network_loaded",
           "network_shape", "network_simd", "network_evaluate", "network_trace"]

log = logging.getLogger(__name__)

#: Where the endgame databases live: ``ENGINE_ENDGAME_DIR``, else the checkout's ``var/endgames``.
ENDGAME_DIR = Path(os.environ.get("ENGINE_ENDGAME_DIR") or Path(__file__).resolve().parents[2] / "var" / "endgames")

#: The learned evaluation's weights (docs/engine.md, "The learned evaluation"): ``ENGINE_NETWORK``, else the
#: file shipped beside this module.
NETWORK_PATH = Path(os.environ.get("ENGINE_NETWORK") or Path(__file__).resolve().parent / "network.bin")

_core: ModuleType | None
try:
    _core = importlib.import_module("game.engine._core")
except ImportError:  # not built (no C compiler, or `make install` not run): the Python search is used
    _core = None


class CoreMissing(RuntimeError):
    """The compiled core is not built (run ``make install``)."""


class CoreDisagrees(RuntimeError):
    """The core returned a move that :meth:`~game.rules.Position.legal_moves` does not hold (a defect)."""


#: The core's raw route: (path of squares 1-32, captured squares in jump order, crowned).
Route = tuple[tuple[int, ...], tuple[int, ...], bool]


def available() -> bool:
    """True when the compiled core is built and importable."""
    return _core is not None


def _module() -> ModuleType:
    if _core is None:
        raise CoreMissing("the engine's compiled core is not built: run `make install`")
    return _core


#: The evaluation's weights by name, in the core's order (docs/engine.md, "The evaluation").
WEIGHT_NAMES: tuple[str, ...] = tuple(_core.WEIGHT_NAMES) if _core is not None else ()


def default_weights() -> dict[str, int]:
    """The weights the core starts with: those of :mod:`game.engine.evaluate`. Raises :class:`CoreMissing`."""
    return dict(_module().DEFAULT_WEIGHTS)


def weights() -> dict[str, int]:
    """The weights the core's evaluation uses now (name -> int). Raises :class:`CoreMissing`."""
    result: dict[str, int] = _module().get_weights()
    return result


def set_weights(changes: Mapping[str, int]) -> None:
    """Change some of this process's evaluation weights (the others stay).

    Names as in :data:`WEIGHT_NAMES`; values are ints within -10000..10000 (material in hundredths
    of a man, ``trade`` in thousandths of the material difference per piece off the board). Raises
    ValueError for an unknown name or a value out of range, TypeError for a value that is no int,
    :class:`CoreMissing` without the core.
    """
    _module().set_weights(dict(changes))


def reset_weights() -> None:
    """Back to :func:`default_weights`. Raises :class:`CoreMissing`."""
    _module().reset_weights()


def _state(position: Position) -> tuple[int, int, int, bool]:
    if not isinstance(position, Position):
        raise TypeError(f"position must be a Position, not {type(position).__name__}")
    return position.black, position.white, position.kings, position.turn is Color.BLACK


def evaluate(position: Position, weights: Mapping[str, int] | None = None, *, network: bool = False) -> int:
    """The core's static evaluation of ``position`` for its side to move (hundredths of a man).

    ``weights``: some weights for this call only (see :func:`set_weights`). With the default weights it
    equals :func:`game.engine.evaluate.evaluate`. ``network``: the learned evaluation instead (loaded
    first if this process has not tried yet). Raises :class:`CoreMissing`, TypeError, ValueError, and
    RuntimeError for ``network`` when no network could be loaded.
    """
    state = _state(position)
    if network:
        _ensure_network()
    score: int = _module().evaluate(*state, weights=None if weights is None else dict(weights), network=network)
    return score


def perft(position: Position, depth: int) -> int:
    """Leaf positions ``depth`` plies ahead, capture routes counted apart (as :func:`game.rules.perft`).

    Raises ValueError for a depth outside 0..30, :class:`CoreMissing` without the core.
    """
    total: int = _module().perft(*_state(position), depth)
    return total


def legal_moves(position: Position) -> list[Route]:
    """The core's legal moves of ``position``: ``(path, captured, crowned)`` for every move and capture route.

    In no particular order; for the differential test against :meth:`Position.legal_moves`.
    Raises :class:`CoreMissing` without the core.
    """
    routes: list[Route] = _module().legal_moves(*_state(position))
    return routes


def _to_move(position: Position, route: Route) -> Move:
    path, captured, _crowned = route
    for move in position.legal_moves():
        if move.path == path and move.captures == captured:
            return move
    raise CoreDisagrees(f"the core's move {path} taking {captured} is not legal in {position.fen()}")


def search(position: Position, *, time_ms: float | None = None, depth: int | None = None, nodes: int | None = None,
           history: Sequence[Position] = (), no_progress: int = 0,
           weights: Mapping[str, int] | None = None, endgames: bool = True, network: bool = False,
           reuse_table: bool = False) -> SearchResult:
    """Search ``position`` with the compiled core; the same contract as :func:`game.engine.search.search`.

    ``time_ms``: wall-time budget (ms); ``depth``: deepest iteration (plies, at most 60); ``nodes``:
    the most positions to visit. At least one limit is needed; the first reached ends the search
    (the first iteration always completes). ``history`` and ``no_progress`` as in
    :func:`game.engine.search.search`; ``weights``: evaluation weights for this search only;
    ``endgames``: use the endgame database when one is loaded (the first search loads it);
    ``network``: evaluate with the learned network (:func:`load_network`; the shipped one is loaded
    on first use) instead of the hand-written evaluation, which searches without it and when no
    network can be loaded (logged once); ``reuse_table``: the search also uses what this thread's
    earlier searches left in its transposition table (the moves before in a game: faster, but the
    result then depends on them), else it starts from an empty table and is reproducible.

    Returns a :class:`~game.engine.search.SearchResult` whose moves are the rules' own
    :class:`~game.rules.Move` objects. Raises ValueError for missing or non-positive limits,
    TypeError when ``position`` is not a Position, :class:`CoreMissing` without the core and
    :class:`CoreDisagrees` when the rules refuse the core's move.
    """
    state = _state(position)
    if time_ms is None and depth is None and nodes is None:
        raise ValueError("give a time budget (time_ms), a depth or a node budget")
    if time_ms is not None and time_ms <= 0:
        raise ValueError(f"time_ms must be positive, not {time_ms}")
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be at least 1, not {depth}")
    if nodes is not None and nodes < 1:
        raise ValueError(f"nodes must be at least 1, not {nodes}")
    core = _module()
    if endgames:
        _ensure_endgames()
    if network:
        network = _ensure_network()
    keep = max(0, min(no_progress, len(history)))
    earlier = [_state(p) for p in history[len(history) - keep:]] if keep else []
    raw = core.search(*state, time_ms=float(time_ms or 0), depth=min(depth or core.MAX_DEPTH, core.MAX_DEPTH),
                      nodes=int(nodes or 0), history=earlier, no_progress=max(0, no_progress),
                      weights=None if weights is None else dict(weights), endgames=endgames, network=network,
                      reuse_table=reuse_table)
    if raw["move"] is None:
        return SearchResult(None, -WIN, 0, 0, (), raw["nodes"], raw["elapsed_ms"])
    line: list[Move] = []
    current = position
    for route in raw["pv"]:
        try:
            move = _to_move(current, route)
        except CoreDisagrees:
            if not line:
                raise
            break  # a later move of the line: keep the part the rules accept
        line.append(move)
        current = current.play(move)
    score: int = raw["score"]
    mate = None
    if is_mate_score(score):
        plies = WIN - abs(score)
        mate = plies if score > 0 else -plies
    return SearchResult(line[0], score, mate, raw["depth"], tuple(line), raw["nodes"], raw["elapsed_ms"])


def score_moves(position: Position, depth: int, *, time_ms: float = 0, weights: Mapping[str, int] | None = None,
                endgames: bool = True, network: bool = False) -> tuple[list[tuple[Move, int]], int]:
    """Every legal move of ``position`` scored to ``depth`` plies with a full window: ``([(move, score)], nodes)``.

    Scores are hundredths of a man for the side to move. Stops when ``time_ms`` (ms, 0: no limit) is
    spent, with the moves scored so far (possibly none); ``endgames`` and ``network`` as in :func:`search`. Raises
    ValueError for a depth outside 1..60, :class:`CoreMissing`, :class:`CoreDisagrees`.
    """
    core = _module()
    if endgames:
        _ensure_endgames()
    if network:
        network = _ensure_network()
    scored, visited = core.score_moves(*_state(position), depth, time_ms=float(time_ms),
                                       weights=None if weights is None else dict(weights), endgames=endgames,
                                       network=network)
    return [(_to_move(position, route), score) for route, score in scored], visited


# Endgame databases ------------------------------------------------------------------------------------

_endgames_tried = False
#: Held while the default database loads: threads of one process (a server's) load it once.
_endgames_lock = threading.Lock()


class EndgameStats(TypedDict):
    """What :func:`build_endgames` did: counts of positions (side to move's result), passes, time (s), size."""

    pieces: int
    positions: int
    wins: int
    losses: int
    draws: int
    invalid: int
    passes: int
    longest: int
    complete: bool
    seconds: float
    bytes: int


def endgame_path(pieces: int, directory: Path | None = None) -> Path:
    """The file of the database of positions with at most ``pieces`` pieces: ``endgames-<pieces>.bin``."""
    return (directory or ENDGAME_DIR) / f"endgames-{pieces}.bin"


def build_endgames(pieces: int, path: Path) -> EndgameStats:
    """Build the database of every position with at most ``pieces`` pieces (2-5) into the file ``path``.

    Retrograde analysis in the core (docs/engine.md, "Endgame databases"); ``pieces=4`` takes minutes,
    5 hours and 200 MB of memory. Returns the counts, the passes, the longest distance to the end
    (plies), the time (s) and the file's size (bytes). Raises ValueError for another number of pieces,
    OSError when the file cannot be written, :class:`CoreMissing`.
    """
    stats: EndgameStats = _module().endgame_build(pieces, str(path))
    return stats


def load_endgames(path: Path | None = None) -> int:
    """Load a database for this process's searches; returns the pieces it covers (0: none found).

    ``path``: a file of :func:`build_endgames`; without it the largest ``endgames-<n>.bin`` of
    :data:`ENDGAME_DIR`, if any. Raises OSError or ValueError for a file that cannot be read or is no
    database (only when ``path`` is given; a bad default file is logged and skipped),
    :class:`CoreMissing`.
    """
    global _endgames_tried
    core = _module()
    try:
        if path is not None:
            pieces: int = core.endgame_load(str(path))
            return pieces
        for pieces in range(5, 1, -1):
            candidate = endgame_path(pieces)
            if candidate.is_file():
                try:
                    loaded: int = core.endgame_load(str(candidate))
                    log.info("endgame database loaded: %s (%d pieces)", candidate, loaded)
                    return loaded
                except (OSError, ValueError):
                    log.exception("endgame database %s could not be loaded; searching without it", candidate)
        return 0
    finally:
        _endgames_tried = True  # only once the file is read: another thread waits for it (_ensure_endgames)


def unload_endgames() -> None:
    """Searches stop using the loaded database (the next :func:`search` loads the default one again)."""
    global _endgames_tried
    _module().endgame_unload()
    _endgames_tried = False


def _ensure_endgames() -> None:
    if not _endgames_tried:
        with _endgames_lock:
            if not _endgames_tried:
                load_endgames()


def endgame_pieces() -> int:
    """The pieces the loaded database covers (0: none loaded)."""
    pieces: int = _module().endgame_pieces()
    return pieces


def probe_endgame(position: Position) -> tuple[str, int] | None:
    """The loaded database's verdict on ``position``: ``("win" | "loss" | "draw", plies to the end)``.

    For the side to move; None when no database covers it. Raises :class:`CoreMissing`.
    """
    found: tuple[str, int] | None = _module().endgame_probe(*_state(position))
    return found


class Verdict(TypedDict):
    """An exact result with best play: ``result`` for the side to move, ``winner`` the colour that wins
    (``"B"``/``"W"``, None for a draw), ``plies`` to the end (None for a draw)."""

    result: str
    winner: str | None
    plies: int | None


def endgame_verdict(position: Position) -> Verdict | None:
    """The exact result of ``position`` with best play, from the endgame database, when one covers it.

    Loads the default database first if this process has not tried yet (as the first search does).
    Returns ``{"result": "win" | "loss" | "draw", "winner": "B" | "W" | None, "plies": int | None}``:
    ``result`` for the side to move, ``plies`` the distance to the end of the game (0 for a side that
    has already lost: no piece or no move), None for a draw. The forty-move rule is not part of it.
    None when no database is loaded, when ``position`` has more pieces than the loaded one covers, or
    when the compiled core is not built (never an error for those). Raises TypeError when
    ``position`` is not a Position.
    """
    state = _state(position)
    if _core is None:
        return None
    _ensure_endgames()
    found: tuple[str, int] | None = _core.endgame_probe(*state)
    if found is None:
        return None
    result, plies = found
    if result == "draw":
        return {"result": "draw", "winner": None, "plies": None}
    mover = position.turn
    winner = mover if result == "win" else mover.opponent
    return {"result": result, "winner": winner.value, "plies": plies}


#: The longest line :func:`endgame_line` gives (plies); the 4-piece database's longest win is 109.
MAX_ENDGAME_LINE = 240


def endgame_line(position: Position, limit: int = MAX_ENDGAME_LINE) -> list[Move]:
    """Best play from ``position`` by the loaded database, to the end of the game: the rules' moves.

    Each move keeps the result: the winner takes the quickest win, the loser the longest loss (a
    move to a position of the same verdict one ply nearer the end). At most ``limit`` plies; empty
    for a draw (best play only keeps it drawn), a game already over, a position the database does
    not cover, or without the compiled core. Raises TypeError when ``position`` is not a Position,
    ValueError for a negative ``limit``.
    """
    _state(position)
    if limit < 0:
        raise ValueError(f"limit must be at least 0, not {limit}")
    if _core is None:
        return []
    _ensure_endgames()
    line: list[Move] = []
    current = position
    found: tuple[str, int] | None = _core.endgame_probe(*_state(current))
    while found is not None and found[0] != "draw" and found[1] > 0 and len(line) < limit:
        result, plies = found
        wanted = ("loss" if result == "win" else "win", plies - 1)
        for move in current.legal_moves():
            after = current.play(move)
            if _core.endgame_probe(*_state(after)) == wanted:
                line.append(move)
                current, found = after, wanted
                break
        else:
            break  # no move keeps the result: the database is not this one's (never for a checked file)
    return line


def verify_endgames() -> tuple[int, int]:
    """``(wrong, entries)``: the loaded database's positions whose value does not follow from their moves'.

    Raises RuntimeError when none is loaded, :class:`CoreMissing`.
    """
    wrong, entries = _module().endgame_verify()
    return int(wrong), int(entries)


def endgame_positions(indices: Sequence[int]) -> list[Position]:
    """The positions (Black to move) at the given entries of the loaded database, invalid entries left out.

    For sampling it (``manage.py build_endgames --samples``). Raises IndexError for an entry beyond it.
    """
    core = _module()
    positions = []
    for index in indices:
        found = core.endgame_entry(index)
        if found is not None:
            black, white, kings = found
            positions.append(Position(black, white, kings, Color.BLACK))
    return positions


# The learned evaluation -------------------------------------------------------------------------------

_network_tried = False
_network_ok = False
_network_lock = threading.Lock()


def load_network(path: Path | None = None) -> tuple[int, int]:
    """Load a network file (``bench/train_network.py export``) for this process's searches that ask for it.

    ``path``: default :data:`NETWORK_PATH`. Returns its shape ``(h1, h2)``: 128 inputs, ``h1`` then
    ``h2`` hidden units, one output. The file (little-endian): ``CKNET1\\n\\0``, int32 ``h1``, ``h2``,
    ``shift``, then int16 ``w1[128][h1]``, int16 ``b1[h1]``, int8 ``w2[h2][h1]``, int32 ``b2[h2]``,
    int32 ``w3[h2]``, int32 ``b3`` (docs/engine.md, "The learned evaluation"). Raises OSError for a
    file that cannot be read, ValueError for one that is no network (or whose first layer could leave
    the int16 range), :class:`CoreMissing`.
    """
    global _network_tried, _network_ok
    core = _module()
    data = (path or NETWORK_PATH).read_bytes()
    h1, h2 = core.load_network(data)
    _network_tried = _network_ok = True
    return int(h1), int(h2)


def _ensure_network() -> bool:
    """True when a network is loaded, loading the default one on first use (a failure is logged once)."""
    global _network_tried
    if not _network_tried:
        with _network_lock:
            if not _network_tried:
                try:
                    load_network()
                    log.info("evaluation network loaded: %s", NETWORK_PATH)
                except (OSError, ValueError):
                    log.exception("evaluation network %s could not be loaded; searching with the hand-written "
                                  "evaluation", NETWORK_PATH)
                _network_tried = True
    return _network_ok


def network_loaded() -> bool:
    """True when this process has a network loaded (after :func:`load_network` or a first use)."""
    return _core is not None and _core.network_shape() is not None


def network_shape() -> tuple[int, int] | None:
    """``(h1, h2)`` of the loaded network, None without one. Raises :class:`CoreMissing`."""
    shape = _module().network_shape()
    return None if shape is None else (int(shape[0]), int(shape[1]))


def network_simd() -> str:
    """The network's code path on this machine: ``"avx2"``, ``"ssse3"`` or ``"c"``. Raises :class:`CoreMissing`."""
    return str(_module().network_simd())


def network_evaluate(position: Position, simd: int | None = None) -> int:
    """The loaded network's score of ``position`` for its side to move (hundredths of a man, within ±4000).

    ``simd``: 0 (plain C), 1 (SSSE3) or 2 (AVX2) forces that path, for tests (ValueError where the
    machine lacks it); None takes the searches' one. Loads the default network on first use. Raises
    RuntimeError when none can be loaded, TypeError, :class:`CoreMissing`.
    """
    state = _state(position)
    _ensure_network()
    score: int = _module().network_evaluate(*state, -1 if simd is None else simd)
    return score


def network_trace(steps: Sequence[tuple[int, Position, bool]],
                  simd: int | None = None) -> list[tuple[int, tuple[int, ...]] | None]:
    """The search's incrementally kept first layer along a path of positions, for the tests.

    ``steps``: ``(ply, position, evaluate)`` as the search enters its nodes: the first at ply 0 (the
    root), each next one at most one ply below the one before (a move made from it) or at any ply
    above (the moves below undone). The core keeps the first layer's sums as the search does, from
    each ply to the next by the pieces that moved, were captured or crowned. For each step: None, or
    when ``evaluate`` is true, ``(score, sums)``: the network's score for the side to move and the
    first layer's ``h1`` int16 sums (before clipping) of the side to move's view. ``simd`` as in
    :func:`network_evaluate`. Raises ValueError for a ply out of place or a path the machine lacks,
    RuntimeError when no network can be loaded, TypeError, :class:`CoreMissing`.
    """
    rows = [(ply, *_state(position), evaluate) for ply, position, evaluate in steps]
    _ensure_network()
    found = _module().network_trace(rows, -1 if simd is None else simd)
    return [None if item is None else (int(item[0]), tuple(array("h", item[1]))) for item in found]
