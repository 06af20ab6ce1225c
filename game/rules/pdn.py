"""Reading and writing game files in PDN 3.0 (Portable Draughts Notation).

The reader takes an open text handle and yields :class:`PdnGame` records with
the tags and the main line's move tokens; replaying the moves is left to
:class:`~game.rules.Game`. The writer produces standard PDN for English
draughts (``GameType "21"``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, TypedDict

from .errors import RulesError
from .game import Game, Outcome
from .position import ASCII_WHITESPACE, INITIAL_FEN, Color, Position

__all__ = ["PdnGame", "read_games", "game_to_pdn", "write_game", "RESULTS", "GAME_TYPE",
           "Rejection", "Replay", "replay"]

#: PDN result tokens (``2-0``/``1-1``/``0-2``/``0-0`` are the two-point forms some files use).
RESULTS = frozenset({"1-0", "0-1", "1/2-1/2", "*", "2-0", "0-2", "1-1", "0-0"})
#: PDN GameType of English draughts.
GAME_TYPE = "21"

_TAG = re.compile(r'\[\s*([^\s"\[\]]+)\s*"((?:[^"\\\n]|\\.)*)"\s*\]')
# re.ASCII: tokens are separated by ASCII whitespace only (the reader skips exactly that), and move
# numbers and NAGs are ASCII digits, not the other Unicode ones \d matches. Anything else stays in
# a token, which replay then refuses as a move.
_TOKEN = re.compile(r'[^\s\[\]{}();]+', re.ASCII)
_MOVE_NUMBER = re.compile(r"\d+\.+", re.ASCII)
_NAG = re.compile(r"\$\d+\Z", re.ASCII)
_ANNOTATION = re.compile(r"[!?]+\Z")


@dataclasses.dataclass
class PdnGame:
    """One game read from a PDN file.

    - ``number``: position of the game in the file, from 1.
    - ``tags``: dict of tag name to value, in file order.
    - ``moves``: the main line's move tokens as written (``'11-15'``,
      ``'27x11'``), without move numbers, comments, variations or NAGs.
    - ``result``: the result token ending the move text (``'1-0'``, ``'0-1'``,
      ``'1/2-1/2'``, ``'*'``...), else the Result tag, else None.
    - ``start_fen``: the FEN tag's value (trailing dot removed), or None.
    - ``line``: the line number (from 1) where the game starts.
    """

    number: int
    tags: dict[str, str]
    moves: list[str]
    result: str | None = None
    start_fen: str | None = None
    line: int = 1


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


class _Builder:
    def __init__(self, number: int, line: int) -> None:
        self.number = number
        self.line = line
        self.tags: dict[str, str] = {}
        self.moves: list[str] = []
        self.result: str | None = None
        self.has_text = False

    def build(self) -> PdnGame:
        fen = self.tags.get("FEN")
        if fen is not None:
            fen = fen.strip(ASCII_WHITESPACE).strip('"').strip(ASCII_WHITESPACE)
            if fen.endswith("."):
                fen = fen[:-1].rstrip(ASCII_WHITESPACE)
            fen = fen or None
        result = self.result if self.result is not None else self.tags.get("Result")
        return PdnGame(self.number, self.tags, self.moves, result, fen, self.line)


def _skip_variation(text: str, pos: int) -> int:
    """Return the index just past the variation opening at ``text[pos] == '('``, nesting included."""
    depth = 0
    n = len(text)
    while pos < n:
        c = text[pos]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return pos + 1
        elif c == "{":
            end = text.find("}", pos + 1)
            pos = n if end < 0 else end
        elif c == ";":
            end = text.find("\n", pos + 1)
            pos = n if end < 0 else end
        pos += 1
    return n


def read_games(handle: IO[str] | IO[bytes]) -> Iterator[PdnGame]:
    """Yield each game of a PDN file as a :class:`PdnGame`.

    ``handle`` is an open text file (binary handles are decoded as UTF-8, or
    Latin-1 when that fails). Copes with a byte-order mark, CRLF or CR line
    ends, tags with escaped quotes, move numbers (``1.``, ``1...``, ``1. ...``),
    ``{comments}``, ``;`` line comments, ``%`` escape lines, nested
    ``(variations)`` (skipped), NAGs (``$1``), ``!``/``?`` annotations, and
    result tokens. A new game starts at a tag after move text, or at a move
    after a result. Only ASCII whitespace separates tokens, and move numbers
    and NAGs are ASCII digits; other characters stay in their token. Nothing
    is validated against the rules here.

    >>> import io
    >>> text = '[Event "x"]\\n[FEN "W:W18:B14."]\\n1... 18x9 {only move} 1-0\\n'
    >>> game = next(read_games(io.StringIO(text)))
    >>> game.moves, game.result, game.start_fen
    (['18x9'], '1-0', 'W:W18:B14')
    """
    data = handle.read()
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    else:
        text = data
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    n = len(text)
    pos = 0
    number = 0
    current: _Builder | None = None
    ended = False

    def line_of(index: int) -> int:
        return text.count("\n", 0, index) + 1

    while pos < n:
        c = text[pos]
        if c in ASCII_WHITESPACE:
            pos += 1
            continue
        if c == "[":
            if current is not None and (current.has_text or ended):
                yield current.build()
                current = None
            if current is None:
                number += 1
                current = _Builder(number, line_of(pos))
                ended = False
            match = _TAG.match(text, pos)
            if match:
                current.tags[match.group(1)] = _unescape(match.group(2))
                pos = match.end()
            else:
                end = text.find("\n", pos)
                pos = n if end < 0 else end
            continue
        if c == "{":
            end = text.find("}", pos + 1)
            pos = n if end < 0 else end + 1
            continue
        if c == ";" or (c == "%" and (pos == 0 or text[pos - 1] == "\n")):
            end = text.find("\n", pos)
            pos = n if end < 0 else end
            continue
        if c == "(":
            pos = _skip_variation(text, pos)
            continue
        if c in ")]}":
            pos += 1
            continue
        match = _TOKEN.match(text, pos)
        # text[pos] is none of the characters handled above, so at least it makes a token.
        assert match is not None
        token = match.group(0)
        pos = match.end()
        if _NAG.match(token):
            continue
        if token in RESULTS:
            if current is None:
                number += 1
                current = _Builder(number, line_of(match.start()))
            current.result = token
            current.has_text = True
            ended = True
            continue
        prefix = _MOVE_NUMBER.match(token)
        if prefix:
            token = token[prefix.end():]
        token = _ANNOTATION.sub("", token)
        if not token or set(token) == {"."}:
            continue
        if current is not None and ended:
            yield current.build()
            current = None
        if current is None:
            number += 1
            current = _Builder(number, line_of(match.start()))
            ended = False
        if token in RESULTS:
            current.result = token
            ended = True
        else:
            current.moves.append(token)
        current.has_text = True
    if current is not None:
        yield current.build()


class Rejection(TypedDict):
    """Why :func:`replay` refused a game (a plain dict).

    ``ply``: 1-based ply of the failing move, 0 for the set-up; ``number`` and ``side``: its
    move number and the side that played it, as in the move text; ``move``: its text;
    ``fen``: the position it was played in; ``reason``: error class and message.
    """

    ply: int
    number: int
    side: str
    move: str
    fen: str
    reason: str


@dataclasses.dataclass
class Replay:
    """A PDN record played through the rules by :func:`replay`.

    - ``record``: the :class:`~game.rules.Game` of every move that played (up to the refused
      one), without automatic draws; None when the set-up itself was refused.
    - ``rejection``: why a move or the set-up was refused (:class:`Rejection`), else None.
    - ``site_draw``: ``(ply, outcome)`` when the record plays on past a threefold repetition
      or the forty-move count: the ply after which the site would have declared that draw
      (the players of a record from elsewhere did not claim it); else None.
    """

    record: Game | None
    rejection: Rejection | None = None
    site_draw: tuple[int, Outcome] | None = None

    @property
    def ok(self) -> bool:
        """True when every move played (nothing was refused)."""
        return self.rejection is None

    def move_number(self, ply: int) -> tuple[int, str]:
        """The move number and the side (``'Black'``/``'White'``) of the 1-based ``ply``, as the
        move text numbers it."""
        start = self.record.start if self.record is not None else Position.initial()
        offset = 0 if start.turn is Color.BLACK else 1
        side = start.turn if (ply - 1) % 2 == 0 else start.turn.opponent
        return (ply - 1 + offset) // 2 + 1, side.label


def replay(pdn_game: PdnGame) -> Replay:
    """Play a :class:`PdnGame` read from a file through the rules, as a record of a game played
    elsewhere (docs/rules.md, "Records from elsewhere").

    Over the board a threefold repetition or the forty-move count is claimed by a player, not
    declared by itself, so the record plays on past them; the ply where the site would have
    declared the draw is kept in :attr:`Replay.site_draw`.  A game whose GameType is not
    English draughts (21), a bad FEN tag, malformed, illegal or ambiguous move text, and a move
    after a win (the side to move has no pieces or no legal move) are refused with their reason
    in :attr:`Replay.rejection`.  Never raises for any text the reader yields.

    >>> import io
    >>> text = '1. 11-15 23-19 2. 8-11 22-17 3. 1-5 *'
    >>> replay(next(read_games(io.StringIO(text)))).rejection["reason"][:46]
    'IllegalMoveError: 1-5 is not legal in B:W17,19'
    """
    game_type = pdn_game.tags.get("GameType")
    if game_type is not None and game_type.split(",")[0].strip() not in ("", GAME_TYPE):
        return Replay(None, {"ply": 0, "number": 0, "side": "", "move": "", "fen": "",
                             "reason": f"GameType {game_type!r} is not English draughts (21)"})
    try:
        start = Position.from_fen(pdn_game.start_fen) if pdn_game.start_fen else None
    except RulesError as exc:
        return Replay(None, {"ply": 0, "number": 0, "side": "", "move": "", "fen": pdn_game.start_fen or "",
                             "reason": f"{type(exc).__name__}: bad FEN tag: {exc}"})
    game = Game(start, automatic_draws=False)
    done = Replay(game)
    for text in pdn_game.moves:
        before = game.position
        try:
            game.play(text)
        except RulesError as exc:
            ply = game.ply + 1
            number, side = done.move_number(ply)
            done.rejection = {"ply": ply, "number": number, "side": side, "move": text,
                              "fen": before.fen(), "reason": f"{type(exc).__name__}: {exc}"}
            break
    done.site_draw = game.site_draw
    return done


_TAG_ORDER = ("Event", "Site", "Date", "Round", "Black", "White", "Result", "GameType")
_TAG_DEFAULTS = {"Event": "?", "Site": "?", "Date": "????.??.??", "Black": "?", "White": "?"}


def _escape(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"')


def game_to_pdn(game: Game, tags: Mapping[str, str] | None = None, width: int = 79) -> str:
    """The PDN text of ``game`` (a :class:`~game.rules.Game`), ending with a newline.

    Tags come first: Event, Site, Date, Round (only when given), Black, White,
    Result, GameType "21", then SetUp "1" and FEN when the game did not begin
    at the start position, then any other tags from ``tags`` in their order.
    Missing roster tags get ``"?"`` (Date ``"????.??.??"``). The Result is the
    game's outcome when decided, else ``tags['Result']``, else ``'*'``.
    Move text numbers each pair of plies, Black's move first (``1. 11-15
    23-19``; ``1... 23-19`` when White moves first), all moves in full form,
    lines wrapped at ``width`` characters, and ends with the result.

    >>> from game.rules import Game
    >>> print(game_to_pdn(Game.from_moves(["11-15", "23-19"]), {"Event": "Casual"}), end="")
    [Event "Casual"]
    [Site "?"]
    [Date "????.??.??"]
    [Black "?"]
    [White "?"]
    [Result "*"]
    [GameType "21"]
    <BLANKLINE>
    1. 11-15 23-19 *
    """
    if game.outcome is not None:
        result = game.outcome.result
    else:
        result = (tags or {}).get("Result") or "*"
    return moves_to_pdn([str(move) for move in game.moves], game.start.fen(), game.start.turn, result,
                        tags, width)


def moves_to_pdn(moves: Sequence[str], start_fen: str, first: Color, result: str,
                 tags: Mapping[str, str] | None = None, width: int = 79) -> str:
    """The PDN text of a game given as plain values, without replaying it: ``moves`` its plies'
    full-form notations in order, ``start_fen`` the FEN of its start (``[SetUp]`` and ``[FEN]``
    when not :data:`INITIAL_FEN`), ``first`` the side to move at the start, ``result`` its Result
    tag.  Written exactly as :func:`game_to_pdn` writes a replayed game (which calls it), for
    files of many stored games whose moves were checked when they were played.

    >>> print(moves_to_pdn(["11-15", "23-19"], INITIAL_FEN, Color.BLACK, "1-0", {"Black": "Ann"}), end="")
    [Event "?"]
    [Site "?"]
    [Date "????.??.??"]
    [Black "Ann"]
    [White "?"]
    [Result "1-0"]
    [GameType "21"]
    <BLANKLINE>
    1. 11-15 23-19 1-0
    """
    given = dict(tags or {})
    values = dict(_TAG_DEFAULTS)
    values.update({k: v for k, v in given.items() if k in _TAG_ORDER})
    values["Result"] = result
    values["GameType"] = given.get("GameType", GAME_TYPE)
    lines = [f'[{name} "{_escape(values[name])}"]' for name in _TAG_ORDER if name in values]
    if start_fen != INITIAL_FEN:
        lines.append('[SetUp "1"]')
        lines.append(f'[FEN "{start_fen}"]')
    for name, value in given.items():
        if name not in _TAG_ORDER and name not in ("SetUp", "FEN"):
            lines.append(f'[{name} "{_escape(value)}"]')
    lines.append("")
    lines.extend(_wrapped(_move_tokens(moves, first, result), width))
    return "\n".join(lines) + "\n"


def _move_tokens(moves: Sequence[str], first: Color, result: str) -> list[str]:
    """The move text's tokens: a number before each of Black's moves (``1.``; ``1...`` before a
    first move of White's), the moves, the result."""
    offset = 0 if first is Color.BLACK else 1
    tokens = ["1..."] if offset and moves else []
    for index, move in enumerate(moves, start=offset):
        if not index & 1:
            tokens.append(f"{index // 2 + 1}.")
        tokens.append(move)
    tokens.append(result)
    return tokens


def _wrapped(tokens: list[str], width: int) -> list[str]:
    """``tokens`` joined by spaces into lines of at most ``width`` characters (a longer token alone)."""
    lines: list[str] = []
    line: list[str] = []
    length = -1
    for token in tokens:
        if line and length + 1 + len(token) > width:
            lines.append(" ".join(line))
            line, length = [token], len(token)
        else:
            line.append(token)
            length += 1 + len(token)
    lines.append(" ".join(line))
    return lines


def write_game(handle: IO[str], game: Game, tags: Mapping[str, str] | None = None, width: int = 79) -> None:
    """Write ``game`` as PDN (see :func:`game_to_pdn`) to the open text ``handle``, then a blank line."""
    handle.write(game_to_pdn(game, tags, width))
    handle.write("\n")
