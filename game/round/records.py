"""What a process keeps of a game after its move, for the game's next move: the row and the rules' record.

Before a move, :func:`game.round.store.current_record` rebuilds the record from the last capture
or man move on: it reads those plies and replays them, each checked by the rules (in an endgame
of kings, up to 79 plies for every move).  A game's sockets are served by one process (the
site's routing), so the process that played a game's last move nearly always plays its next:
its :class:`~game.round.round.Round` keeps the record it played that move on, with the game's
row as the move stored it (:class:`Kept`), and the next move is decided on them and written
only if the stored version is still theirs (:func:`game.round.store.move_if_unchanged`).

The version (``Game.version``) goes up with every change of the game, whichever process makes
it, so a row kept under an older version is never written over: a takeback, a draw offer or a
move played elsewhere in between, and the move is decided again on the locked row.  A Kept is
handed over only once its move's transaction has committed
(:meth:`game.round.progress.Progress.keep_on_commit`), so a move that fails leaves nothing
behind; a finished game's is never kept.
"""

from __future__ import annotations

import copy
from typing import NamedTuple

from game import rules
from game.models import Game
from game.round import store


class Kept(NamedTuple):
    """What a process kept after a game's move: the game's row as stored then (a copy of its own)
    and the rules' record at that row's version."""

    game: Game
    record: rules.Game

    def record_for(self, game: Game) -> rules.Game:
        """The record to play ``game``'s next move on (``game``: its row just loaded): this one
        if the row still has the kept version, else :func:`game.round.store.current_record`
        (which reads the database)."""
        if self.game.version == game.version:
            return self.record
        return store.current_record(game)


def kept_after(game: Game, record: rules.Game) -> Kept | None:
    """What to keep after a move that left ``game`` (its row as stored now) with ``record``:
    None once the game is over.  After a capture or a man move the record kept starts from its
    position, as :func:`game.round.store.current_record` would start it."""
    if record.is_over:
        return None
    if record.no_progress_plies == 0 and record.ply:
        record = rules.Game(record.position)
    return Kept(copy.copy(game), record)
