"""The lessons: one per rule of "How to play" (docs/rules.md), and the classic endings.

A **rules lesson** is a few boards; on each the learner must play the right move, checked here by
the rules: every accepted move is legal in its position (``tests/learning/test_lessons.py``
checks each against :mod:`game.rules`), and for the draw rules the rules themselves must declare
the draw the step teaches. A board may come after moves already played (``setup``), replayed by the
rules so that repetitions and the forty-move count are the game's.

An **ending** (First Position, two kings against one) is played against the engine from its
position: each of the learner's moves must keep the win, as the endgame database says exactly,
and the engine answers with the database's longest defence (:func:`game.engine.native.endgame_line`);
the learner has won when the other side cannot move, and has failed on a move that lets the win
go, or when the forty-move rule draws the game first. Without a database on the server the endings
are closed (:func:`ending_available`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from django.utils.translation import gettext_lazy as _

from game.engine import native
from game.rules import Color, Game, Position, Termination

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise


@dataclass(frozen=True)
class Step:
    """One board: the position after ``setup`` (moves from ``fen``), what to do, the moves accepted."""

    fen: str
    prompt: StrPromise
    answers: frozenset[str]
    hint: StrPromise
    setup: tuple[str, ...] = ()
    #: The rules must end the game this way once the answer is played (the draw lessons).
    ends: Termination | None = None


@dataclass(frozen=True)
class Lesson:
    """A lesson: ``key`` in its address, ``title``, ``intro``; ``steps`` (a rules lesson) or
    ``ending`` (the FEN of an ending played against the engine, the learner to move)."""

    key: str
    title: StrPromise
    intro: StrPromise
    steps: tuple[Step, ...] = ()
    ending: str | None = None
    rule: str = ""
    pieces: int = field(default=0)


def _forty_move_setup() -> tuple[str, tuple[str, ...]]:
    """A position and 79 plies of king moves from it (no capture, no man move, no position a third
    time), found by a depth-first walk: one ply from the forty-move rule, Black to move with a man."""
    fen = "W:WK29:B12,K19"
    seen: dict[Position, int] = {Position.from_fen(fen): 1}
    moves: list[str] = []

    def walk(position: Position) -> bool:
        if len(moves) == 79:
            return True
        for move in position.legal_moves():
            after = position.play(move)
            if position.is_man_move(move) or move.is_capture or seen.get(after, 0) >= 2 \
                    or any(m.is_capture for m in after.legal_moves()):
                continue
            seen[after] = seen.get(after, 0) + 1
            moves.append(str(move))
            if walk(after):
                return True
            moves.pop()
            seen[after] -= 1
        return False

    if not walk(Position.from_fen(fen)):
        raise RuntimeError("no walk of 79 king moves for the forty-move lesson")
    return fen, tuple(moves)


FORTY_FEN, FORTY_SETUP = _forty_move_setup()

LESSONS: tuple[Lesson, ...] = (
    Lesson("moves", _("Moving"),
           _("Men step one square diagonally forward; kings step one square in any diagonal direction."),
           steps=(
               Step("B:W30:B9,11", _("Move the man on 9 forward to 14."), frozenset({"9-14"}),
                    _("A man moves one square diagonally forward, to an empty square: 9 to 14.")),
               Step("B:W30:BK18",
                    _("Kings move backward too: move the king from 18 back toward your side, to 14 or 15."),
                    frozenset({"18-14", "18-15"}),
                    _("Black's side is the top of the board: 14 and 15 are behind the king.")),
           ), rule="moves"),
    Lesson("capture", _("Capturing"),
           _("A piece jumps an enemy piece next to it onto the empty square just beyond, and takes it."),
           steps=(
               Step("B:W14,30:B10", _("Jump over the white man on 14."), frozenset({"10x17"}),
                    _("Your man on 10 jumps over 14 and lands on 17.")),
               Step("B:W14,15,22,32:B3,10", _("Two captures are possible: take the one that wins two pieces."),
                    frozenset({"10x17x26"}), _("From 10, jump 14 then 22: 10x17x26 takes two.")),
           ), rule="capture"),
    Lesson("multi_jump", _("Multi-jumps"),
           _("After a jump the same piece keeps jumping while it can: the whole route is one move."),
           steps=(
               Step("B:W14,23,32:B9", _("Take both white men in one move."), frozenset({"9x18x27"}),
                    _("Jump 14, then 23: 9x18x27.")),
           ), rule="multi_jump"),
    Lesson("crowning", _("Crowning"),
           _("A man that reaches the far row becomes a king; a capture that crowns ends there."),
           steps=(
               Step("B:W6:B27", _("Crown your man on the far row."), frozenset({"27-31", "27-32"}),
                    _("The far row for Black is 29 to 32: step from 27 to 31 or 32.")),
               Step("B:W5,26,27:B3,22", _("Capture and crown at once."), frozenset({"22x31"}),
                    _("22 jumps 26 and lands on 31, the king row: the move ends there.")),
           ), rule="crowning"),
    Lesson("forced_capture", _("Capture is compulsory"),
           _("When a capture is possible, a capture must be played: the board only offers captures then."),
           steps=(
               Step("B:W15,19,32:B10,11", _("You would like to play 10-14, but a capture is on the board: play it."),
                    frozenset({"11x18"}), _("Only 11x18 is legal: a capture must be taken.")),
               Step("B:W13,18,31:B6,9,14", _("Find the capture you must play."), frozenset({"14x23"}),
                    _("The man on 14 can jump 18: 14x23 is the only legal move.")),
           ), rule="forced_capture"),
    Lesson("draws", _("Draws"),
           _("The same position a third time with the same side to move is a draw; so are forty moves each "
             "without a capture or a man move."),
           steps=(
               Step("B:WK28:BK1",
                    _("This position has been on the board twice. Play 32-28 to bring it a third time: a draw."),
                    frozenset({"32-28"}), _("Only 32-28 repeats the position a third time."),
                    setup=("1-6", "28-32", "6-1", "32-28", "1-6", "28-32", "6-1"), ends=Termination.REPETITION),
               Step(FORTY_FEN,
                    _("79 plies have gone by without a capture or a man move. Keep the game going: move your man."),
                    frozenset({"12-16"}),
                    _("Any king move now would be the 80th ply without progress: a draw. 12-16 is a man move."),
                    setup=FORTY_SETUP),
           ), rule="draws"),
    Lesson("first_position", _("First Position"),
           _("Two kings against a king and a man: drive the king out of the double corner and win. White to "
             "play and win (the ACF's standard position)."),
           ending="W:W20,K15:B12,K28", pieces=4),
    Lesson("two_kings", _("Two kings against one"),
           _("Two kings beat one: drive the lone king to the edge and trap it. Black to play and win."),
           ending="B:WK32:BK1,K5", pieces=3),
)

BY_KEY = {lesson.key: lesson for lesson in LESSONS}


def ending_available(lesson: Lesson) -> bool:
    """True when the server's endgame database covers the ending (its verdicts check every move)."""
    return lesson.ending is not None and native.endgame_verdict(Position.from_fen(lesson.ending)) is not None


