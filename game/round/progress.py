"""What every action of a game shares: :class:`Progress`, the row lock, the clock's verdict.

An action is *check → do → events*: :func:`act` loads the game under its row
lock, lets the action check and decide (``decide(game, seat)`` returns a
:class:`Change` or raises :class:`~game.errors.ActionError`), asks the
game's :class:`~game.clock.Clock` once (out of time? charged for the
turn?), stores the change with the conditional update of
:func:`game.round.store.bump`, and returns :class:`Progress`: the game as
stored afterwards and the events to publish once the transaction has
committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game import rules
from game.clock import Expiry
from game.errors import ActionError
from game.models import Game
from game.round import events, finisher, outages, store
from game.round.records import Kept
from game.rules import Color


@dataclass
class Progress:
    """What an action returns: the game as stored afterwards and the events to publish, in order
    (none when the action changed nothing), and for a move what its game's
    :class:`~game.round.round.Round` keeps for the next one (set once the move has committed)."""

    game: Game
    events: list[events.Event] = field(default_factory=list)
    kept: Kept | None = None

    def keep_on_commit(self, kept: Kept | None) -> None:
        """Set :attr:`kept` once the current transaction commits (at once outside one); never if
        it rolls back, so nothing is kept of a move that was not stored."""
        if kept is not None:
            transaction.on_commit(lambda: setattr(self, "kept", kept))


@dataclass
class Change:
    """What an action decided: the ``update`` event's name (:data:`game.round.events.UPDATES`) and
    the stored fields it changes (field name → value)."""

    what: str
    fields: dict[str, Any] = field(default_factory=dict)


def finished(outcome: rules.Outcome) -> dict[str, Any]:
    """The stored fields that end a game with ``outcome`` (a pending draw offer lapses)."""
    status = Game.Status.ABORTED if outcome.termination is rules.Termination.ABORTED else Game.Status.FINISHED
    return {"status": status, "result": outcome.result, "termination": outcome.termination.value,
            "draw_offer": ""}


def clock_fields(times: dict[Color, int]) -> dict[str, int]:
    """Times by side (ms) as the stored fields ``black_ms``/``white_ms``."""
    return {Game.ms_field(side): ms for side, ms in times.items()}


def expiry_change(expiry: Expiry) -> Change:
    """The change that ends a game on time (``flagged``, or ``aborted`` for a live game's first
    move not made in time)."""
    return Change(expiry.what, {**clock_fields(expiry.times), **finished(expiry.outcome)})


def seat_in_play(game: Game, player_id: str | None) -> Color:
    """The seat of ``player_id`` in a game in play.  Raises :class:`ActionError` ``not_seated``,
    ``game_over``, ``not_started``."""
    seat = game.seat_of(player_id)
    if seat is None:
        raise ActionError("not_seated", _("Only the seated players can do that; you are watching."))
    if game.is_over:
        raise ActionError("game_over", _("The game is over."))
    if game.status == Game.Status.WAITING:
        raise ActionError("not_started", _("The game starts when your opponent joins."))
    return seat


def store_update(game: Game, by: Color | None, change: Change) -> Progress:
    """Store ``change`` (with what a start or an end it makes brings: :func:`game.round.finisher.complete`)
    on the locked ``game`` and return its ``update`` event, done by seat ``by``.  A rated game
    ended before its result was earned is aborted instead (:func:`game.round.finisher.unearned`)."""
    decided = change.fields
    if finisher.unearned(game, decided):
        change = Change("aborted", finisher.aborted_instead(decided))
    store.bump(game, **finisher.complete(game, change.fields, by, decided))
    return Progress(game, [events.update_event(game, store.current_record(game), change.what, by)])


Decide = Callable[[Game, Color | None], Change]


def act(game_id: str, player_id: str | None, decide: Decide, now: datetime | None = None) -> Progress:
    """Run one game action under the row lock, as of ``now`` (default the current time).

    ``decide(game, seat)`` checks the action and returns its :class:`Change`, or raises
    :class:`ActionError`.  Returns the ``update`` event after the change is stored.

    In a game in play, an action that comes after the side to move ran out of time is not
    carried out: the game ends on time instead (``flagged``, or ``aborted`` for a live game's
    first move not made in time), as for a move.  An action that ends the game charges the
    side to move for the time of its turn so far (:meth:`~game.clock.Clock.charged`), so
    the final clocks are those the players saw.  Raises :class:`ActionError` ``no_such_game``,
    ``stale`` and whatever ``decide`` raises.
    """
    with transaction.atomic():
        game = store.load_for_update(game_id)
        seat = game.seat_of(player_id)
        change = decide(game, seat)
        if game.status == Game.Status.ACTIVE:
            now = now or timezone.now()
            clock = outages.clock(game)
            expiry = clock.expiry(now)
            if expiry:
                return store_update(game, None, expiry_change(expiry))
            if change.fields.get("status") in (Game.Status.FINISHED, Game.Status.ABORTED):
                change.fields.update(clock_fields(clock.charged(now)))
        return store_update(game, seat, change)
