"""Takebacks: a player proposes to take back their last move, the opponent accepts or declines.

If the opponent has already replied, the takeback removes both plies, so that it is the
proposer's turn again.  A move by the opponent while a proposal is pending declines it; the
proposer's own move (when the proposal was made on their own turn) withdraws it.  After a
declined proposal the same seat may propose again only :data:`TAKEBACK_COOLDOWN_PLIES` plies
later, so proposals can't be spammed.  The computer grants a takeback at once at levels 1 to
:data:`COMPUTER_GRANTS_UP_TO` and refuses it above.

An accepted takeback deletes the plies' stored moves and rebuilds the position, the ply count
and the forty-move count from the moves that remain (so the PDN, the replay and the draw rules
are those of the remaining moves), bumps the version and the position's version (a move sent
for the old position is refused ``stale``), clears a pending draw offer, keeps each side's time
and starts the side to move's turn again.  It is one transaction under the game's row lock, like
every action (:func:`game.round.progress.act`): a takeback and a move racing for the same game
settle in one order, the second refused with a code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Forecast, Game
from game.players import computer_level
from game.round import events, outages, store
from game.round.progress import Change, Progress, clock_fields, expiry_change, seat_in_play, store_update
from game.rules import Color

#: After a declined proposal, the same seat may propose again once this many plies (two of its
#: own moves) have been played.
TAKEBACK_COOLDOWN_PLIES = 4
#: The computer grants a takeback at once up to this level, and refuses it above.
COMPUTER_GRANTS_UP_TO = 4
#: The plies a 3-move ballot plays for the site at the start of a game: never taken back.
BALLOT_PLIES = 3


@dataclass(frozen=True)
class TakeBack:
    """What an accepted (or granted) proposal does: take back the last move of ``proposer``."""

    proposer: Color


def ply_field(side: Color) -> str:
    """The stored field of the ply from which ``side`` may propose a takeback again."""
    return "black_takeback_ply" if side is Color.BLACK else "white_takeback_ply"


def offer_by(game: Game) -> Color | None:
    """The seat whose takeback proposal is pending, or None."""
    return Color(game.takeback_offer) if game.takeback_offer else None


def fixed_plies(game: Game) -> int:
    """The plies at the start of ``game`` that can never be taken back: the three of its ballot
    (:data:`BALLOT_PLIES`) when it opened with one, else none."""
    return BALLOT_PLIES if game.ballot is not None else 0


def plies_to_take_back(game: Game, proposer: Color) -> int:
    """How many plies taking back ``proposer``'s last move removes: 1 while the opponent is to
    move, 2 once the opponent has replied (the proposer's turn again)."""
    return 1 if game.turn is not proposer else 2


def _check_takeable(game: Game, proposer: Color) -> None:
    if game.ply - plies_to_take_back(game, proposer) < fixed_plies(game):
        if game.ballot is not None:
            raise ActionError("nothing_to_take_back", _(
                "You have no move of your own to take back: the ballot's opening moves stay."))
        raise ActionError("nothing_to_take_back", _("You have no move to take back yet."))


def declined(game: Game, ply: int) -> dict[str, Any]:
    """The stored fields that decline the pending proposal of ``game`` at ``ply``: it goes, and
    its seat may propose again :data:`TAKEBACK_COOLDOWN_PLIES` plies later."""
    proposer = offer_by(game)
    assert proposer is not None, "no pending takeback proposal"
    return {"takeback_offer": "", ply_field(proposer): ply + TAKEBACK_COOLDOWN_PLIES}


def after_move(game: Game, mover: Color, ply: int) -> dict[str, Any]:
    """The stored fields a move by ``mover`` (stored as ply ``ply``) changes about a pending
    proposal: the opponent's move declines it (:func:`declined`), the proposer's own move
    withdraws it; ``{}`` when none is pending."""
    proposer = offer_by(game)
    if proposer is None:
        return {}
    if proposer is mover:
        return {"takeback_offer": ""}
    return declined(game, ply)


def take_back(game: Game, proposer: Color, now: datetime) -> Progress:
    """Take back ``proposer``'s last move in the locked, active ``game`` as of ``now``; returns
    the ``takeback`` event.  Deletes the plies' moves, rebuilds fen, ply and no_progress from the
    moves that remain (a full replay), clears the pending proposal and draw offer, keeps each
    side's time (a live game's side to move is charged for its turn so far) and starts the
    side to move's turn at ``now``.  The game's conditional moves go: each was written for a
    position that is no longer the game's.  Raises :class:`ActionError` ``nothing_to_take_back``,
    ``stale``."""
    _check_takeable(game, proposer)
    plies = plies_to_take_back(game, proposer)
    keep = game.ply - plies
    store.delete_moves(game, keep + 1)
    rows = store.move_rows(game, keep)
    record = store.game_record(game, [notation for notation, _ in rows])
    clock = outages.clock(game)
    # A live game's side to move keeps the time it has now; correspondence gives each move its
    # own allowance, so there nothing is charged.
    charged = clock_fields(clock.charged(now)) if clock.control.live else {}
    store.bump(game, fen=record.position.fen(), ply=keep, no_progress=record.no_progress_plies,
               position_version=game.version + 1, turn_started_at=now, takeback_offer="",
               draw_offer="", **charged)
    Forecast.objects.filter(game=game).delete()
    return Progress(game, [events.takeback_event(game, record, proposer, plies)])


Decide = Callable[[Game, Color | None], Change | TakeBack]


def _run(game_id: str, player_id: str | None, decide: Decide, now: datetime | None) -> Progress:
    """:func:`game.round.progress.act` for takebacks: ``decide`` checks under the row lock and
    returns a :class:`Change` (stored as an ``update``) or a :class:`TakeBack` (carried out by
    :func:`take_back`); the clock's verdict comes first, as for every action."""
    with transaction.atomic():
        game = store.load_for_update(game_id)
        seat = game.seat_of(player_id)
        decision = decide(game, seat)
        now = now or timezone.now()
        expiry = outages.clock(game).expiry(now)
        if expiry:
            return store_update(game, None, expiry_change(expiry))
        if isinstance(decision, TakeBack):
            return take_back(game, decision.proposer, now)
        return store_update(game, seat, decision)


def propose(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """Propose to take back one's last move (with the opponent's reply, if made).

    Returns the ``update`` ``takeback_offered``; against the computer at levels 1 to
    :data:`COMPUTER_GRANTS_UP_TO` the ``takeback`` event at once.  ``now`` (default the current
    time): see :func:`game.round.progress.act` for the clocks.  Raises :class:`ActionError`:
    ``no_such_game``, ``not_seated``, ``not_started``, ``game_over``, ``offer_pending`` (one's
    own proposal is pending), ``takeback_pending`` (the opponent's is), ``nothing_to_take_back``
    (no move of one's own yet, or only the ballot's), ``no_takebacks`` (the computer above level
    :data:`COMPUTER_GRANTS_UP_TO`), ``too_soon`` (within :data:`TAKEBACK_COOLDOWN_PLIES` plies
    of one's declined proposal).
    """
    def decide(game: Game, _seat: Color | None) -> Change | TakeBack:
        seat = seat_in_play(game, player_id)
        pending = offer_by(game)
        if pending is seat:
            raise ActionError("offer_pending", _("Your takeback proposal is still pending."))
        if pending is not None:
            raise ActionError("takeback_pending", _(
                "Your opponent proposes a takeback: accept or decline it first."))
        _check_takeable(game, seat)
        level = computer_level(game.player(seat.opponent))
        if level is not None:
            if level > COMPUTER_GRANTS_UP_TO:
                raise ActionError("no_takebacks", lazy_text(_(
                    "The computer at level %(level)s grants no takebacks (levels 1 to %(max)s do)."),
                    level=level, max=COMPUTER_GRANTS_UP_TO))
            return TakeBack(seat)
        allowed_at = getattr(game, ply_field(seat))
        if game.ply < allowed_at:
            moves = -(-(allowed_at - game.ply) // 2)
            raise ActionError("too_soon", lazy_text(ngettext_lazy(
                "Your last takeback proposal was declined; you can propose again after %(moves)s more move of yours.",
                "Your last takeback proposal was declined; you can propose again after %(moves)s more moves of yours.",
                "moves"), moves=moves))
        return Change("takeback_offered", {"takeback_offer": seat.value})

    return _run(game_id, player_id, decide, now)


def answer(game_id: str, player_id: str | None, accept: bool, now: datetime | None = None) -> Progress:
    """Accept (the ``takeback`` event) or decline (the ``update`` ``takeback_declined``) the
    opponent's pending proposal.

    ``now`` (default the current time): see :func:`game.round.progress.act` for the clocks.
    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``, ``not_started``,
    ``game_over``, ``no_offer`` (none pending, or it is one's own).
    """
    def decide(game: Game, _seat: Color | None) -> Change | TakeBack:
        seat = seat_in_play(game, player_id)
        proposer = offer_by(game)
        if proposer is None or proposer is seat:
            raise ActionError("no_offer", _("There is no takeback proposal from your opponent to answer."))
        if accept:
            return TakeBack(proposer)
        return Change("takeback_declined", declined(game, game.ply))

    return _run(game_id, player_id, decide, now)


def accept(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """:func:`answer` accepting."""
    return answer(game_id, player_id, accept=True, now=now)


def decline(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """:func:`answer` declining."""
    return answer(game_id, player_id, accept=False, now=now)
