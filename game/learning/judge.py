"""A game's review, computed: every position scored by the engine at a fixed effort, each move judged.

Pure (the rules and the engine, no Django), so a worker process, a test or a bench runs it alike.
:func:`review_game` is the whole of it; the job in :mod:`game.learning.reviews` stores what it
returns. How it decides (docs/learning.md, "Reviews"):

- **Effort.** Each position is searched to :data:`REVIEW_NODES` nodes by the compiled core (with the
  endgame database its process loads), never to a time: the core's search is deterministic for a
  position and a budget, so a review does not depend on the machine's load and a second run gives
  the same marks. Without the core, the Python search to :data:`FALLBACK_DEPTH` plies (deterministic
  too, weaker).
- **Win chance.** A score becomes the side to move's expected score by :func:`~game.learning.curve.win_chance`;
  an exact result overrides it (1, ½, 0).
- **Exact results.** A position the endgame database covers has its verdict (``source: "database"``);
  beyond it, a search that proves a forced win or loss through the database gives that result
  (``source: "search"``). A move that turns a won or drawn position (exactly known) into a worse
  one (exactly known) threw that result away; the first such move, or else the first move after
  which the mover's loss is proved, is the review's ``turning_point``.
- **Marks.** A move's loss is the mover's win chance before it less after it (0 when it is the
  engine's move). :data:`THRESHOLDS` mark inaccuracies, mistakes and blunders: the loss that a
  quarter, half and a whole man given away in an even position cost on the fitted curve.
- **Accuracy** per move is lichess's formula on win percentages (lila ``AccuracyPercent``),
  ``103.1668 * exp(-0.04354 * loss%) - 3.1669`` clamped to 0-100; a side's accuracy is the mean of
  the arithmetic and the harmonic mean of its moves' accuracies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from game.engine import native
from game.engine.search import WIN, is_mate_score, search
from game.rules import Color, Move, Position

from .curve import K, win_chance

__all__ = ["REVIEW_NODES", "FALLBACK_DEPTH", "THRESHOLDS", "REVIEW_FORMAT", "review_game", "score_position",
           "move_accuracy", "side_accuracy", "mark_of", "effort"]

#: Nodes searched per position (the review's effort): ~20-40 ms of one core of this machine, idle.
REVIEW_NODES = 300_000
#: Plies searched per position when the compiled core is missing.
FALLBACK_DEPTH = 6
#: The stored review's format; a review of another format is computed again when asked.
REVIEW_FORMAT = 1
#: Scores shown beyond this (hundredths of a man) are clipped for the chart.
CLIP = 1000


def _threshold(men: float) -> float:
    """The win chance that giving away ``men`` men costs in an even position, on the fitted curve."""
    return round(win_chance(0) - win_chance(-100 * men), 3)


#: A move's loss of win chance from which it is marked (lowest first): a quarter, half, a whole man.
THRESHOLDS: tuple[tuple[str, float], ...] = (("inaccuracy", _threshold(0.25)), ("mistake", _threshold(0.5)),
                                              ("blunder", _threshold(1.0)))

Exact = dict[str, Any]
Progress = Callable[[int, int], None]


def effort() -> dict[str, Any]:
    """What a review here searches with: ``{"engine": "core"|"python", "nodes": int|None, "depth":
    int|None, "endgame_pieces": int, "k": float, "format": int}``."""
    if native.available():
        native.endgame_verdict(Position.initial())  # loads the database as a search would
        return {"engine": "core", "nodes": REVIEW_NODES, "depth": None, "endgame_pieces": native.endgame_pieces(),
                "k": K, "format": REVIEW_FORMAT}
    return {"engine": "python", "nodes": None, "depth": FALLBACK_DEPTH, "endgame_pieces": 0, "k": K,
            "format": REVIEW_FORMAT}


def score_position(position: Position, history: Sequence[Position] = (), no_progress: int = 0) -> dict[str, Any]:
    """One position scored at the review's effort.

    ``history``: the positions since the last capture or man move, oldest first; ``no_progress`` their
    count (plies). Returns ``{"score": int (hundredths of a man, side to move), "best": str|None,
    "pv": [str] (up to 6 plies), "exact": {"result", "winner", "plies", "source"}|None}``.
    """
    verdict = native.endgame_verdict(position)
    if native.available():
        found = native.search(position, nodes=REVIEW_NODES, history=history, no_progress=no_progress)
    else:
        found = search(position, depth=FALLBACK_DEPTH, history=list(history), no_progress=no_progress)
    exact: Exact | None = None
    if verdict is not None:
        exact = {**verdict, "source": "database"}
    elif found.move is None:
        exact = {"result": "loss", "winner": position.turn.opponent.value, "plies": 0, "source": "rules"}
    elif is_mate_score(found.score):
        plies = WIN - abs(found.score)
        wins = found.score > 0
        winner = position.turn if wins else position.turn.opponent
        exact = {"result": "win" if wins else "loss", "winner": winner.value, "plies": plies, "source": "search"}
    return {"score": found.score, "best": str(found.move) if found.move else None,
            "pv": [str(m) for m in found.pv[:6]], "exact": exact}


def _chance(entry: dict[str, Any]) -> float:
    """The side to move's expected score of a scored position: exact when known."""
    exact = entry["exact"]
    if exact is not None:
        return {"win": 1.0, "draw": 0.5, "loss": 0.0}[exact["result"]]
    return win_chance(entry["score"])


def move_accuracy(loss: float) -> float:
    """A move's accuracy (0-100) from its loss of win chance (0-1): lichess's formula on percentages.

    >>> round(move_accuracy(0.0), 1), round(move_accuracy(0.1), 1), move_accuracy(1.0)
    (100.0, 63.6, 0.0)
    """
    value = 103.1668 * math.exp(-0.04354 * loss * 100) - 3.1669
    return max(0.0, min(100.0, value))