@cache
def _setup_game(fen: str, setup: tuple[str, ...]) -> Game:
    game = Game(Position.from_fen(fen))
    for text in setup:
        game.play(text)
    return game


def step_view(lesson: Lesson, index: int) -> dict[str, Any]:
    """What the page shows of step ``index``: ``{"index", "count", "fen", "turn", "legal", "prompt",
    "last_move"}``."""
    step = lesson.steps[index]
    game = _setup_game(step.fen, step.setup)
    position = game.position
    return {"index": index, "count": len(lesson.steps), "fen": position.fen(), "turn": position.turn.value,
            "legal": [str(m) for m in position.legal_moves()], "prompt": str(step.prompt),
            "last_move": str(game.moves[-1]) if game.moves else None}


def check_step(lesson: Lesson, index: int, text: str) -> dict[str, Any]:
    """The learner's move ``text`` on step ``index``: ``{"right": bool, "move", "fen" (after it),
    "message", "next": step_view|None, "done": bool}``. Raises the rules' errors for a move that is
    not legal there."""
    step = lesson.steps[index]
    base = _setup_game(step.fen, step.setup)
    game = Game(base.start)
    for move in base.moves:
        game.play(move)
    move = game.play(text)
    right = str(move) in step.answers and (step.ends is None or (game.outcome is not None
                                                                  and game.outcome.termination is step.ends))
    last = index + 1 >= len(lesson.steps)
    message = str(_("Right!") if right else step.hint)
    if right and step.ends is not None and game.outcome is not None:
        message = str(_("Right: the game is drawn (%(reason)s).")) % {"reason": game.outcome.reason}
    return {"right": right, "move": str(move), "fen": game.position.fen(), "message": str(message),
            "next": step_view(lesson, index + 1) if right and not last else None, "done": right and last}


