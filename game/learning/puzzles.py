"""Puzzles as players meet them: which one comes next, the daily one, a move checked on the server,
the ratings after an attempt (Glicko-2, as lichess rates puzzles and solvers), the streak.

The solution never leaves the server before it is played: a page gets the position, the
opponent's last move and the legal moves; each move is checked here (:func:`play`), and only then
does the page learn the reply (a correct move) or the refutation and the whole solution (a wrong
one). A player's first attempt at a puzzle is the only one that counts: it is stored at its first
move, so trying the moves one by one loses the attempt at the first wrong one. Accounts are rated
(solver and puzzle both move, :data:`TAU` as the games' ratings); guests play unrated. Streak mode
(:func:`streak_next`) serves puzzles of rising rating, unrated, until the first wrong move; the best
streak is kept per account and per browser session.
"""

from __future__ import annotations

import hashlib
import random
from datetime import date
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game import rules
from game.errors import ActionError
from game.locks import wait_for_locks_at_most
from game.models import Account
from game.ratings import glicko

from .models import Puzzle, PuzzleAttempt, PuzzleSolver

#: Glicko-2's system constant for puzzles and solvers: lichess's 0.75, as for games.
TAU = 0.75
#: How far from the solver's rating the next puzzle is sought first (points).
WINDOW = 150
#: The first streak puzzle's rating, and how much each solved one adds (points).
STREAK_START, STREAK_STEP = 1150.0, 40.0


def no_such_puzzle() -> ActionError:
    """The refusal ``no_such_puzzle``."""
    return ActionError("no_such_puzzle", _("There is no such puzzle."))


def is_account(player_id: str) -> bool:
    """True when ``player_id`` is an account's (rated), False for a guest's."""
    return Account.objects.filter(player_id=player_id).exists()


def solver(player_id: str) -> PuzzleSolver:
    """The solver's row (made on first use)."""
    row, _ = PuzzleSolver.objects.get_or_create(player_id=player_id)
    return row


def get(puzzle_id: str) -> Puzzle:
    """The puzzle ``puzzle_id``; raises :class:`ActionError` ``no_such_puzzle``."""
    found = Puzzle.objects.filter(pk=puzzle_id).first() if isinstance(puzzle_id, str) and len(puzzle_id) <= 12 else None
    if found is None:
        raise no_such_puzzle()
    return found


def _pick(queryset, around: float) -> Puzzle | None:
    """A random puzzle of ``queryset`` near the rating ``around``, widening the window if need be."""
    for window in (WINDOW, 2 * WINDOW, 4 * WINDOW, None):
        nearby = (queryset if window is None
                  else queryset.filter(rating__gte=around - window, rating__lte=around + window))
        ids = list(nearby.values_list("id", flat=True)[:200])
        if ids:
            return Puzzle.objects.get(pk=random.choice(ids))
    return None


def next_for(player_id: str) -> Puzzle | None:
    """The next puzzle for ``player_id``: one never attempted, near its rating (1500 for a guest)."""
    around = solver(player_id).rating if is_account(player_id) else glicko.NEW_RATING
    fresh = Puzzle.objects.exclude(id__in=PuzzleAttempt.objects.filter(player_id=player_id).values("puzzle_id"))
    return _pick(fresh, around) or _pick(Puzzle.objects.all(), around)


def daily(day: date | None = None) -> Puzzle | None:
    """The puzzle of the day: the same for everyone on ``day`` (today), chosen among the puzzles
    with a shot or a stroke by a hash of the date (none without puzzles)."""
    day = day or timezone.localdate()
    ids = sorted(Puzzle.objects.values_list("id", flat=True))
    if not ids:
        return None
    index = int(hashlib.sha256(day.isoformat().encode()).hexdigest(), 16) % len(ids)
    return Puzzle.objects.get(pk=ids[index])


def _position(puzzle: Puzzle, step: int) -> rules.Position:
    position = rules.Position.from_fen(puzzle.fen)
    for text in puzzle.line[:step]:
        position = position.play(position.parse_move(text))
    return position


