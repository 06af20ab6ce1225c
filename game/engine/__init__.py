"""A checkers engine on top of :mod:`game.rules`: evaluation, search, playing levels, a worker pool.

No Django. The search exists twice: a compiled core in C (:mod:`game.engine.native`, built by
``make install``), which the levels use when it is built, and the pure-Python :func:`search`, the
reference and the fallback. The main entry points:

- :func:`search`: the best move of a position within a time budget (ms) or to
  a depth (plies), with its score and principal variation (:class:`SearchResult`);
  :func:`game.engine.native.search` the same with the core.
- :data:`LEVELS`, :func:`level` and :func:`choose_move`: the computer's playing
  levels, from a beginner who blunders now and then to the strongest the
  time budget allows (nine, each measured 200-300 Elo above the one below); level 9 plays the opening book's moves
  (:mod:`game.engine.book`) where it has them.
- :class:`EnginePool`: runs engine work in worker processes so that a
  server's event loop never waits on it.

>>> from game.rules import Position
>>> result = search(Position.from_fen("W:W23:B10,18"), depth=6)
>>> str(result.move), result.mate
('23x14x7', 1)
"""

from .evaluate import KING, MAN, evaluate
from .levels import ANALYSIS_MAX_MS, LEVELS, Level, choose_move, level
from .pool import EngineBusy, EnginePool
from .search import MAX_DEPTH, WIN, SearchResult, is_mate_score, search

__all__ = ["MAN", "KING", "WIN", "MAX_DEPTH", "ANALYSIS_MAX_MS", "evaluate", "search", "SearchResult",
           "is_mate_score", "Level", "LEVELS", "level", "choose_move", "EngineBusy", "EnginePool"]
