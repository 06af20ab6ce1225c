"""Server-to-client messages of the live protocol, built in one place.

Every game event carries ``v``, the game's version after it.  The shapes are
documented in ``docs/protocol.md`` and checked by ``tests/web/test_events.py``.

``state`` (part of every game event and of the snapshot)::

    {"id": str, "status": "waiting"|"active"|"finished"|"aborted",
     "fen": str (PDN FEN), "turn": "B"|"W", "ply": int,
     "legal": [str, ...]  (full notation; empty when the game is not active),
     "seats": {"B": {"name": str|None}, "W": {"name": str|None}}  (plus "computer": level 1-5
              in the seat the computer holds),
     "result": "1-0"|"0-1"|"1/2-1/2"|"*", "termination": str|None, "winner": "B"|"W"|None,
     "reason": str|None  (human text, e.g. "White has no legal move"),
     "no_progress": int (plies since the last capture or man move),
     "draw_offer": "B"|"W"|None (the seat with a pending draw offer),
     "draw_allowed_at": {"B": int, "W": int} (the ply from which each seat may offer a draw),
     "rematch_offer": "B"|"W"|None, "next_game": str|None (the rematch's id once agreed),
     "clock": see :func:`clock_state` (None when untimed),
     "claim_after_s": int|None (seconds the player to move must be away before the opponent may
                      claim the win or a draw; None in correspondence games)}
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.utils import timezone

from game import clock, computer, rules
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
            "B": {"name": game.black_name or None, **computer.seat_info(game.black_player)},
            "W": {"name": game.white_name or None, **computer.seat_info(game.white_player)},
        },
        "result": game.result,
        "termination": game.termination or None,
        "winner": outcome.winner.value if outcome and outcome.winner else None,
        "reason": outcome.reason if outcome else None,
        "no_progress": record.no_progress_plies,
        "draw_offer": game.draw_offer or None,
        "draw_allowed_at": {"B": game.black_draw_ply, "W": game.white_draw_ply},
        "rematch_offer": game.rematch_offer or None,
        "next_game": game.next_game_id,
        "clock": clock_state(game),
        "claim_after_s": clock.claim_after_s(game.control, settings.CLAIM_AFTER_LIVE_S,
                                             settings.CLAIM_AFTER_UNTIMED_S),
    }


def clock_state(game: Game, now: datetime | None = None) -> dict | None:
    """The clocks as of ``now`` (default the current time), or None in an untimed game.

    ``{"control": "5+3", "label": str, "B": ms, "W": ms, "running": "B"|"W"|None,
    "first_move_ms": ms|None}``: each side's time left (the running side's
    already charged up to ``now``); ``first_move_ms`` the time left for a live
    game's first move of a side (during which no clock runs).
    """
    control = game.control
    if not control.timed:
        return None
    now = now or timezone.now()
    times = {"B": game.black_ms, "W": game.white_ms}
    turn = game.fen[0]
    active = game.status == Game.Status.ACTIVE
    running = turn if active and clock.runs(control, game.ply) else None
    spent = clock.elapsed_ms(game.turn_started_at, now)
    if running:
        times[running] = max(0, times[running] - spent)
    first_move_ms = None
    if active and control.live and game.ply < 2:
        first_move_ms = max(0, clock.FIRST_MOVE_S * 1000 - spent)
    return {"control": str(control), "label": control.label(), **times, "running": running,
            "first_move_ms": first_move_ms}


def snapshot(game: Game, record: rules.Game, moves: list[str], fens: list[str],
             you: str | None) -> dict:
    """The ``snapshot`` message for one viewer.

    ``{"type": "snapshot", "v", "state", "start_fen": str, "moves": [str],
    "fens": [str] (the position after each ply), "you": "B"|"W"|None}``.
    """
    return {"type": "snapshot", "v": game.version, "state": state(game, record),
            "start_fen": game.start_fen, "moves": list(moves), "fens": list(fens), "you": you}


def move_event(game: Game, record: rules.Game, move: rules.Move) -> dict:
    """``{"type": "move", "v", "ply", "move", "state"}``: ply number ``ply`` was ``move`` (full notation)."""
    return {"type": "move", "v": game.version, "ply": game.ply, "move": str(move),
            "state": state(game, record)}


def seats_event(game: Game, record: rules.Game) -> dict:
    """``{"type": "seats", "v", "state"}``: a seat was taken (the game may have started)."""
    return {"type": "seats", "v": game.version, "state": state(game, record)}


#: The names of ``update`` events: what happened besides a move.
UPDATES = ("draw_offered", "draw_declined", "draw_accepted", "resigned", "aborted",
           "rematch_offered", "rematch_declined", "rematch_started", "flagged", "claimed_win",
           "claimed_draw")


def update_event(game: Game, record: rules.Game, what: str, by: str | None) -> dict:
    """``{"type": "update", "v", "what", "by": "B"|"W"|None, "state"}``: one of :data:`UPDATES` happened."""
    assert what in UPDATES, what
    return {"type": "update", "v": game.version, "what": what, "by": by, "state": state(game, record)}