def ending_move(lesson: Lesson, moves: list[str], text: str) -> dict[str, Any]:
    """The learner's move ``text`` in an ending after ``moves`` (both sides', from its start).

    Returns ``{"result": "continue"|"won"|"lost", "move", "reply": str|None, "moves": [the line
    now], "fen", "legal", "verdict": the database's verdict for the learner|None, "message"}``.
    Raises the rules' errors for a move that is not legal, ValueError for earlier moves that are
    not the line the server played.
    """
    assert lesson.ending is not None
    game = Game(Position.from_fen(lesson.ending))
    learner = game.position.turn
    for index, earlier in enumerate(moves):
        game.play(earlier)
        if index % 2 == 1 and _reply(game.positions[-2]) != earlier:
            raise ValueError("the line is not the one played here")
    if game.is_over or game.position.turn is not learner:
        raise ValueError("the ending is over")
    move = game.play(text)
    line = moves + [str(move)]
    verdict = native.endgame_verdict(game.position)
    if game.outcome is not None:
        won = game.outcome.winner is learner
        return _ending_answer("won" if won else "lost", move, None, line, game, verdict, learner)
    if verdict is None or verdict["winner"] != learner.value:
        return _ending_answer("lost", move, None, line, game, verdict, learner)
    reply = game.play(_reply(game.position))
    line.append(str(reply))
    if game.outcome is not None:
        return _ending_answer("won" if game.outcome.winner is learner else "lost", move, reply, line, game,
                              native.endgame_verdict(game.position), learner)
    return _ending_answer("continue", move, reply, line, game, native.endgame_verdict(game.position), learner)


def _reply(position: Position) -> str:
    """The engine's answer in an ending: the database's best play (the longest defence)."""
    line = native.endgame_line(position, 1)
    return str(line[0]) if line else str(position.legal_moves()[0])


def _ending_answer(result: str, move: Any, reply: Any, line: list[str], game: Game, verdict: Any,
                   learner: Color) -> dict[str, Any]:
    messages = {"continue": _("Good: the win is kept."),
                "won": _("Won! That is the technique."),
                "lost": _("That lets the win go: the endgame database says it is no longer a win. Try again.")}
    if result == "lost" and game.outcome is not None and game.outcome.termination is Termination.FORTY_MOVES:
        messages["lost"] = _("Drawn by the forty-move rule: win faster. Try again.")
    plies = verdict["plies"] if verdict and verdict.get("winner") == learner.value else None
    return {"result": result, "move": str(move), "reply": str(reply) if reply else None, "moves": line,
            "fen": game.position.fen(), "legal": [str(m) for m in game.legal_moves()] if result == "continue" else [],
            "plies_to_win": plies, "message": str(messages[result])}

