"""Rematches: after a game either player proposes one, the other accepts (a new game, colours
swapped) or declines."""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.models import Game
from game.players import is_deleted
from game.round.actions import start_game
from game.round.progress import Change, Progress, act
from game.rules import Color


def offer_rematch(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """Propose a rematch after the game; if the opponent proposed one already, start it.

    The rematch has the colours swapped; ``state.next_game`` carries its id.  ``now`` is taken
    for the actions' common signature; a finished game has no clock to charge.
    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``,
    ``not_over`` (the game goes on, or nobody joined it), ``opponent_deleted`` (the other seat's
    account was deleted), ``offer_pending``, ``rematch_started``.
    """
    def decide(game: Game, seat: Color | None) -> Change:
        if seat is None:
            raise ActionError("not_seated", _("Only the players can ask for a rematch."))
        if not game.is_over:
            raise ActionError("not_over", _("A rematch can be proposed once the game is over."))
        if game.next_game_id:
            raise ActionError("rematch_started", _("The rematch has started already."))
        if not game.black_player or not game.white_player:
            raise ActionError("not_over", _("Nobody joined this game; create a new one instead."))
        if is_deleted(game.black_player) or is_deleted(game.white_player):
            raise ActionError("opponent_deleted", _("Your opponent deleted their account: there is no "
                                                    "rematch with them."))
        if game.rematch_offer_by is seat:
            raise ActionError("offer_pending", _("Your rematch proposal is still pending."))
        if game.rematch_offer_by is None:
            return Change("rematch_offered", {"rematch_offer": seat.value})
        rematch = start_game(black=(game.white_player, game.white_name),
                             white=(game.black_player, game.black_name),
                             time_control=game.time_control, ballot=game.ballot,  # the same ballot, colours reversed
                             rated=game.rated)
        return Change("rematch_started", {"rematch_offer": "", "next_game": rematch})

    return act(game_id, player_id, decide, now)


def decline_rematch(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """Decline the opponent's rematch proposal (``now``: as for :func:`offer_rematch`).

    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``, ``no_offer``.
    """
    def decide(game: Game, seat: Color | None) -> Change:
        if seat is None:
            raise ActionError("not_seated", _("Only the players can answer a rematch proposal."))
        if game.rematch_offer_by in (None, seat):
            raise ActionError("no_offer", _("There is no rematch proposal from your opponent."))
        return Change("rematch_declined", {"rematch_offer": ""})

    return act(game_id, player_id, decide, now)
