"""Draw offers: offer, accept, decline; a move by the opponent declines, and an offer can't be spammed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from game import rules
from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Game
from game.round.progress import Change, Progress, act, finished, seat_in_play
from game.rules import Color

#: After a declined draw offer, the same player may offer again once this many plies
#: (three of their own moves) have been played.
DRAW_OFFER_COOLDOWN_PLIES = 6

_AGREED = rules.Outcome(rules.Termination.AGREEMENT, None)


def declined(game: Game, ply: int) -> dict[str, Any]:
    """The stored fields that decline the pending draw offer of ``game`` at ``ply``: the offer
    goes, and its seat may offer again :data:`DRAW_OFFER_COOLDOWN_PLIES` plies later."""
    offerer = game.draw_offer_by
    assert offerer is not None, "no pending draw offer"
    return {"draw_offer": "", Game.draw_ply_field(offerer): ply + DRAW_OFFER_COOLDOWN_PLIES}


def offer_draw(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """Offer a draw, on either turn.  An offer while the opponent's offer is pending accepts it.

    ``now`` (default the current time): see :func:`game.round.progress.act` for the clocks.
    After a declined offer the same player may offer again once
    :data:`DRAW_OFFER_COOLDOWN_PLIES` plies have been played.  Raises
    :class:`ActionError`: ``no_such_game``, ``not_seated``, ``not_started``,
    ``game_over``, ``offer_pending`` (your own offer is still pending), ``too_soon``.
    """
    def decide(game: Game, _seat: Color | None) -> Change:
        seat = seat_in_play(game, player_id)
        if game.draw_offer_by is seat:
            raise ActionError("offer_pending", _("Your draw offer is still pending."))
        if game.draw_offer_by is not None:
            return Change("draw_accepted", finished(_AGREED))
        allowed_at = getattr(game, Game.draw_ply_field(seat))
        if game.ply < allowed_at:
            moves = -(-(allowed_at - game.ply) // 2)
            raise ActionError("too_soon", lazy_text(ngettext_lazy(
                "Your last offer was declined; you can offer a draw again after %(moves)s more move of yours.",
                "Your last offer was declined; you can offer a draw again after %(moves)s more moves of yours.",
                "moves"), moves=moves))
        return Change("draw_offered", {"draw_offer": seat.value})

    return act(game_id, player_id, decide, now)


def answer_draw(game_id: str, player_id: str | None, accept: bool, now: datetime | None = None) -> Progress:
    """Accept (the game is drawn by agreement) or decline the opponent's pending draw offer.

    ``now`` (default the current time): see :func:`game.round.progress.act` for the clocks.
    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``, ``not_started``,
    ``game_over``, ``no_offer`` (none pending, or it is your own).
    """
    def decide(game: Game, _seat: Color | None) -> Change:
        seat = seat_in_play(game, player_id)
        if game.draw_offer_by in (None, seat):
            raise ActionError("no_offer", _("There is no draw offer from your opponent to answer."))
        if accept:
            return Change("draw_accepted", finished(_AGREED))
        return Change("draw_declined", declined(game, game.ply))

    return act(game_id, player_id, decide, now)


def accept_draw(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """:func:`answer_draw` accepting."""
    return answer_draw(game_id, player_id, accept=True, now=now)


def decline_draw(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """:func:`answer_draw` declining."""
    return answer_draw(game_id, player_id, accept=False, now=now)
