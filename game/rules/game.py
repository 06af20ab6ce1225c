"""A game record: the moves played from a start position and how the game ended.

Source: docs/rules.md, "Winning" (no pieces, no legal move, resignation) and
"Draws" ("Threefold repetition", "Forty-move rule" of WCDF 1.32, "Agreement").
"""

from __future__ import annotations

import collections
import dataclasses
import enum
from collections.abc import Iterable
from typing import Self

from .errors import GameOverError, RulesError
from .position import Color, Move, Position

__all__ = ["Termination", "Outcome", "Game", "FORTY_MOVE_PLIES", "REPETITION_COUNT"]

#: Plies without a capture or a man move after which the game is drawn (forty moves by each side).
FORTY_MOVE_PLIES = 80
#: Occurrences of the same position (same side to move) that draw the game.
REPETITION_COUNT = 3


class Termination(enum.Enum):
    """Why a game ended. The values are stable strings, fit for storage."""

    NO_PIECES = "no_pieces"
    NO_MOVES = "no_moves"
    REPETITION = "repetition"
    FORTY_MOVES = "forty_moves"
    RESIGNATION = "resignation"
    AGREEMENT = "agreement"
    TIME_FORFEIT = "time_forfeit"
    ABORTED = "aborted"
    ABANDONED = "abandoned"