def public(puzzle: Puzzle) -> dict[str, Any]:
    """What a page may know of a puzzle before it is solved: ``{"id", "fen", "before", "last_move",
    "turn": "B"|"W", "legal": [str], "rating": int, "themes": [str], "source": str, "plays": int}``."""
    position = rules.Position.from_fen(puzzle.fen)
    return {"id": puzzle.id, "fen": puzzle.fen, "before": puzzle.before, "last_move": puzzle.last_move,
            "turn": position.turn.value, "legal": [str(m) for m in position.legal_moves()],
            "rating": round(puzzle.rating), "themes": puzzle.themes, "source": puzzle.source, "plays": puzzle.plays}


def _rate(attempt: PuzzleAttempt, puzzle: Puzzle, won: bool) -> dict[str, Any] | None:
    """Settle a rated attempt: the solver's and the puzzle's Glicko-2 after one game each."""
    if not attempt.rated:
        return None
    row = PuzzleSolver.objects.select_for_update().get(player_id=attempt.player_id)
    mine = glicko.Glicko(row.rating, row.deviation, row.volatility)
    theirs = glicko.Glicko(puzzle.rating, puzzle.deviation, puzzle.volatility)
    score = 1.0 if won else 0.0
    after = glicko.after_game(mine, theirs, score, TAU)
    puzzle_after = glicko.after_game(theirs, mine, 1.0 - score, TAU)
    PuzzleSolver.objects.filter(pk=row.pk).update(rating=after.rating, deviation=after.deviation,
                                                  volatility=after.volatility, plays=F("plays") + 1)
    Puzzle.objects.filter(pk=puzzle.pk).update(rating=puzzle_after.rating, deviation=puzzle_after.deviation,
                                               volatility=puzzle_after.volatility)
    attempt.rating_before, attempt.rating_after = row.rating, after.rating
    return {"before": round(row.rating), "after": round(after.rating), "diff": round(after.rating - row.rating)}


def play(player_id: str, puzzle_id: str, text: Any, step: Any = None, streak: bool = False) -> dict[str, Any]:
    """Check the solver's move ``text`` at its attempt's next step; returns what the page shows next.

    The attempt is ``player_id``'s at ``puzzle_id`` (made by its first move: rated for an account
    outside streak mode). Once it is decided, more moves replay the puzzle for practice: ``step``
    then says which solver step (an even index of the line) the move is for. Returns ``{"result":
    "continue"|"won"|"lost", "move": the move in full notation, "reply": the opponent's answer or
    None, "fen": the position now, "legal": [str], "refutation": str|None (the opponent's answer
    to a wrong move, played on ``fen``), "solution": [str]|None,
    "rating": {"before", "after", "diff"}|None, "practice": bool}``. Raises :class:`ActionError`
    ``no_such_puzzle``, ``bad_request`` (no text, or a step that is no solver step),
    ``malformed_move``, ``illegal_move`` or ``ambiguous_move`` (nothing counted).
    """
    if not isinstance(text, str) or not text or len(text) > 80:
        raise ActionError("bad_request", _("Send the move as text, e.g. 22-18."))
    with transaction.atomic():
        wait_for_locks_at_most()
        puzzle = get(puzzle_id)
        rated = not streak and is_account(player_id)
        if rated:
            solver(player_id)
        attempt, _created = PuzzleAttempt.objects.select_for_update().get_or_create(
            player_id=player_id, puzzle=puzzle, defaults={"rated": rated, "streak": streak})
        practice = bool(attempt.result)
        if practice:
            if not isinstance(step, int) or isinstance(step, bool) or step < 0 or step % 2 or step >= len(puzzle.line):
                raise ActionError("bad_request", _("This puzzle is over: say which step the move is for."))
            at = step
        else:
            at = attempt.step
        position = _position(puzzle, at)
        move = _parse(position, text)
        expected = puzzle.line[at]
        answer: dict[str, Any] = {"move": str(move), "refutation": None, "solution": None, "rating": None,
                                  "practice": practice, "reply": None}
        if str(move) == expected:
            position = position.play(move)
            if at + 1 < len(puzzle.line):
                reply = position.parse_move(puzzle.line[at + 1])
                position = position.play(reply)
                answer["reply"] = str(reply)
            won = at + 2 >= len(puzzle.line)
            answer["result"] = "won" if won else "continue"
            if not practice:
                attempt.step = at + 2
                if won:
                    _finish(attempt, puzzle, True, answer)
        else:
            answer["result"] = "lost"
            answer["refutation"] = puzzle.refutations.get(str(at), {}).get(str(move)) or None
            answer["solution"] = list(puzzle.line)
            position = position.play(move)
            if answer["refutation"]:
                position = position.play(position.parse_move(answer["refutation"]))
            if not practice:
                _finish(attempt, puzzle, False, answer)
        if not practice:
            attempt.save()
        answer.update(fen=position.fen(), legal=[str(m) for m in position.legal_moves()])
        return answer


