"""Claims against a player who left: the opponent of a player to move who has been away long
enough may claim the win or call the game a draw."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from checkers_site.ops import metrics
from game import rules
from game.clock import claim_after_s, paused_ms
from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Game
from game.players import is_computer
from game.round import outages, presence
from game.round.progress import Change, Progress, act, finished, seat_in_play
from game.rules import Color


def claim(game_id: str, player_id: str | None, draw: bool, now: datetime | None = None) -> Progress:
    """The opponent of a player to move who left claims the win (or, ``draw``, calls it a draw).

    Allowed when the player to move has had no page of the game open for
    :func:`game.clock.claim_after_s` seconds (:func:`game.round.presence.offline_s`),
    not counting the times during which game events could not be delivered (:func:`away_s`).
    ``now`` (default the current time): see :func:`game.round.progress.act` for the clocks.
    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``, ``not_started``,
    ``game_over``, ``not_claimable`` (correspondence, your own turn, or the computer's),
    ``opponent_present`` (present, or away for less than the limit; the message says how long
    is left), ``presence_unavailable``.
    """
    def decide(game: Game, _seat: Color | None) -> Change:
        seat = seat_in_play(game, player_id)
        limit = claim_after_s(game.control, settings.CLAIM_AFTER_LIVE_S, settings.CLAIM_AFTER_UNTIMED_S)
        if limit is None:
            raise ActionError("not_claimable", _("In correspondence games the clock decides."))
        turn = game.turn
        if turn is seat:
            raise ActionError("not_claimable", _("It is your turn; only the player to move can be claimed against."))
        if is_computer(game.player(turn)):
            raise ActionError("not_claimable", _("The computer does not leave; it is thinking."))
        since = (game.turn_started_at or game.updated_at).timestamp()
        try:
            away = presence.offline_s(game.id, turn.value, since)
        except presence.PresenceUnavailable:
            raise ActionError("presence_unavailable",
                              _("Cannot tell whether your opponent is connected; try again.")) from None
        away = away_s(away, game.id)
        if away < limit:
            left = max(1, round(limit - away))
            raise ActionError("opponent_present", lazy_text(_("Your opponent can still come back: "
                                                              "you may claim in %(seconds)s s if they stay away."),
                                                            seconds=left)
                              if away else _("Your opponent is connected."))
        if draw:
            return Change("claimed_draw", finished(rules.Outcome(rules.Termination.ABANDONED, None)))
        return Change("claimed_win", finished(rules.Outcome(rules.Termination.ABANDONED, seat)))

    try:
        progress = act(game_id, player_id, decide, now)
    except ActionError as exc:
        metrics.claim_outcome(exc.code)
        raise
    metrics.claim_outcome("claimed_draw" if draw else "claimed_win")
    return progress


def away_s(offline_s: float, game_id: str, now: datetime | None = None) -> float:
    """The seconds of an absence of ``offline_s`` seconds up to ``now`` (default the current time)
    that count towards a claim: all but those during which the events of the game ``game_id``
    could not be delivered (:mod:`game.round.outages`): a page that heard nothing may have been closed, or shut out,
    by the outage itself."""
    if offline_s <= 0:
        return 0.0
    now = now or timezone.now()
    left_at = now - timedelta(seconds=offline_s)
    return max(0.0, offline_s - paused_ms(outages.pauses(game_id, left_at), left_at, now) / 1000)


def claim_win(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """:func:`claim` of the win."""
    return claim(game_id, player_id, draw=False, now=now)


def claim_draw(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """:func:`claim` of a draw."""
    return claim(game_id, player_id, draw=True, now=now)