_NEEDS_WINNER = {Termination.NO_PIECES, Termination.NO_MOVES, Termination.RESIGNATION}
_DRAWS = {Termination.REPETITION, Termination.FORTY_MOVES, Termination.AGREEMENT}
#: Endings decided outside the rules, which :meth:`Game.end` accepts.
EXTERNAL = frozenset({Termination.RESIGNATION, Termination.AGREEMENT, Termination.TIME_FORFEIT,
                      Termination.ABORTED, Termination.ABANDONED})


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The end of a game: a :class:`Termination` and the winner (a :class:`Color`, or None).

    :attr:`result` is the PDN result string, from Black's side first as in
    PDN for English draughts: ``'1-0'`` Black won, ``'0-1'`` White won,
    ``'1/2-1/2'`` drawn, ``'*'`` for an aborted game without a winner.
    :attr:`reason` is a sentence for people.

    >>> Outcome(Termination.NO_MOVES, Color.BLACK).result
    '1-0'
    >>> Outcome(Termination.NO_MOVES, Color.BLACK).reason
    'White has no legal move'
    >>> Outcome(Termination.REPETITION, None).result
    '1/2-1/2'
    """

    termination: Termination
    winner: Color | None = None

    def __post_init__(self) -> None:
        termination = Termination(self.termination)
        winner = None if self.winner is None else Color(self.winner)
        object.__setattr__(self, "termination", termination)
        object.__setattr__(self, "winner", winner)
        if termination in _NEEDS_WINNER and winner is None:
            raise ValueError(f"{termination.value} needs a winner")
        if termination in _DRAWS and winner is not None:
            raise ValueError(f"{termination.value} is a draw and has no winner")

    @property
    def result(self) -> str:
        """PDN result: ``'1-0'`` (Black won), ``'0-1'`` (White won), ``'1/2-1/2'`` or ``'*'``."""
        if self.winner is Color.BLACK:
            return "1-0"
        if self.winner is Color.WHITE:
            return "0-1"
        if self.termination is Termination.ABORTED:
            return "*"
        return "1/2-1/2"

    @property
    def is_draw(self) -> bool:
        """True when nobody won and the game was not aborted."""
        return self.winner is None and self.termination is not Termination.ABORTED

    @property
    def reason(self) -> str:
        """Why the game ended, as a short sentence, e.g. ``'White has no legal move'``."""
        loser = self.winner.opponent.label if self.winner else None
        t = self.termination
        if t is Termination.NO_PIECES:
            return f"{loser} has no pieces left"
        if t is Termination.NO_MOVES:
            return f"{loser} has no legal move"
        if t is Termination.REPETITION:
            return "draw by threefold repetition"
        if t is Termination.FORTY_MOVES:
            return "draw by the forty-move rule: 80 plies without a capture or a man move"
        if t is Termination.RESIGNATION:
            return f"{loser} resigned"
        if t is Termination.AGREEMENT:
            return "draw by agreement"
        if t is Termination.TIME_FORFEIT:
            return f"{loser} lost on time" if loser else "time forfeit"
        if t is Termination.ABANDONED:
            return f"{loser} left the game" if loser else "draw: a player left the game"
        return "game aborted"


class Game:
    """A game record: start position, moves played, and the automatic end.

    ``Game(start=None)`` starts from ``start`` (a :class:`Position`, default the
    start position). After every ply the record decides the end (docs/rules.md, "Winning", "Draws"):
    the side to move with no pieces or no legal move loses; otherwise the third
    occurrence of a position draws; otherwise 80 consecutive plies with no
    capture and no man move draw. A win reached on that 80th ply stands,
    because the win is checked first. Endings from outside the rules
    (resignation, agreement, time, abort) are recorded with :meth:`end`.

    ``automatic_draws=False`` is for records of games played elsewhere (docs/rules.md, "Records
    from elsewhere"): over the board a repetition or the forty-move count is claimed, not
    automatic, so such a record plays on past them; :attr:`site_draw` tells at which ply the
    site would have declared the draw.  Wins (no pieces, no legal move) end it as always.

    >>> game = Game.from_moves(["11-15", "23-18", "9-14"])
    >>> game.ply, game.position.turn, game.outcome
    (3, <Color.WHITE: 'W'>, None)
    >>> game.play("18x9")
    Move((18, 9), (14,))
    """

    def __init__(self, start: Position | None = None, *, automatic_draws: bool = True) -> None:
        if start is None:
            start = Position.initial()
        elif not isinstance(start, Position):
            raise TypeError(f"start must be a Position, not {type(start).__name__}")
        self._start = start
        self._positions = [start]
        self._moves: list[Move] = []
        self._progress = [0]
        self._counts = collections.Counter({start: 1})
        self._automatic_draws = automatic_draws
        self._site_draw: tuple[int, Outcome] | None = None
        self._outcome: Outcome | None = None
        self._outcome = self._decide()

    @classmethod
    def from_moves(cls, moves: Iterable[Move | str], start_fen: str | None = None, *,
                   automatic_draws: bool = True) -> Self:
        """Replay ``moves`` (move strings, normally full form) from ``start_fen`` or the start
        (``automatic_draws`` as for the constructor).

        Raises :class:`~game.rules.InvalidFenError` for a bad ``start_fen``,
        and the errors of :meth:`play` for a move that cannot be played.
        """
        game = cls(Position.from_fen(start_fen) if start_fen else None, automatic_draws=automatic_draws)
        for move in moves:
            game.play(move)
        return game

    @property
    def start(self) -> Position:
        """The start :class:`Position`."""
        return self._start

    @property
    def position(self) -> Position:
        """The current :class:`Position`."""
        return self._positions[-1]

    @property
    def positions(self) -> list[Position]:
        """All positions of the game, from the start to the current one (a new list)."""
        return list(self._positions)

    @property
    def moves(self) -> list[Move]:
        """The moves played, in order (a new list of :class:`Move`)."""
        return list(self._moves)

    @property
    def ply(self) -> int:
        """Number of plies played."""
        return len(self._moves)

    @property
    def outcome(self) -> Outcome | None:
        """The :class:`Outcome` once the game is decided, else None."""
        return self._outcome

    @property
    def site_draw(self) -> tuple[int, Outcome] | None:
        """For a record without automatic draws: ``(ply, outcome)``, the number of plies after
        which the site would have declared the draw (the first third occurrence of a position,
        or the 80th ply without a capture or a man move) and that draw; else None (no such ply
        yet, or the record draws by itself, when :attr:`outcome` holds the draw)."""
        return self._site_draw

    @property
    def is_over(self) -> bool:
        """True once the game is decided."""
        return self._outcome is not None

    @property
    def no_progress_plies(self) -> int:
        """Consecutive plies, up to now, with no capture and no man move (docs/rules.md, "Forty-move rule")."""
        return self._progress[-1]

    @property
    def repetition_count(self) -> int:
        """How many times the current position has occurred in the game (1 the first time)."""
        return self._counts[self.position]

    def legal_moves(self) -> list[Move]:
        """The legal moves of the side to move, or an empty list once the game is decided."""
        return [] if self._outcome else self.position.legal_moves()

    def play(self, move: Move | str) -> Move:
        """Play one ply: a :class:`Move` or move text (see :meth:`Position.parse_move`).

        Returns the :class:`Move` played. Raises :class:`GameOverError` once the
        game is decided, :class:`MalformedMoveError`, :class:`IllegalMoveError`
        or :class:`AmbiguousMoveError` for a move that cannot be played.
        """
        if self._outcome is not None:
            raise GameOverError(f"the game is over ({self._outcome.reason}); no move may be played")
        position = self.position
        if isinstance(move, str):
            move = position.parse_move(move)
        else:
            move = position.legal_move(move)
        after = position.play(move)
        progress = 0 if move.is_capture or position.is_man_move(move) else self._progress[-1] + 1
        self._moves.append(move)
        self._positions.append(after)
        self._progress.append(progress)
        self._counts[after] += 1
        self._outcome = self._decide()
        return move

    def end(self, outcome: Outcome) -> None:
        """Record an end decided outside the rules: resignation, agreement, time forfeit or abort.

        Raises :class:`GameOverError` when the game is already decided, and
        :class:`RulesError` for an automatic termination (those are decided by
        the record itself).
        """
        if not isinstance(outcome, Outcome):
            raise TypeError(f"outcome must be an Outcome, not {type(outcome).__name__}")
        if self._outcome is not None:
            raise GameOverError(f"the game is already over ({self._outcome.reason})")
        if outcome.termination not in EXTERNAL:
            raise RulesError(f"{outcome.termination.value} is decided by the rules, not by end()")
        self._outcome = outcome

    def _decide(self) -> Outcome | None:
        position = self.position
        turn = position.turn
        if not position.pieces(turn):
            return Outcome(Termination.NO_PIECES, turn.opponent)
        if not position.has_legal_move():
            return Outcome(Termination.NO_MOVES, turn.opponent)
        draw = None
        if self._counts[position] >= REPETITION_COUNT:
            draw = Outcome(Termination.REPETITION, None)
        elif self._progress[-1] >= FORTY_MOVE_PLIES:
            draw = Outcome(Termination.FORTY_MOVES, None)
        if draw is None or self._automatic_draws:
            return draw
        if self._site_draw is None:
            self._site_draw = (len(self._moves), draw)
        return None

    def __repr__(self) -> str:
        moves = [str(m) for m in self._moves]
        start = "" if self._start == Position.initial() else f", start_fen={self._start.fen()!r}"
        return f"Game.from_moves({moves!r}{start})"
