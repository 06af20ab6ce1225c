"""The 3-move ballots of American checkers (docs/rules.md, "3-move ballots").

Serious play does not start from the bare start position: the first three plies (Black,
White, Black) are drawn from a list of openings, the *ballot*, and the game goes on from
there with White to move.  This is the American Checker Federation's list of 174 3-move
openings, numbered 1 to 174 in the ACF's order (by Black's first move, then White's reply,
then Black's second move, each by its squares); 18 of them are barred as unsound (one side
is judged lost or nearly so) and never drawn, leaving 156 approved ones.

Source: the ACF list as published with the CheckerBoard program of Martin Fierz and Ed
Gilbert (GitHub ``eygilbert/CheckerBoard``, ``utility.c``, table ``three_move_table``,
commit 0aa055bc), which numbers the openings as the ACF does and marks the barred ones.
Other published lists differ from it by one or two entries (which openings are barred
changed over the years); this one has the ACF's 174 openings and its count of 156 approved.
``tests/rules/test_ballots.py`` plays every entry through the rules.

>>> b = ballot(68)
>>> b.number, b.moves, b.approved
(68, ('10-14', '22-18', '12-16'), True)
>>> ballot(3).barred
True
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from .errors import RulesError
from .game import Game

__all__ = ["Ballot", "BallotError", "BALLOTS", "BALLOT_PLIES", "ballot", "approved", "random_ballot",
           "choose", "opening_plies"]

#: Plies a ballot plays before the players' own moves (Black, White, Black).
BALLOT_PLIES = 3

# One line per opening: its number, its three plies, and "barred" for the barred ones.
_TABLE = """
1 9-13 21-17 5-9
2 9-13 21-17 6-9
3 9-13 21-17 10-14 barred
4 9-13 22-17 13x22
5 9-13 22-18 6-9
6 9-13 22-18 10-14
7 9-13 22-18 10-15
8 9-13 22-18 11-15
9 9-13 22-18 11-16
10 9-13 22-18 12-16
11 9-13 23-18 5-9
12 9-13 23-18 6-9
13 9-13 23-18 10-14 barred
14 9-13 23-18 10-15
15 9-13 23-18 11-15
16 9-13 23-18 11-16
17 9-13 23-18 12-16
18 9-13 23-19 5-9
19 9-13 23-19 6-9
20 9-13 23-19 10-14
21 9-13 23-19 10-15
22 9-13 23-19 11-16
23 9-13 24-19 5-9
24 9-13 24-19 6-9
25 9-13 24-19 10-14
26 9-13 24-19 10-15 barred
27 9-13 24-19 11-15
28 9-13 24-19 11-16
29 9-13 24-20 5-9
30 9-13 24-20 6-9
31 9-13 24-20 10-14
32 9-13 24-20 10-15
33 9-13 24-20 11-15
34 9-13 24-20 11-16
35 9-13 24-20 12-16 barred
36 9-14 22-17 5-9
37 9-14 22-17 6-9
38 9-14 22-17 11-15
39 9-14 22-17 11-16
40 9-14 22-18 5-9
41 9-14 22-18 10-15
42 9-14 22-18 11-15
43 9-14 22-18 11-16
44 9-14 22-18 12-16 barred
45 9-14 22-18 14-17 barred
46 9-14 23-18 14x23
47 9-14 23-19 5-9
48 9-14 23-19 10-15 barred
49 9-14 23-19 11-16
50 9-14 23-19 14-18
51 9-14 24-19 5-9
52 9-14 24-19 10-15 barred
53 9-14 24-19 11-15
54 9-14 24-19 11-16
55 9-14 24-20 5-9
56 9-14 24-20 10-15
57 9-14 24-20 11-15
58 9-14 24-20 11-16
59 10-14 22-17 7-10
60 10-14 22-17 9-13
61 10-14 22-17 11-15
62 10-14 22-17 11-16
63 10-14 22-17 14-18
64 10-14 22-18 6-10
65 10-14 22-18 7-10
66 10-14 22-18 11-15
67 10-14 22-18 11-16
68 10-14 22-18 12-16
69 10-14 23-18 14x23
70 10-14 23-19 6-10
71 10-14 23-19 7-10
72 10-14 23-19 11-15
73 10-14 23-19 11-16
74 10-14 23-19 14-18
75 10-14 24-19 6-10
76 10-14 24-19 7-10
77 10-14 24-19 11-15 barred
78 10-14 24-19 11-16
79 10-14 24-19 14-18
80 10-14 24-20 6-10
81 10-14 24-20 7-10
82 10-14 24-20 11-15
83 10-14 24-20 11-16
84 10-14 24-20 14-18
85 10-15 21-17 6-10
86 10-15 21-17 7-10
87 10-15 21-17 9-13
88 10-15 21-17 9-14 barred
89 10-15 21-17 11-16
90 10-15 21-17 15-18
91 10-15 22-17 6-10
92 10-15 22-17 7-10
93 10-15 22-17 9-13
94 10-15 22-17 9-14 barred
95 10-15 22-17 11-16
96 10-15 22-17 15-19
97 10-15 22-18 15x22
98 10-15 23-18 6-10
99 10-15 23-18 7-10
100 10-15 23-18 9-14
101 10-15 23-18 11-16
102 10-15 23-18 12-16
103 10-15 23-19 6-10
104 10-15 23-19 7-10
105 10-15 23-19 11-16
106 10-15 24-19 15x24
107 10-15 24-20 6-10
108 10-15 24-20 7-10
109 10-15 24-20 11-16 barred
110 10-15 24-20 15-19
111 11-15 21-17 8-11
112 11-15 21-17 9-13
113 11-15 21-17 9-14
114 11-15 21-17 10-14 barred
115 11-15 21-17 15-19
116 11-15 22-17 8-11
117 11-15 22-17 9-13
118 11-15 22-17 15-18
119 11-15 22-17 15-19
120 11-15 22-18 15x22
121 11-15 23-18 8-11
122 11-15 23-18 9-14
123 11-15 23-18 10-14
124 11-15 23-18 12-16
125 11-15 23-18 15-19
126 11-15 23-19 8-11
127 11-15 23-19 9-13
128 11-15 23-19 9-14
129 11-15 24-19 15x24
130 11-15 24-20 8-11
131 11-15 24-20 12-16
132 11-15 24-20 15-18
133 11-16 21-17 7-11
134 11-16 21-17 8-11
135 11-16 21-17 9-13
136 11-16 21-17 9-14
137 11-16 21-17 10-14 barred
138 11-16 21-17 16-20
139 11-16 22-17 7-11
140 11-16 22-17 8-11
141 11-16 22-17 9-13
142 11-16 22-17 16-20
143 11-16 22-18 7-11
144 11-16 22-18 8-11
145 11-16 22-18 10-15 barred
146 11-16 22-18 16-19
147 11-16 22-18 16-20
148 11-16 23-18 7-11
149 11-16 23-18 8-11
150 11-16 23-18 9-14
151 11-16 23-18 10-14
152 11-16 23-18 16-20
153 11-16 23-19 16x23
154 11-16 24-19 7-11
155 11-16 24-19 8-11
156 11-16 24-19 10-15 barred
157 11-16 24-19 16-20
158 11-16 24-20 7-11
159 11-16 24-20 16-19
160 12-16 21-17 9-13
161 12-16 21-17 9-14
162 12-16 21-17 16-19
163 12-16 21-17 16-20
164 12-16 22-17 16-19
165 12-16 22-17 16-20
166 12-16 22-18 16-19
167 12-16 22-18 16-20
168 12-16 23-18 9-14 barred
169 12-16 23-18 16-19
170 12-16 23-18 16-20
171 12-16 23-19 16x23 barred
172 12-16 24-19 16-20
173 12-16 24-20 8-12
174 12-16 24-20 10-15
"""


class BallotError(RulesError):
    """A ballot that cannot be played: no such number, a barred opening, or text that is no number.

    ``code`` says which: ``"unknown"``, ``"barred"`` or ``"malformed"``.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Ballot:
    """One 3-move opening of the list: its ACF ``number`` (1-174), its three plies in full
    notation (Black, White, Black) and whether it is ``barred``."""

    number: int
    moves: tuple[str, str, str]
    barred: bool = False

    @property
    def approved(self) -> bool:
        """True for the openings that may be drawn (not barred)."""
        return not self.barred

    @property
    def text(self) -> str:
        """The three plies separated by spaces, e.g. ``'10-14 22-18 12-16'``."""
        return " ".join(self.moves)

    def record(self) -> Game:
        """A :class:`~game.rules.Game` with the three plies played from the start position
        (White to move).  Raises the rules' errors if an entry were not legal (the tests check
        that none is)."""
        return Game.from_moves(self.moves)

    def pdn_tag(self) -> str:
        """The value of the PDN ``Ballot`` tag (docs/rules.md, "PDN"): ``'ACF 68: 10-14 22-18 12-16'``."""
        return f"ACF {self.number}: {self.text}"


