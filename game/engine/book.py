"""The engine's opening book: the move a deep search chose for the opening's positions.

The book is a text file (``game/engine/book.txt``, built by ``bench/build_book.py`` and
committed): header lines starting with ``#`` (the first is :data:`FORMAT_LINE`; the others name
the command, the date and the budget it was built with), then one line per position, six fields
separated by tabs::

    fen  move  score  depth  from  pv

``fen`` as :meth:`~game.rules.Position.fen` writes it; ``move`` in full notation; ``score`` in
hundredths of a man from the side to move's point of view; ``depth`` the plies the search
completed; ``from`` where the position comes from (``ballot 68``, ``start 11-15 23-19``); ``pv`` the
line of best play the search found, moves separated by spaces (at most :data:`PV_PLIES`).

The rules stay the truth: a book move is turned into the rules' :class:`~game.rules.Move` with
:meth:`~game.rules.Position.parse_move`, and an entry whose move is not legal in its position is
left out (with a warning in the log). The computer's strongest level (9) plays the book's move in a position
it holds (:mod:`game.engine.levels`); the analysis board does not use it.

:func:`default_book` is the process's book, read once: ``ENGINE_BOOK`` (a path) when set, else
:data:`BOOK_PATH`. A missing or unreadable file gives an empty book and an error in the log, so the
computer searches every position as it did without a book.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from game.rules import AmbiguousMoveError, IllegalMoveError, InvalidFenError, MalformedMoveError, Move, Position

log = logging.getLogger(__name__)

__all__ = ["BOOK_PATH", "FORMAT_LINE", "PV_PLIES", "Book", "BookEntry", "BookError", "read_book", "parse_book",
           "default_book", "reset_default_book"]

#: The book shipped with the code.
BOOK_PATH = Path(__file__).resolve().with_name("book.txt")
#: The first line of a book file.
FORMAT_LINE = "# checkers opening book, format 1 (game/engine/book.py)"
#: The most moves of the line of best play a book entry keeps.
PV_PLIES = 10

_FIELDS = 6
#: What a move the rules refuse raises.
_MOVE_ERRORS = (IllegalMoveError, MalformedMoveError, AmbiguousMoveError)


class BookError(ValueError):
    """A book file that is not one: no format line, or a line that is no entry.

    ``line`` is the 1-based number of the offending line (0: the file as a whole).
    """

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line


@dataclasses.dataclass(frozen=True)
class BookEntry:
    """One position of the book: its ``fen``, the ``move`` to play (full notation), its ``score``
    (hundredths of a man, side to move's view), the ``depth`` searched (plies), where it comes
    ``source`` from, and the search's line ``pv`` (full notation, starting with ``move``)."""

    fen: str
    move: str
    score: int
    depth: int
    source: str
    pv: tuple[str, ...]


class Book(Mapping[str, BookEntry]):
    """The book's entries by FEN (a read-only mapping), and the ``header`` lines of its file."""

    def __init__(self, entries: Mapping[str, BookEntry] | None = None, header: tuple[str, ...] = ()) -> None:
        self._entries = dict(entries or {})
        self.header = header

    def __getitem__(self, fen: str) -> BookEntry:
        return self._entries[fen]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, position: Position) -> BookEntry | None:
        """The entry for ``position``, or None when the book does not hold it."""
        return self._entries.get(position.fen())

    def move(self, position: Position) -> tuple[Move, BookEntry] | None:
        """The book's move for ``position`` as the rules' :class:`~game.rules.Move`, with its entry.

        None when the book does not hold the position, or when its move is not legal there (an
        entry the rules refuse is ignored, with a warning in the log).
        """
        found = self.entry(position)
        if found is None:
            return None
        try:
            return position.parse_move(found.move), found
        except _MOVE_ERRORS:
            log.warning("opening book move %s is not legal in %s; searching instead", found.move, found.fen)
            return None


def parse_book(text: str) -> Book:
    """The book in ``text`` (a book file's content; see the module's docstring).

    Entries whose move is not legal in their position are left out with a warning. Raises
    :class:`BookError` when the first line is not :data:`FORMAT_LINE`, or for a line without its
    six fields, with a FEN the rules refuse, a score or depth that is no integer, or a position
    held twice.
    """
    lines = text.splitlines()
    if not lines or lines[0] != FORMAT_LINE:
        raise BookError(0, f"not an opening book: its first line must be {FORMAT_LINE!r}")
    header: list[str] = []
    entries: dict[str, BookEntry] = {}
    for number, line in enumerate(lines, start=1):
        if line.startswith("#"):
            header.append(line)
            continue
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != _FIELDS:
            raise BookError(number, f"{len(fields)} fields instead of {_FIELDS} (fen, move, score, depth, from, pv)")
        fen, move, score, depth, source, pv = fields
        try:
            position = Position.from_fen(fen)
        except InvalidFenError as error:
            raise BookError(number, f"bad FEN {fen!r}: {error}") from None
        if not score.lstrip("-").isdigit() or not depth.isdigit():
            raise BookError(number, f"score {score!r} and depth {depth!r} must be integers")
        key = position.fen()
        if key in entries:
            raise BookError(number, f"position {key} is in the book twice")
        entry = BookEntry(key, move, int(score), int(depth), source, tuple(pv.split()))
        try:
            position.parse_move(move)
        except _MOVE_ERRORS:
            log.warning("opening book line %d: %s is not legal in %s; entry ignored", number, move, key)
            continue
        entries[key] = entry
    return Book(entries, tuple(header))


def read_book(path: Path) -> Book:
    """The book in the file ``path``. Raises OSError when it cannot be read (missing, unreadable),
    :class:`BookError` when it is no book (also for bytes that are not UTF-8)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise BookError(0, f"{path} is not text (UTF-8)") from None
    return parse_book(text)


_default: Book | None = None
_lock = threading.Lock()


def default_book() -> Book:
    """This process's book, read on first use: ``ENGINE_BOOK`` (a path) when set, else :data:`BOOK_PATH`.

    Never raises: a missing or corrupt file is logged as an error and gives an empty book (the
    computer then searches every position).
    """
    global _default
    if _default is None:
        with _lock:
            if _default is None:
                path = Path(os.environ.get("ENGINE_BOOK") or BOOK_PATH)
                try:
                    _default = read_book(path)
                    log.info("opening book loaded: %s (%d positions)", path, len(_default))
                except (OSError, BookError) as error:
                    log.error("opening book %s could not be read (%s); the computer searches every position",
                              path, error)
                    _default = Book()
    return _default


def reset_default_book() -> None:
    """Forget the book read by :func:`default_book`: the next call reads the file again."""
    global _default
    with _lock:
        _default = None
