"""The rules of American checkers (English draughts), as played on this site.

Pure Python, standard library only. Every rule follows docs/rules.md; notation and
game files follow PDN 3.0. The main types:

- :class:`Position`: an immutable position; ``legal_moves()`` is the single
  source of truth for legality; FEN both ways; ``parse_move`` / ``str(move)``.
- :class:`Move`: one ply, with its full path and captured squares.
- :class:`Game`: a game record that decides the end (:class:`Outcome`).
- :func:`perft`, :func:`divide`: move-generator counts.
- :func:`read_games`, :func:`game_to_pdn`, :func:`moves_to_pdn`, :func:`write_game`: PDN files.

>>> from game.rules import Position
>>> position = Position.initial()
>>> position = position.play(position.parse_move("11-15"))
>>> position.turn.label, len(position.legal_moves())
('White', 7)
"""

from .counting import divide, perft
from .errors import (
    GameOverError,
    IllegalMoveError,
    InvalidFenError,
    MalformedMoveError,
    RulesError,
)
from .game import FORTY_MOVE_PLIES, REPETITION_COUNT, Game, Outcome, Termination
from .pdn import PdnGame, game_to_pdn, moves_to_pdn, read_games, write_game
from .position import INITIAL_FEN, SQUARES, AmbiguousMoveError, Color, Move, Position

__all__ = [
    "Color",
    "Move",
    "Position",
    "INITIAL_FEN",
    "SQUARES",
    "Game",
    "Outcome",
    "Termination",
    "FORTY_MOVE_PLIES",
    "REPETITION_COUNT",
    "perft",
    "divide",
    "PdnGame",
    "read_games",
    "write_game",
    "game_to_pdn",
    "moves_to_pdn",
    "RulesError",
    "InvalidFenError",
    "MalformedMoveError",
    "IllegalMoveError",
    "AmbiguousMoveError",
    "GameOverError",
]
