"""The computer's playing levels, and the functions the worker processes run.

A :class:`Level` limits the search (depth in plies, time budget in ms) and
makes the weaker levels human: now and then they play a random legal move,
and they add noise to the scores of their candidate moves.

The worker functions (:func:`play`, :func:`analyse`, :func:`draw_score`)
take and return plain data (FEN strings, lists, dicts), so that they can be
sent to another process; they are what :class:`~game.engine.pool.EnginePool`
runs.

The levels form a ladder measured by matches (``docs/engine.md``, "Levels"): each is about 200-300 Elo
above the one below it. Levels 1-8 search to a fixed depth, so their strength does not depend on the
machine or its load; level 9 searches as deep as its time allows and plays the opening book's move
(:mod:`game.engine.book`) in a position the book holds (one without kings), without searching. The
analysis (:func:`analyse`) and the draw answer (:func:`draw_score`) never use the book.

Every function here takes ``engine``: ``"auto"`` (the default: the compiled
core when it is built, else the pure-Python search), ``"core"`` or
``"python"`` (the reference search of :mod:`game.engine.search`). The move
chosen is always one of :meth:`~game.rules.Position.legal_moves`, and the
computer still plays it through the game's normal move path.
"""

from __future__ import annotations

import dataclasses
import logging
import random
import time
from collections.abc import Sequence
from typing import NotRequired, TypedDict, cast

from game.rules import Position

from . import native
from .book import Book, default_book
from .movegen import children, state_of, to_rules_move
from .search import WIN, SearchData, SearchResult, _OutOfTime, _Searcher, search

log = logging.getLogger(__name__)

__all__ = ["Level", "LEVELS", "CONFIGURATIONS", "MoveChoice", "level", "choose_move", "play", "analyse", "draw_score",
           "ANALYSIS_MAX_MS", "ENGINES", "engine_in_use", "engine_search"]

#: The engines a caller may ask for.
ENGINES = ("auto", "core", "python")

#: The longest search the analysis board may ask for (ms).
ANALYSIS_MAX_MS = 3000


class MoveChoice(TypedDict):
    """The move the computer plays, as plain data (see :func:`choose_move`).

    ``mate`` and ``elapsed_ms`` are there when the move comes from a full search (as in
    :class:`~game.engine.search.SearchData`); ``book`` is True when the move comes from the
    opening book (``score``, ``depth`` and ``pv`` are then the book's, ``nodes`` 0).
    """

    move: str
    score: int
    depth: int
    pv: list[str]
    nodes: int
    random: bool
    mate: NotRequired[int | None]
    elapsed_ms: NotRequired[float]
    book: NotRequired[bool]


@dataclasses.dataclass(frozen=True)
class Level:
    """One playing strength.

    ``number``: 1 (weakest) to 9; ``name``: for people; ``depth``: deepest
    iteration in plies (None: as deep as the time allows); ``time_ms``: time
    budget per move in milliseconds (the most a move may take); ``blunder``: probability (0-1) of playing
    a random legal move instead of searching; ``noise``: the spread (hundredths
    of a man) of the random amount added to each candidate move's score; ``book``: plays the
    opening book's move in a position the book holds; ``network``: the compiled core evaluates with
    the learned network (``docs/engine.md``, "The learned evaluation"; the hand-written evaluation when
    no network can be loaded, and always in the Python search); ``reuse_table``: the core's search keeps
    its transposition table from one move to the next (entries of earlier searches aged out first).
    """

    number: int
    name: str
    depth: int | None
    time_ms: int
    blunder: float = 0.0
    noise: int = 0
    book: bool = False
    network: bool = False
    reuse_table: bool = False

    @property
    def player_name(self) -> str:
        """The computer's display name at this level, e.g. ``'Computer (level 3)'``."""
        return f"Computer (level {self.number})"


#: The levels, weakest first: LEVELS[n - 1] is level n.  Each was chosen by matches against the level
#: below it (120 games from the ACF ballots, colours swapped; ``docs/engine.md``, "Levels"); the
#: time budgets of levels 1-8 are only a cap for a slow machine (the compiled core reaches their
#: depths in milliseconds).
LEVELS = (
    Level(1, "Beginner", depth=2, time_ms=300, blunder=0.2, noise=60),
    Level(2, "Novice", depth=2, time_ms=300, blunder=0.1, noise=40),
    Level(3, "Casual", depth=3, time_ms=300, blunder=0.05, noise=25),
    Level(4, "Club player", depth=4, time_ms=500, blunder=0.02, noise=10),
    Level(5, "Strong club player", depth=6, time_ms=1000, noise=10),
    Level(6, "Expert", depth=7, time_ms=1500),
    Level(7, "Master", depth=9, time_ms=2500),
    Level(8, "Grandmaster", depth=12, time_ms=2500),
    Level(9, "Champion", depth=None, time_ms=2500, book=True, network=True, reuse_table=True),
)


