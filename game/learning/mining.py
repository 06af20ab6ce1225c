"""Puzzles mined from real games by the engine: shots and strokes, the solution unique at every step.

Pure (the rules and the engine). :func:`candidates` walks a game: every position where a side is
to move after its opponent's move, the game's move or any other legal move there (the opponent's
error: a move the game shows, or one it could have played); :func:`solve` keeps those where one
move wins material or wins by force, as the puzzle's rules say (docs/learning.md, "Puzzles"):

- **The gain.** Material is counted in pieces (a king is one piece): the solution must leave the
  solver at least one piece better off than before the opponent's error (so a plain exchange is
  no puzzle), in a quiet position (no capture pending), within :data:`MAX_SOLVER_MOVES` solver
  moves; or, where the endgame database covers the position, the one move that keeps a win.
- **Unique at every step.** At each solver step every legal move is scored by a search of the
  position after it (:func:`game.engine.native.search`) to :data:`SOLVE_DEPTH` plies: the solution's
  move must win the gain (a score at least :data:`GAIN_MARGIN` above the material before the
  error) and every other move must fall short of it by :data:`UNIQUE_MARGIN` (a whole man less).
  The first step must offer a choice (two legal moves or more). The opponent answers with the
  engine's best reply.
- **Checked again.** The same checks at :data:`VERIFY_DEPTH` plies (deeper) must hold, or the
  position is dropped; :func:`verify` is what the tests run on every shipped puzzle.
- **Refutations.** For every other move at each step, the opponent's best answer (searched to
  :data:`SOLVE_DEPTH` plies): what the puzzle page shows after a wrong move.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from game.engine import native
from game.engine.search import is_mate_score
from game.rules import Color, Move, Position

from .themes import themes_of

#: Plies of the full-window search that scores every move of a solver step.
SOLVE_DEPTH = 8
#: Plies of the second, deeper check.
VERIFY_DEPTH = 12
#: Plies of the quick search that picks candidate positions worth solving.
FILTER_DEPTH = 6
#: Most solver moves in a solution.
MAX_SOLVER_MOVES = 4
#: The solution's score must exceed the material before the error by this (hundredths of a man).
GAIN_MARGIN = 80
#: Every other move must score at least this much less than the solution's (hundredths of a man).
UNIQUE_MARGIN = 100


def balance(position: Position, side: Color) -> int:
    """Pieces of ``side`` less the opponent's (a king counts one)."""
    return bin(position.pieces(side)).count("1") - bin(position.pieces(side.opponent)).count("1")


def puzzle_id(fen: str, line: list[str]) -> str:
    """A short stable id for a puzzle: 8 characters of the SHA-1 of its position and solution."""
    digest = hashlib.sha1(f"{fen} {' '.join(line)}".encode()).hexdigest()
    return digest[:8]


def candidates(start: Position, moves: list[Move]) -> Iterator[tuple[int, Position, Move, bool]]:
    """``(ply, before, error, played)`` for every position of the game and every legal move there:
    ``before`` the position, ``error`` the move (``played``: the game's own), ``ply`` its number."""
    position = start
    for index in range(len(moves) + 1):
        played = moves[index] if index < len(moves) else None
        for move in position.legal_moves():
            yield index + 1, position, move, move == played
        if played is None:
            break
        position = position.play(played)


def _score_after(position: Position, move: Move, depth: int) -> int:
    """The score of ``move`` for the side playing it: the reply's search to ``depth - 1`` plies, negated."""
    after = position.play(move)
    found = native.search(after, depth=max(1, depth - 1))
    return -found.score


def plausible(position: Position, depth: int = FILTER_DEPTH, margin: int = 30) -> list[Move]:
    """The moves of ``position`` within ``margin`` (hundredths of a man) of the best, each searched to
    ``depth`` plies: the moves a player might have played instead of the game's."""
    scored = [(move, _score_after(position, move, depth)) for move in position.legal_moves()]
    if not scored:
        return []
    best = max(score for _, score in scored)
    return [move for move, score in scored if score >= best - margin]


def mine_game(start: Position, moves: list[Move], deviations: int = 1,
              margin: int = 30) -> Iterator[tuple[dict[str, Any], str]]:
    """The puzzles of one game, each with where it comes from (a short text).

    ``deviations`` 1: every position of the game after any move of the side to move (the game's or
    another: the error); 2: also after a plausible other move (:func:`plausible`) followed by any
    move of the opponent (``margin``: how far below the best a plausible move may score, hundredths of
    a man). Positions already found in this game are not searched again.
    """
    seen: set[str] = set()
    for ply, before, error, played in candidates(start, moves):
        ways = [(before, error, f"ply {ply}: {error}" + ("" if played else " in place of the game's move"))]
        if deviations >= 2 and played:
            for other in plausible(before, margin=margin):
                if other == error:
                    continue
                middle = before.play(other)
                ways += [(middle, reply, f"ply {ply}: {other} in place of {error}, then {reply}")
                         for reply in middle.legal_moves()]
        for where, move, text in ways:
            key = f"{where.fen()} {move}"
            if key in seen:
                continue
            seen.add(key)
            found = solve(where, move)
            if found is not None:
                yield found, text


def mine_record(start_fen: str, moves: list[str], deviations: int = 1,
                margin: int = 30) -> list[tuple[dict[str, Any], str]]:
    """:func:`mine_game` on plain data (a FEN and moves in notation), for worker processes."""
    start = Position.from_fen(start_fen)
    position, parsed = start, []
    for text in moves:
        move = position.parse_move(text)
        parsed.append(move)
        position = position.play(move)
    return list(mine_game(start, parsed, deviations, margin))