def _finish(attempt: PuzzleAttempt, puzzle: Puzzle, won: bool, answer: dict[str, Any]) -> None:
    attempt.result = "won" if won else "lost"
    attempt.finished_at = timezone.now()
    Puzzle.objects.filter(pk=puzzle.pk).update(plays=F("plays") + 1, wins=F("wins") + int(won))
    answer["plays"] = Puzzle.objects.filter(pk=puzzle.pk).values_list("plays", flat=True).first()
    answer["rating"] = _rate(attempt, puzzle, won)
    if won:
        answer["solution"] = list(puzzle.line)


def _parse(position: rules.Position, text: str) -> rules.Move:
    try:
        return position.parse_move(text)
    except rules.AmbiguousMoveError:
        raise ActionError("ambiguous_move", _("That move is ambiguous: give every landing square.")) from None
    except rules.IllegalMoveError:
        raise ActionError("illegal_move", _("That move is not legal here.")) from None
    except rules.RulesError:
        raise ActionError("malformed_move", _("That is not a move, e.g. 22-18.")) from None


def streak_next(session: Any) -> Puzzle | None:
    """The next puzzle of the session's streak (``session["puzzle_streak"]``: ``{"count", "puzzle"}``):
    rated :data:`STREAK_START` plus :data:`STREAK_STEP` per puzzle solved, not played in it yet."""
    state = session.get("puzzle_streak") or {"count": 0, "puzzle": None, "seen": []}
    if state.get("puzzle"):
        found = Puzzle.objects.filter(pk=state["puzzle"]).first()
        if found is not None:
            return found
    around = STREAK_START + STREAK_STEP * state["count"]
    found = _pick(Puzzle.objects.exclude(id__in=state.get("seen", [])).filter(rating__gte=around - WINDOW), around)
    if found is not None:
        state.update(puzzle=found.id, seen=(state.get("seen", []) + [found.id])[-200:])
        session["puzzle_streak"] = state
    return found


def streak_result(session: Any, player_id: str, puzzle_id: str, result: str) -> dict[str, int]:
    """After a streak puzzle was won or lost: the streak goes on (+1) or ends (back to 0); returns
    ``{"streak", "best"}``, the best kept in the session and, for an account, its solver row."""
    state = session.get("puzzle_streak") or {"count": 0, "puzzle": None, "seen": []}
    if state.get("puzzle") != puzzle_id or result not in ("won", "lost"):
        return {"streak": state["count"], "best": session.get("puzzle_best_streak", 0)}
    count = state["count"] + 1 if result == "won" else 0
    best = max(session.get("puzzle_best_streak", 0), state["count"] + (result == "won"))
    session["puzzle_streak"] = {**state, "count": count, "puzzle": None}
    session["puzzle_best_streak"] = best
    if is_account(player_id):
        PuzzleSolver.objects.get_or_create(player_id=player_id)
        PuzzleSolver.objects.filter(player_id=player_id, best_streak__lt=best).update(best_streak=best)
    return {"streak": count, "best": best}


def history(player_id: str, limit: int = 50) -> list[PuzzleAttempt]:
    """The player's latest decided attempts, newest first."""
    return list(PuzzleAttempt.objects.filter(player_id=player_id).exclude(result="").select_related("puzzle")
                .order_by("-started_at")[:limit])