def _read(table: str) -> tuple[Ballot, ...]:
    ballots = []
    for line in table.strip().splitlines():
        number, first, second, third, *rest = line.split()
        ballots.append(Ballot(int(number), (first, second, third), rest == ["barred"]))
    return tuple(ballots)


#: Every opening of the list, in order: ``BALLOTS[n - 1].number == n``.
BALLOTS: tuple[Ballot, ...] = _read(_TABLE)
_APPROVED = tuple(b for b in BALLOTS if b.approved)


def ballot(number: int) -> Ballot:
    """The opening numbered ``number`` (1-174), barred or not.  Raises :class:`BallotError`
    ``unknown`` for any other number."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(BALLOTS):
        raise BallotError("unknown", f"there is no ballot {number!r}: the ballots are numbered 1 to {len(BALLOTS)}")
    return BALLOTS[number - 1]


def approved() -> tuple[Ballot, ...]:
    """The 156 approved openings, in order."""
    return _APPROVED


def random_ballot(rng: random.Random | None = None) -> Ballot:
    """An approved opening drawn at random (each equally likely) with ``rng`` (default: the
    system's randomness)."""
    return (rng or random.SystemRandom()).choice(_APPROVED)


_NUMBER = re.compile(r"[0-9]{1,3}", re.ASCII)


def choose(choice: object, rng: random.Random | None = None) -> Ballot | None:
    """The opening a game starts with, from what a player asked for.

    ``choice`` is None or ``"free"`` (the free start: None is returned), ``"random"`` (an
    approved opening drawn with ``rng``), or a ballot number, as an int or as text of ASCII
    digits (``"68"``; spaces around it are ignored).  Raises :class:`BallotError`:
    ``unknown`` (no such number), ``barred`` (a barred opening), ``malformed`` (anything else).

    >>> choose("free") is None, choose(" 68 ").number, choose(68).text
    (True, 68, '10-14 22-18 12-16')
    """
    if choice is None or choice == "free":
        return None
    if choice == "random":
        return random_ballot(rng)
    if isinstance(choice, str):
        text = choice.strip(" \t")
        if not _NUMBER.fullmatch(text):
            raise BallotError("malformed", f"{choice[:20]!r} is not a ballot number (1 to {len(BALLOTS)})")
        choice = int(text)
    if isinstance(choice, bool) or not isinstance(choice, int):
        raise BallotError("malformed", f"{choice!r} is not a ballot number (1 to {len(BALLOTS)})")
    chosen = ballot(choice)
    if chosen.barred:
        raise BallotError("barred", f"ballot {chosen.number} ({chosen.text}) is barred and is not played")
    return chosen


def opening_plies(number: int | None) -> int:
    """How many of a game's first plies the site played for its ballot: :data:`BALLOT_PLIES`
    for a game with a ballot ``number``, 0 for the free start (None)."""
    return 0 if number is None else BALLOT_PLIES