def _step(position: Position, base: int, depth: int) -> tuple[Move, dict[str, int]] | None:
    """The unique winning move of a solver step and the scores of the moves looked at, or None.

    The root search (iterative deepening to ``depth``) names the best move; each other move is
    then searched on its own and must fall short (stops at the first that does not)."""
    root = native.search(position, depth=depth)
    best = root.move
    if best is None:
        return None
    best_score = _score_after(position, best, depth)
    target = 100 * base + GAIN_MARGIN
    if best_score < target and not (is_mate_score(best_score) and best_score > 0):
        return None
    scores = {str(best): best_score}
    for move in position.legal_moves():
        if move == best:
            continue
        score = _score_after(position, move, depth)
        scores[str(move)] = score
        if score > best_score - UNIQUE_MARGIN or score >= target:
            return None
    return best, scores


def _reply(position: Position, depth: int) -> Move | None:
    found = native.search(position, depth=depth)
    return found.move


def _line(puzzle_fen: str, base: int, depth: int) -> list[str] | None:
    """The solution from ``puzzle_fen`` (solver to move) at ``depth``, or None when there is none."""
    position = Position.from_fen(puzzle_fen)
    solver = position.turn
    line: list[str] = []
    for step in range(MAX_SOLVER_MOVES):
        if step == 0 and len(position.legal_moves()) < 2:
            return None
        found = _step(position, base, depth)
        if found is None:
            return None
        move = found[0]
        line.append(str(move))
        position = position.play(move)
        if not position.legal_moves():
            return line  # the opponent cannot move: the game is won
        if balance(position, solver) > base and not position.is_capture_required():
            return line
        reply = _reply(position, depth)
        if reply is None:
            return line
        line.append(str(reply))
        position = position.play(reply)
    return None


def _endgame_line(position: Position) -> list[str] | None:
    """The one move that keeps a database win, as a one-move solution, or None."""
    verdict = native.endgame_verdict(position)
    if verdict is None or verdict["result"] != "win" or len(position.legal_moves()) < 2:
        return None
    winning = []
    for move in position.legal_moves():
        after = native.endgame_verdict(position.play(move))
        if after is not None and after["result"] == "loss":
            winning.append(move)
    return [str(winning[0])] if len(winning) == 1 else None


def refutations(fen: str, line: list[str], depth: int = SOLVE_DEPTH) -> dict[str, dict[str, str]]:
    """For each solver step (its index in ``line``, as text), each other legal move mapped to the
    opponent's best answer (empty text when the opponent then has no move)."""
    position = Position.from_fen(fen)
    found: dict[str, dict[str, str]] = {}
    for index, text in enumerate(line):
        move = position.parse_move(text)
        if index % 2 == 0:
            answers = {}
            for other in position.legal_moves():
                if other != move:
                    reply = _reply(position.play(other), depth)
                    answers[str(other)] = str(reply) if reply else ""
            found[str(index)] = answers
        position = position.play(move)
    return found


def solve(before: Position, error: Move) -> dict[str, Any] | None:
    """The puzzle after ``error`` is played in ``before``, checked at both depths, or None.

    Returns ``{"id", "before", "last_move", "fen", "line", "gain": "material"|"win", "men",
    "themes", "refutations"}``; ``men``: pieces won (0 for a database win).
    """
    position = before.play(error)
    solver = position.turn
    base = balance(before, solver)
    fen = position.fen()
    endgame = _endgame_line(position)
    if endgame is not None:
        line, gain = endgame, "win"
    else:
        if native.endgame_verdict(position) is not None:
            return None  # the database decides here: material is beside the point
        quick = native.search(position, depth=FILTER_DEPTH)
        if quick.score < 100 * base + GAIN_MARGIN:
            return None
        found = _line(fen, base, SOLVE_DEPTH)
        if found is None or _line(fen, base, VERIFY_DEPTH) != found:
            return None
        line, gain = found, "material"
    end = Position.from_fen(fen)
    for text in line:
        end = end.play(end.parse_move(text))
    return {"id": puzzle_id(fen, line), "before": before.fen(), "last_move": str(error), "fen": fen, "line": line,
            "gain": gain, "men": max(0, balance(end, solver) - base) if gain == "material" else 0,
            "themes": themes_of(fen, line, gain), "refutations": refutations(fen, line)}


def verify(puzzle: dict[str, Any], depth: int = VERIFY_DEPTH) -> list[str]:
    """What is wrong with a stored ``puzzle`` (empty: nothing): its moves legal in turn from
    ``before``, and each solver step's move the unique winning one at ``depth`` (the database's
    for a ``win``)."""
    problems: list[str] = []
    before = Position.from_fen(puzzle["before"])
    try:
        position = before.play(before.parse_move(puzzle["last_move"]))
    except ValueError as exc:
        return [f"last move: {exc}"]
    if position.fen() != puzzle["fen"]:
        problems.append("the last move does not lead to the puzzle's position")
    if puzzle["gain"] == "win":
        if _endgame_line(position) != puzzle["line"]:
            problems.append("the database does not give this one winning move")
        return problems
    base = balance(before, position.turn)
    for index, text in enumerate(puzzle["line"]):
        try:
            move = position.parse_move(text)
        except ValueError as exc:
            return problems + [f"step {index}: {exc}"]
        if index % 2 == 0:
            found = _step(position, base, depth)
            if found is None or found[0] != move:
                problems.append(f"step {index}: {text} is not the one winning move at depth {depth}")
        position = position.play(move)
    if not (not position.legal_moves() or balance(position, Position.from_fen(puzzle["fen"]).turn) > base):
        problems.append("the solution does not win material")
    return problems
