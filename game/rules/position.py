"""Positions and moves of American checkers (English draughts), as immutable values.

Source of every rule: docs/rules.md; notation: PDN 3.0.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from typing import Self

from . import bitboard
from .errors import IllegalMoveError, InvalidFenError, MalformedMoveError, RulesError

__all__ = ["Color", "Move", "Position", "SQUARES", "INITIAL_FEN"]

#: The playable squares, 1-32.
SQUARES = range(1, 33)

#: PDN FEN of the start position.
INITIAL_FEN = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"


class AmbiguousMoveError(RulesError):
    """A short-form move such as ``"27x11"`` that matches several legal moves.

    :attr:`candidates` is the list of matching :class:`~game.rules.Move`
    values; the message lists them in full form.
    """

    def __init__(self, message: str, candidates: Iterable[Move] = ()) -> None:
        super().__init__(message)
        self.candidates: list[Move] = list(candidates)


class Color(enum.Enum):
    """A side. Black moves first, toward the higher square numbers.

    >>> Color.BLACK.opponent
    <Color.WHITE: 'W'>
    >>> Color('W').label
    'White'
    """

    BLACK = "B"
    WHITE = "W"

    @property
    def opponent(self) -> Color:
        """The other side."""
        return Color.WHITE if self is Color.BLACK else Color.BLACK

    @property
    def label(self) -> str:
        """The side's name for people: ``'Black'`` or ``'White'``."""
        return "Black" if self is Color.BLACK else "White"