#: Configurations kept by name to measure the levels against (``bench/engine_match.py``), never offered
#: on the site: ``"9-hand"`` is level 9 as it played before the learned evaluation (the hand-written
#: evaluation, a table emptied for every move; its book and endgame database as the level's).
CONFIGURATIONS = {
    "9-hand": Level(9, "Champion (hand-written evaluation)", depth=None, time_ms=2500, book=True),
}


def level(number: int) -> Level:
    """The :class:`Level` numbered ``number`` (1-9). Raises ValueError for another number."""
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= len(LEVELS):
        raise ValueError(f"there is no level {number!r}: choose 1 to {len(LEVELS)}")
    return LEVELS[number - 1]


def engine_in_use(engine: str = "auto") -> str:
    """``"core"`` or ``"python"``: the search ``engine`` (one of :data:`ENGINES`) stands for here.

    ``"auto"`` is the core when it is built. Raises ValueError for another name and
    :class:`~game.engine.native.CoreMissing` for ``"core"`` when the core is not built.
    """
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: choose one of {', '.join(ENGINES)}")
    if engine == "auto":
        return "core" if native.available() else "python"
    if engine == "core" and not native.available():
        raise native.CoreMissing("the engine's compiled core is not built: run `make install`")
    return engine


def engine_search(position: Position, *, engine: str = "auto", time_ms: float | None = None,
                  depth: int | None = None, history: Sequence[Position] = (), no_progress: int = 0,
                  network: bool = False, reuse_table: bool = False) -> SearchResult:
    """:func:`game.engine.search.search` or :func:`game.engine.native.search`, as ``engine`` says.

    Arguments and errors as theirs (and :func:`engine_in_use`'s); ``network`` and ``reuse_table`` as
    in :func:`game.engine.native.search`, for the core only. Should the core ever return a move the
    rules refuse (:class:`~game.engine.native.CoreDisagrees`), the Python search answers instead and
    the disagreement is logged as an error.
    """
    if engine_in_use(engine) == "core":
        try:
            return native.search(position, time_ms=time_ms, depth=depth, history=history, no_progress=no_progress,
                                 network=network, reuse_table=reuse_table)
        except native.CoreDisagrees:
            log.exception("engine core disagrees with the rules in %s; searching in Python", position.fen())
    return search(position, time_ms=time_ms, depth=depth, history=list(history), no_progress=no_progress)


def _noisy_choice_core(position: Position, depth: int, noise: int, time_ms: int,
                       rng: random.Random) -> MoveChoice:
    """:func:`_noisy_choice` with the compiled core scoring the moves."""
    scored, nodes = native.score_moves(position, depth, time_ms=time_ms)
    if scored:
        _, score, move = max((score + rng.gauss(0, noise), score, move) for move, score in scored)
    else:
        score, move = 0, position.legal_moves()[0]
    return {"move": str(move), "score": score, "depth": depth, "pv": [str(move)], "nodes": nodes, "random": False}


def _noisy_choice(position: Position, depth: int, noise: int, time_ms: int, rng: random.Random) -> MoveChoice:
    """Score every root move to ``depth`` plies, add noise, and take the best: a fallible player.

    Stops scoring when ``time_ms`` is spent and chooses among the moves scored so far.
    """
    own, opp, kings, black = state_of(position)
    moves, _ = children(own, opp, kings, black)
    searcher = _Searcher(time.perf_counter() + time_ms / 1000, [])
    scored: list[tuple[float, int, int]] = []
    try:
        for mkey, new_own, new_opp, new_kings, _irr, _n in moves:
            score = -searcher.node(new_opp, new_own, new_kings, not black, depth - 1, -WIN - 1, WIN + 1, 1, 0)
            scored.append((score + rng.gauss(0, noise), score, mkey))
    except _OutOfTime:
        if not scored:
            scored.append((0, 0, moves[0][0]))
    _, score, mkey = max(scored)
    move = to_rules_move(position, mkey)
    return {"move": str(move), "score": score, "depth": depth, "pv": [str(move)], "nodes": searcher.nodes,
            "random": False}


