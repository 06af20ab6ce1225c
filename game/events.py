"""Server-to-client messages of the live protocol, built in one place.

Every game event carries ``v``, the game's version after it.  The shapes are
documented in ``docs/protocol.md`` and checked by ``tests/web/test_events.py``.

``state`` (part of every game event and of the snapshot)::

    {"id": str, "status": "waiting"|"active"|"finished"|"aborted",
     "fen": str (PDN FEN), "turn": "B"|"W", "ply": int,
     "legal": [str, ...]  (full notation; empty when the game is not active),
     "seats": {"B": {"name": str|None}, "W": {"name": str|None}},
     "result": "1-0"|"0-1"|"1/2-1/2"|"*", "termination": str|None, "winner": "B"|"W"|None,
     "reason": str|None  (human text, e.g. "White has no legal move"),
     "no_progress": int (plies since the last capture or man move)}
"""

from __future__ import annotations

from game import rules
from game.models import Game


def outcome_of(game: Game) -> rules.Outcome | None:
    """The stored end of ``game`` as a rules :class:`~game.rules.Outcome`, or None while it goes on."""
    if not game.termination:
        return None
    winner = {"1-0": rules.Color.BLACK, "0-1": rules.Color.WHITE}.get(game.result)
    return rules.Outcome(rules.Termination(game.termination), winner)


def state(game: Game, record: rules.Game) -> dict:
    """The public state of ``game`` (see the module docstring); ``record`` is its rebuilt rules record."""
    outcome = outcome_of(game)
    active = game.status == Game.Status.ACTIVE
    return {
        "id": game.id,
        "status": game.status,
        "fen": game.fen,
        "turn": record.position.turn.value,
        "ply": game.ply,
        "legal": [str(m) for m in record.position.legal_moves()] if active else [],
        "seats": {
            "B": {"name": game.black_name or None},
            "W": {"name": game.white_name or None},
        },
        "result": game.result,
        "termination": game.termination or None,
        "winner": outcome.winner.value if outcome and outcome.winner else None,
        "reason": outcome.reason if outcome else None,
        "no_progress": record.no_progress_plies,
    }


def snapshot(game: Game, record: rules.Game, moves: list[str], you: str | None) -> dict:
    """``{"type": "snapshot", "v", "state", "moves": [str], "you": "B"|"W"|None}`` for one viewer."""
    return {"type": "snapshot", "v": game.version, "state": state(game, record),
            "moves": list(moves), "you": you}


def move_event(game: Game, record: rules.Game, move: rules.Move) -> dict:
    """``{"type": "move", "v", "ply", "move", "state"}``: ply number ``ply`` was ``move`` (full notation)."""
    return {"type": "move", "v": game.version, "ply": game.ply, "move": str(move),
            "state": state(game, record)}


def seats_event(game: Game, record: rules.Game) -> dict:
    """``{"type": "seats", "v", "state"}``: a seat was taken (the game may have started)."""
    return {"type": "seats", "v": game.version, "state": state(game, record)}