class Move:
    """One legal move (one ply): a quiet step or a complete capture route.

    :attr:`path` is the tuple of squares (1-32) the piece stands on, start first
    then every landing square; :attr:`captures` the tuple of jumped squares in
    jump order (empty for a quiet move); :attr:`crowns` tells whether a man is
    crowned by the move. Two moves are equal when path and captures are equal.
    ``str(move)`` is the full PDN notation.

    Moves are normally obtained from :meth:`Position.legal_moves` or
    :meth:`Position.parse_move`, never built by hand.

    >>> move = Position.initial().parse_move("11-15")
    >>> move.path, move.captures, move.is_capture, str(move)
    ((11, 15), (), False, '11-15')
    >>> Position.from_fen("B:W8,16:B4").parse_move("4x20")
    Move((4, 11, 20), (8, 16))
    """

    __slots__ = ("_captures", "_crowns", "_hash", "_path")

    _path: tuple[int, ...]
    _captures: tuple[int, ...]
    _crowns: bool
    _hash: int

    def __init__(self, path: Iterable[int], captures: Iterable[int] = (), crowns: bool = False) -> None:
        path = tuple(path)
        captures = tuple(captures)
        if len(path) < 2:
            raise ValueError("a move needs a start square and at least one destination")
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_captures", captures)
        object.__setattr__(self, "_crowns", bool(crowns))
        object.__setattr__(self, "_hash", hash((path, captures)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Move is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Move is immutable")

    @property
    def path(self) -> tuple[int, ...]:
        """Tuple of squares: the start square, then every landing square."""
        return self._path

    @property
    def captures(self) -> tuple[int, ...]:
        """Tuple of the captured (jumped) squares in jump order; empty for a quiet move."""
        return self._captures

    @property
    def crowns(self) -> bool:
        """True when the moving man reaches its crowning row."""
        return self._crowns

    @property
    def is_capture(self) -> bool:
        """True for a capture (a single jump or a multi-jump)."""
        return bool(self._captures)

    @property
    def start(self) -> int:
        """The square the piece moves from."""
        return self._path[0]

    @property
    def end(self) -> int:
        """The square the piece comes to rest on."""
        return self._path[-1]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return self._path == other._path and self._captures == other._captures

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return (self._path, self._captures) < (other._path, other._captures)

    def __str__(self) -> str:
        separator = "x" if self._captures else "-"
        return separator.join(str(square) for square in self._path)

    def __repr__(self) -> str:
        return f"Move({self._path!r}, {self._captures!r})"

    def __reduce__(self) -> tuple[type[Move], tuple[tuple[int, ...], tuple[int, ...], bool]]:
        return (Move, (self._path, self._captures, self._crowns))


# re.ASCII: only ASCII digits and whitespace, not the other Unicode ones \d and \s match (Arabic-Indic,
# fullwidth, no-break space...).
_FEN_SQUARE = re.compile(r"(K?)(\d+)(?:-(\d+))?\Z", re.ASCII)
_MOVE_TEXT = re.compile(r"\s*(\d{1,2})((?:\s*[-xX:]\s*\d{1,2})+)\s*\Z", re.ASCII)
_MOVE_PART = re.compile(r"[-xX:]\s*(\d{1,2})", re.ASCII)
#: What re.ASCII's \s matches: space, tab, LF, CR, FF, VT. ``str.strip()`` without an argument would also
#: take Unicode spaces (no-break space...) and the ASCII separators \x1c-\x1f.
ASCII_WHITESPACE = " \t\n\r\f\v"


def _mask(squares: Iterable[int]) -> int:
    mask = 0
    for square in squares:
        mask |= 1 << (square - 1)
    return mask


def _squares(mask: int) -> list[int]:
    result = []
    while mask:
        bit = mask & -mask
        mask ^= bit
        result.append(bit.bit_length())
    return result


class Position:
    """A position: where the men and kings of both sides stand, and the side to move.

    Immutable and hashable; two positions are equal when the same pieces stand
    on the same squares with the same side to move (the identity used for
    repetition, docs/rules.md, "Threefold repetition"). Build one with
    :meth:`initial`, :meth:`from_fen` or :meth:`from_board`.

    >>> position = Position.initial()
    >>> position.turn
    <Color.BLACK: 'B'>
    >>> [str(move) for move in position.legal_moves()]
    ['9-13', '9-14', '10-14', '10-15', '11-15', '11-16', '12-16']
    >>> position.play(position.parse_move("11-15")).fen()
    'W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,12,15'
    """

    __slots__ = ("_black", "_hash", "_kings", "_moves", "_turn", "_white")

    _black: int
    _white: int
    _kings: int
    _turn: Color
    _moves: tuple[Move, ...] | None
    _hash: int

    def __init__(self, black: int = 0, white: int = 0, kings: int = 0, turn: Color | str | None = None) -> None:
        """Build a position from bitboards: bit ``n - 1`` stands for square ``n``.

        ``black``, ``white``: the squares of each side's pieces; ``kings``: the
        squares holding kings (a subset of ``black | white``); ``turn``: the
        side to move (default Black). Raises :class:`InvalidFenError` when the
        masks overlap, leave the board or put a man on its crowning row. Most
        callers want :meth:`from_fen` or :meth:`from_board` instead.
        """
        turn = Color.BLACK if turn is None else Color(turn)
        full = bitboard.FULL
        if (black | white | kings) & ~full or min(black, white, kings) < 0:
            raise InvalidFenError("square outside 1-32")
        if black & white:
            raise InvalidFenError(f"square held by both sides: {_squares(black & white)[0]}")
        if kings & ~(black | white):
            raise InvalidFenError(f"king on an empty square: {_squares(kings & ~(black | white))[0]}")
        men = ~kings
        if black & men & bitboard.ROW_BOTTOM:
            raise InvalidFenError(
                f"black man on its crowning row: {_squares(black & men & bitboard.ROW_BOTTOM)[0]}")
        if white & men & bitboard.ROW_TOP:
            raise InvalidFenError(
                f"white man on its crowning row: {_squares(white & men & bitboard.ROW_TOP)[0]}")
        set_ = object.__setattr__
        set_(self, "_black", black)
        set_(self, "_white", white)
        set_(self, "_kings", kings)
        set_(self, "_turn", turn)
        set_(self, "_moves", None)
        set_(self, "_hash", hash((black, white, kings, turn is Color.BLACK)))

    @classmethod
    def _trusted(cls, black: int, white: int, kings: int, turn: Color) -> Self:
        self = object.__new__(cls)
        set_ = object.__setattr__
        set_(self, "_black", black)
        set_(self, "_white", white)
        set_(self, "_kings", kings)
        set_(self, "_turn", turn)
        set_(self, "_moves", None)
        set_(self, "_hash", hash((black, white, kings, turn is Color.BLACK)))
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Position is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Position is immutable")

    def __reduce__(self) -> tuple[type[Position], tuple[int, int, int, Color]]:
        return (Position, (self._black, self._white, self._kings, self._turn))

    # Construction -----------------------------------------------------------

    @classmethod
    def initial(cls) -> Self:
        """The start position: Black men on 1-12, White men on 21-32, Black to move.

        >>> Position.initial().fen() == INITIAL_FEN
        True
        """
        return cls._trusted(0x00000FFF, 0xFFF00000, 0, Color.BLACK)

    @classmethod
    def from_fen(cls, text: str) -> Self:
        """Read a PDN FEN position string such as ``'B:W21,22,K30:B1,2,K3'``.

        Format (docs/rules.md, "FEN"; PDN 3.0): the side to move
        (``B`` or ``W``), then a ``W`` section and a ``B`` section (either
        order) separated by colons, each a comma-separated list of squares 1-32,
        ``K`` before a king; a range ``K?a-b`` stands for the squares a to b.
        Squares are ASCII digits. ASCII whitespace (space, tab, line breaks)
        around the text and around each square or range is ignored; any other
        character, Unicode digits and spaces included, makes the FEN invalid.
        A section may be empty.

        Raises :class:`InvalidFenError`, naming the fault: bad side to move,
        stray characters, square outside 1-32, repeated square, square held by
        both sides, or a man on its crowning row.

        >>> Position.from_fen("W:WK1,6:B2,5,K9").board()
        {1: 'W', 2: 'b', 5: 'b', 6: 'w', 9: 'B'}
        >>> Position.from_fen("B:W1:B5")
        Traceback (most recent call last):
        ...
        game.rules.errors.InvalidFenError: white man on its crowning row: 1
        """
        if not isinstance(text, str):
            raise InvalidFenError(f"a FEN is a string, not {type(text).__name__}")
        stripped = text.strip(ASCII_WHITESPACE)
        if not stripped:
            raise InvalidFenError("empty FEN")
        parts = stripped.split(":")
        turn_text = parts[0]
        if turn_text not in ("B", "W"):
            raise InvalidFenError(f"bad side to move {turn_text!r}: expected 'B' or 'W'")
        if len(parts) != 3:
            raise InvalidFenError(
                f"stray characters: expected side to move and two colour sections separated by ':', "
                f"got {len(parts)} part(s) in {stripped!r}")
        masks: dict[str, int] = {}
        kings = 0
        seen: dict[int, str] = {}
        for section in parts[1:]:
            if not section or section[0] not in ("B", "W"):
                raise InvalidFenError(f"stray characters: section {section!r} must start with 'B' or 'W'")
            colour = section[0]
            if colour in masks:
                raise InvalidFenError(f"stray characters: two sections for {'Black' if colour == 'B' else 'White'}")
            mask = 0
            body = section[1:]
            items = body.split(",") if body else []
            for item in items:
                match = _FEN_SQUARE.match(item.strip(ASCII_WHITESPACE))
                if not match:
                    raise InvalidFenError(f"stray characters in {item!r}")
                king, first, last_text = match.group(1), int(match.group(2)), match.group(3)
                last = first if last_text is None else int(last_text)
                for square in (first, last):
                    if not 1 <= square <= 32:
                        raise InvalidFenError(f"square outside 1-32: {square}")
                if last < first:
                    raise InvalidFenError(f"stray characters: empty range {item!r}")
                for square in range(first, last + 1):
                    if square in seen:
                        if seen[square] == colour:
                            raise InvalidFenError(f"repeated square: {square}")
                        raise InvalidFenError(f"square held by both sides: {square}")
                    seen[square] = colour
                    mask |= 1 << (square - 1)
                    if king:
                        kings |= 1 << (square - 1)
            masks[colour] = mask
        return cls(masks["B"], masks["W"], kings, Color(turn_text))

    @classmethod
    def from_board(cls, board: Mapping[int, str], turn: Color | str | None = None) -> Self:
        """Build a position from a mapping of square (1-32) to piece letter.

        Letters as in :meth:`board`: ``'b'`` black man, ``'B'`` black king,
        ``'w'`` white man, ``'W'`` white king. ``turn`` is the side to move
        (a :class:`Color` or ``'B'``/``'W'``; default Black). Raises
        :class:`InvalidFenError` for a square outside 1-32, an unknown letter or
        a man on its crowning row.

        >>> Position.from_board({8: 'b', 18: 'w'}).fen()
        'B:W18:B8'
        """
        black = white = kings = 0
        for square, letter in board.items():
            if not isinstance(square, int) or not 1 <= square <= 32:
                raise InvalidFenError(f"square outside 1-32: {square!r}")
            bit = 1 << (square - 1)
            if letter in ("b", "B"):
                black |= bit
            elif letter in ("w", "W"):
                white |= bit
            else:
                raise InvalidFenError(f"unknown piece {letter!r} on {square}")
            if letter in ("B", "W"):
                kings |= bit
        return cls(black, white, kings, turn)

    # Reading ----------------------------------------------------------------

    @property
    def turn(self) -> Color:
        """The side to move (:class:`Color`)."""
        return self._turn

    @property
    def black(self) -> int:
        """Bitboard of Black's pieces (bit ``n - 1`` for square ``n``)."""
        return self._black

    @property
    def white(self) -> int:
        """Bitboard of White's pieces (bit ``n - 1`` for square ``n``)."""
        return self._white

    @property
    def kings(self) -> int:
        """Bitboard of the kings of both sides (bit ``n - 1`` for square ``n``)."""
        return self._kings

    def fen(self) -> str:
        """The PDN FEN of this position, in canonical form.

        Side to move, then White's squares ascending, then Black's, ``K`` before
        each king: ``'B:W21,22,K30:B1,2,K3'``.
        """
        def section(mask: int) -> str:
            return ",".join(
                ("K" if self._kings & (1 << (square - 1)) else "") + str(square) for square in _squares(mask))

        return f"{self._turn.value}:W{section(self._white)}:B{section(self._black)}"

    def board(self) -> dict[int, str]:
        """Map each occupied square (1-32) to ``'b'``, ``'B'`` (black man, king), ``'w'`` or ``'W'``."""
        result: dict[int, str] = {}
        for square in _squares(self._black | self._white):
            bit = 1 << (square - 1)
            letter = "b" if self._black & bit else "w"
            result[square] = letter.upper() if self._kings & bit else letter
        return result

    def piece_at(self, square: int) -> str | None:
        """The letter of the piece on ``square`` (as in :meth:`board`), or None when it is empty."""
        if not 1 <= square <= 32:
            raise ValueError(f"square outside 1-32: {square}")
        bit = 1 << (square - 1)
        if not (self._black | self._white) & bit:
            return None
        letter = "b" if self._black & bit else "w"
        return letter.upper() if self._kings & bit else letter

    def pieces(self, color: Color | str) -> int:
        """Number of pieces (men and kings) of ``color``."""
        return (self._black if Color(color) is Color.BLACK else self._white).bit_count()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return (self._black == other._black and self._white == other._white
                and self._kings == other._kings and self._turn is other._turn)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Position.from_fen({self.fen()!r})"

    def __str__(self) -> str:
        rows = []
        for row in range(8):
            cells = []
            for column in range(8):
                index = bitboard.index_at(row, column)
                if index < 0:
                    cells.append(" ")
                else:
                    cells.append(self.piece_at(index + 1) or ".")
            rows.append(" ".join(cells))
        return "\n".join(rows)

    # Moves ------------------------------------------------------------------

    def _own_opp(self) -> tuple[int, int, bool]:
        if self._turn is Color.BLACK:
            return self._black, self._white, True
        return self._white, self._black, False

    def legal_moves(self) -> list[Move]:
        """All legal moves for the side to move, as a new list of :class:`Move`.

        The single source of truth for legality (docs/rules.md, "Moves",
        "Compulsory capture and free choice", "Multi-jumps", "Crowning"): capture is
        compulsory, every capture route is completed, any route may be chosen,
        no piece is jumped twice, and a man that crowns ends its move. Routes
        that take the same pieces in a different order are separate moves.
        Sorted by path. Empty when the side to move has lost.

        >>> [str(m) for m in Position.from_fen("W:W26:B16,22,23").legal_moves()]
        ['26x17', '26x19x12']
        """
        return list(self._legal())

    def _legal(self) -> tuple[Move, ...]:
        """The legal moves, generated on first use and kept."""
        moves = self._moves
        if moves is None:
            moves = self._generate()
            object.__setattr__(self, "_moves", moves)
        return moves

    def _generate(self) -> tuple[Move, ...]:
        own, opp, black = self._own_opp()
        kings = self._kings
        routes = bitboard.capture_routes(own, opp, kings, black)
        if routes:
            moves = [
                Move(path, captured, crowned)
                for path, captured, crowned in routes
            ]
            moves.sort()
        else:
            # quiet_moves comes sorted by (from, to); the steps are shared values.
            men, kings_ = _STEPS_BY_MAN[black], _STEPS_BY_KING
            moves = [
                kings_[a][b] if kings & (1 << a) else men[a][b]
                for a, b in bitboard.quiet_moves(own, opp, kings, black)
            ]
        return tuple(moves)

    def is_legal(self, move: Move) -> bool:
        """True when ``move`` (a :class:`Move`) is legal here."""
        return move in self.legal_moves()

    def has_legal_move(self) -> bool:
        """True when the side to move has at least one legal move."""
        own, opp, black = self._own_opp()
        return bitboard.count_moves(own, opp, self._kings, black) > 0

    def is_capture_required(self) -> bool:
        """True when the side to move must capture."""
        own, opp, black = self._own_opp()
        return bool(bitboard.jumpers(own, opp, self._kings, black))

    def is_man_move(self, move: Move) -> bool:
        """True when ``move`` is made by a man (not a king); used for the forty-move rule."""
        return not self._kings & (1 << (move.path[0] - 1))

    def play(self, move: Move) -> Position:
        """The position after ``move``, which must be one of :meth:`legal_moves`.

        Captured pieces are removed, a man reaching its far row is crowned, and
        the other side is to move. Raises :class:`IllegalMoveError` when
        ``move`` is not legal here (or not a :class:`Move`).

        >>> p = Position.from_fen("B:W11,18,26,27:B8")
        >>> p.play(p.parse_move("8x31")).fen()
        'W:W27:BK31'
        """
        return self._apply(self.legal_move(move))

    def legal_move(self, move: Move) -> Move:
        """The legal :class:`Move` equal to ``move`` (as generated, with :attr:`Move.crowns` set).

        Raises :class:`IllegalMoveError` when ``move`` is not legal here (or not a :class:`Move`).
        """
        if isinstance(move, Move):
            for legal in self._legal():
                if legal == move:
                    return legal
        raise IllegalMoveError(f"{move} is not a legal move in {self.fen()}")

    def _apply(self, move: Move) -> Position:
        start = 1 << (move.path[0] - 1)
        end = 1 << (move.path[-1] - 1)
        taken = _mask(move.captures)
        kings = self._kings & ~taken
        if kings & start:
            kings = (kings & ~start) | end
        elif move.crowns:
            kings |= end
        if self._turn is Color.BLACK:
            return Position._trusted((self._black & ~start) | end, self._white & ~taken, kings, Color.WHITE)
        return Position._trusted(self._black & ~taken, (self._white & ~start) | end, kings, Color.BLACK)

    def parse_move(self, text: str) -> Move:
        """The legal move written as ``text`` in this position.

        Accepts the full form (``'11-15'``, ``'27x18x11'``) and any shorter form
        that keeps the start, the end and some landing squares in order
        (``'27x11'``) when exactly one legal move fits. Separators are loose:
        ``-``, ``x``, ``X`` and ``:`` are all accepted for quiet moves and captures.
        Squares are one or two ASCII digits; ASCII whitespace (space, tab, line
        breaks) may surround the text and the separators, nowhere else.

        Raises :class:`MalformedMoveError` when ``text`` is not move notation
        (squares must be 1-32), :class:`IllegalMoveError` when no legal move
        fits, :class:`AmbiguousMoveError` (with ``.candidates``) when several do.

        >>> Position.initial().parse_move("11x15")
        Move((11, 15), ())
        >>> Position.initial().parse_move("11-14")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        game.rules.errors.IllegalMoveError: 11-14 is not legal in B:W21,...,12; legal moves: 9-13, 9-14, ..., 12-16
        """
        if not isinstance(text, str):
            raise MalformedMoveError(f"move notation must be a string, not {type(text).__name__}")
        match = _MOVE_TEXT.match(text)
        if not match:
            raise MalformedMoveError(f"not move notation: {text!r}")
        numbers = [int(match.group(1))] + [int(s) for s in _MOVE_PART.findall(match.group(2))]
        for square in numbers:
            if not 1 <= square <= 32:
                raise MalformedMoveError(f"not move notation: {text!r} (square {square} outside 1-32)")
        squares = tuple(numbers)
        legal = self.legal_moves()
        for move in legal:
            if move.path == squares:
                return move
        candidates = [move for move in legal if _fits(squares, move.path)]
        shown = text.strip()
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            listing = ", ".join(str(m) for m in legal) or "none"
            raise IllegalMoveError(f"{shown} is not legal in {self.fen()}; legal moves: {listing}")
        listing = ", ".join(str(m) for m in candidates)
        raise AmbiguousMoveError(f"{shown} is ambiguous in {self.fen()}: it could be {listing}", candidates)


def _step_table(crown_row: int) -> tuple[dict[int, Move], ...]:
    return tuple(
        {to: Move((start + 1, to + 1), (), bool(crown_row & (1 << to))) for to in
         (bitboard.NEIGHBOUR[d][start] for d in bitboard.DIRECTIONS) if to >= 0}
        for start in range(32)
    )


# Every quiet move exists once: _STEPS_BY_MAN[black][from index][to index] (a man's step,
# crowning on its far row) and _STEPS_BY_KING[from index][to index].
_STEPS_BY_MAN = {True: _step_table(bitboard.ROW_BOTTOM), False: _step_table(bitboard.ROW_TOP)}
_STEPS_BY_KING = _step_table(0)


def _fits(squares: tuple[int, ...], path: tuple[int, ...]) -> bool:
    """True when ``squares`` is ``path`` with some landing squares left out (same start and end)."""
    if squares[0] != path[0] or squares[-1] != path[-1] or len(squares) > len(path):
        return False
    i = 1
    for square in squares[1:-1]:
        while i < len(path) - 1 and path[i] != square:
            i += 1
        if i >= len(path) - 1:
            return False
        i += 1
    return True