def choose_move(position: Position, chosen: Level, *, history: Sequence[Position] = (), no_progress: int = 0,
                rng: random.Random | None = None, engine: str = "auto", book: Book | None = None) -> MoveChoice:
    """The move the computer plays at level ``chosen``, as plain data.

    Returns ``{"move": str (full notation), "score": int (hundredths of a man,
    side to move's view), "depth": int (plies), "pv": [str], "nodes": int,
    "random": bool (a deliberate blunder)}``, with ``"book": True`` for a move of
    the opening book. ``history`` and ``no_progress`` as in :func:`~game.engine.search`;
    ``engine`` one of :data:`ENGINES`; ``book``: the opening book a level with
    ``book`` set consults first (default: :func:`~game.engine.book.default_book`).
    Raises ValueError when the side to move has no legal move or for an
    unknown engine.
    """
    which = engine_in_use(engine)
    rng = rng or random.Random()
    legal = position.legal_moves()
    if not legal:
        raise ValueError(f"no legal move in {position.fen()}: the game is over")
    if chosen.book and not position.kings:
        # Without kings every move is a man's, so the book's move can never repeat a position.
        found = (default_book() if book is None else book).move(position)
        if found is not None:
            move, entry = found
            return {"move": str(move), "score": entry.score, "depth": entry.depth, "pv": list(entry.pv) or [str(move)],
                    "nodes": 0, "random": False, "book": True}
    if len(legal) > 1 and chosen.blunder and rng.random() < chosen.blunder:
        move = rng.choice(legal)
        return {"move": str(move), "score": 0, "depth": 0, "pv": [str(move)], "nodes": 0, "random": True}
    if chosen.noise and chosen.depth and len(legal) > 1:
        if which == "core":
            try:
                return _noisy_choice_core(position, chosen.depth, chosen.noise, chosen.time_ms, rng)
            except native.CoreDisagrees:
                log.exception("engine core disagrees with the rules in %s; scoring in Python", position.fen())
        return _noisy_choice(position, chosen.depth, chosen.noise, chosen.time_ms, rng)
    result = engine_search(position, engine=which, time_ms=chosen.time_ms, depth=chosen.depth, history=history,
                           no_progress=no_progress, network=chosen.network, reuse_table=chosen.reuse_table)
    # There is a legal move, so the search found one: "move" is a string.
    return cast(MoveChoice, {**result.as_dict(), "random": False})


def play(fen: str, number: int, history: Sequence[str] = (), no_progress: int = 0,
         seed: int | None = None, engine: str = "auto") -> MoveChoice:
    """Worker function: :func:`choose_move` at level ``number`` for the position ``fen``.

    ``history``: FENs of the game's earlier positions, oldest first; ``engine``: one of
    :data:`ENGINES`. Raises :class:`~game.rules.InvalidFenError` for a bad FEN, ValueError for an
    unknown level or engine or a position without legal moves.
    """
    position = Position.from_fen(fen)
    earlier = [Position.from_fen(text) for text in history]
    return choose_move(position, level(number), history=earlier, no_progress=no_progress,
                       rng=random.Random(seed), engine=engine)


def analyse(fen: str, time_ms: int, history: Sequence[str] = (), no_progress: int = 0,
            engine: str = "auto") -> SearchData:
    """Worker function: the engine's best line for ``fen`` within ``time_ms`` (capped at :data:`ANALYSIS_MAX_MS`).

    Returns :meth:`SearchResult.as_dict` (``move`` None when the side to move
    has no legal move). The core searches with the learned evaluation, as level 9 does (its table
    emptied first, so the same request gives the same line). Raises
    :class:`~game.rules.InvalidFenError` for a bad FEN, ValueError for an unknown engine.
    """
    position = Position.from_fen(fen)
    earlier = [Position.from_fen(text) for text in history]
    budget = max(1, min(int(time_ms), ANALYSIS_MAX_MS))
    return engine_search(position, engine=engine, time_ms=budget, history=earlier,
                         no_progress=no_progress, network=True).as_dict()


def draw_score(fen: str, time_ms: int = 300, history: Sequence[str] = (), no_progress: int = 0,
               engine: str = "auto") -> int:
    """Worker function: the score of ``fen`` for its side to move (hundredths of a man), to answer a draw offer.

    ``-WIN`` when the side to move has no legal move. ``engine``: one of :data:`ENGINES`. The core
    searches with the learned evaluation (:func:`analyse`).
    """
    position = Position.from_fen(fen)
    earlier = [Position.from_fen(text) for text in history]
    return engine_search(position, engine=engine, time_ms=time_ms, history=earlier, no_progress=no_progress,
                         network=True).score