def side_accuracy(accuracies: Sequence[float]) -> float | None:
    """A side's accuracy: the mean of the arithmetic and harmonic means of its moves' accuracies
    (a harmonic mean of a 0 is 0); None for a side without moves."""
    if not accuracies:
        return None
    arithmetic = sum(accuracies) / len(accuracies)
    harmonic = 0.0 if min(accuracies) <= 0 else len(accuracies) / sum(1 / a for a in accuracies)
    return round((arithmetic + harmonic) / 2, 1)


def mark_of(loss: float) -> str | None:
    """``"blunder"``, ``"mistake"``, ``"inaccuracy"`` or None for a move's loss of win chance (0-1)."""
    found = None
    for name, threshold in THRESHOLDS:
        if loss >= threshold:
            found = name
    return found


def _for(exact: Exact | None, side: Color) -> str | None:
    """An exact result as ``side`` sees it: ``"win"``, ``"draw"``, ``"loss"`` or None."""
    if exact is None:
        return None
    if exact["result"] == "draw":
        return "draw"
    return "win" if exact["winner"] == side.value else "loss"


_ORDER = {"loss": 0, "draw": 1, "win": 2}


def _judge_move(ply: int, move: Move, before: dict, after: dict, mover: Color) -> dict[str, Any]:
    """One move's verdict from the scored positions around it."""
    played = str(move)
    chance_before = before["chance"] if mover is Color.BLACK else 1.0 - before["chance"]
    chance_after = after["chance"] if mover is Color.BLACK else 1.0 - after["chance"]
    loss = 0.0 if played == before["best"] else max(0.0, chance_before - chance_after)
    exact_before, exact_after = _for(before["exact"], mover), _for(after["exact"], mover)
    threw = None
    if exact_before in ("win", "draw") and exact_after is not None and _ORDER[exact_after] < _ORDER[exact_before]:
        threw = exact_before
        loss = max(loss, chance_before - chance_after)
    mark = mark_of(loss)
    return {"ply": ply, "side": mover.value, "move": played, "best": before["best"],
            "best_line": before["pv"], "loss": round(loss, 4), "mark": mark,
            "accuracy": round(move_accuracy(loss), 1), "exact_before": exact_before,
            "exact_after": exact_after, "threw": threw}


def _turning_point(moves: list[dict], positions: list[dict]) -> dict[str, Any] | None:
    """The move that threw a win or a draw away exactly, else the first after which a loss is proved."""
    for move in moves:
        if move["threw"] is not None:
            break
    else:
        for move in moves:
            before, after = move["exact_before"], move["exact_after"]
            if after == "loss" and before != "loss":
                break
        else:
            return None
    exact = positions[move["ply"]]["exact"]
    return {"ply": move["ply"], "move": move["move"], "side": move["side"], "before": move["exact_before"],
            "after": move["exact_after"], "winner": exact["winner"], "plies": exact["plies"],
            "source": exact["source"], "best": move["best"]}


def review_game(start: Position, moves: Sequence[Move], drawn_by_rule: bool = False,
                progress: Progress | None = None) -> dict[str, Any]:
    """The review of a game from ``start`` through ``moves`` (the rules' moves, legal in turn).

    ``drawn_by_rule``: the game ended drawn by repetition or the forty-move rule on its last
    position (its result there is a draw, whatever the board). ``progress(done, total)`` is called
    after each position is scored (``total`` = plies + 1). Returns ``{"effort": effort(),
    "positions": [{"ply", "fen", "score", "chance" (Black's expected score 0-1), "best", "pv",
    "exact"}] (plies + 1 of them, the start first), "moves": [{"ply", "side", "move", "best",
    "best_line", "loss", "mark", "accuracy", "exact_before", "exact_after", "threw"}], "sides":
    {"B"|"W": {"accuracy", "inaccuracy", "mistake", "blunder", "moves"}}, "turning_point": {...}|None}``.
    Raises :class:`~game.rules.IllegalMoveError` for a move that is not legal in turn.
    """
    line = [start]
    for move in moves:
        line.append(line[-1].play(line[-1].legal_move(move)))
    positions: list[dict[str, Any]] = []
    since = 0  # index of the first position since the last capture or man move
    for index, position in enumerate(line):
        if index and (moves[index - 1].is_capture or line[index - 1].is_man_move(moves[index - 1])):
            since = index
        entry = score_position(position, line[since:index], index - since)
        if drawn_by_rule and index == len(line) - 1 and entry["exact"] is None:
            entry["exact"] = {"result": "draw", "winner": None, "plies": None, "source": "rules"}
        black = _chance(entry) if position.turn is Color.BLACK else 1.0 - _chance(entry)
        score = max(-CLIP, min(CLIP, entry["score"]))
        positions.append({"ply": index, "fen": position.fen(), "turn": position.turn.value,
                          "score": score if position.turn is Color.BLACK else -score,
                          "chance": round(black, 4), **{k: entry[k] for k in ("best", "pv", "exact")}})
        if progress is not None:
            progress(index + 1, len(line))
    judged = [_judge_move(i + 1, move, positions[i], positions[i + 1], line[i].turn) for i, move in enumerate(moves)]
    sides: dict[str, dict[str, Any]] = {}
    for side in (Color.BLACK, Color.WHITE):
        own = [m for m in judged if m["side"] == side.value]
        sides[side.value] = {"accuracy": side_accuracy([m["accuracy"] for m in own]), "moves": len(own),
                             **{name: sum(1 for m in own if m["mark"] == name) for name, _ in THRESHOLDS}}
    return {"effort": effort(), "positions": positions, "moves": judged, "sides": sides,
            "turning_point": _turning_point(judged, positions)}
