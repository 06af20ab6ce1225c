"""A seat handed from one player id to another: a guest's seats when the guest signs up or logs
in (:mod:`game.accounts.identity`), a deleted account's seats in its finished games.

The seat keeps its side, its clock and everything the game did; only the player id in it (and,
when given, its display name) changes, with the game's version bumped and a ``seats`` event, so
every process's cached snapshots and seat lookups (:mod:`game.round.snapshots`) learn of it.
The seat's conditional moves and turn-mail notes (:class:`game.models.Forecast`,
:class:`game.models.TurnNotice`) go with it.
"""

from __future__ import annotations

import functools

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.models import Forecast, Game, TurnNotice
from game.round import events, store
from game.round.fanout import publish_sync
from game.round.progress import Progress


def hand_over(game_id: str, from_player: str, to_player: str, name: str | None = None,
              withdraw_offers: bool = False) -> Progress:
    """Give ``from_player``'s seat in game ``game_id`` to ``to_player`` (player ids), renamed
    ``name`` when given (a display name, stored as it is), whatever the game's status.  With
    ``withdraw_offers`` (a deleted account's seat) every pending proposal of the game lapses, the
    seat's and its opponent's: rematch, draw and takeback.

    Returns the ``seats`` event, which is published once the transaction commits (the caller's,
    when it has one open); no events when ``from_player`` holds no seat there.  Raises
    :class:`ActionError` ``no_such_game``, ``no_session`` (an empty player id) and
    ``already_seated`` when ``to_player`` holds the other seat (a game one played against oneself
    from two browsers: nothing changes then).
    """
    if not from_player or not to_player:
        raise ActionError("no_session", _("Your browser session has no player id."))
    with transaction.atomic():
        game = store.load_for_update(game_id)
        seat = game.seat_of(from_player)
        if seat is None or from_player == to_player:
            return Progress(game)
        if game.seat_of(to_player) is not None:
            raise ActionError("already_seated", _("That player already holds the other seat."))
        player_field, name_field = Game.seat_fields(seat)
        changes = {player_field: to_player}
        if name is not None:
            changes[name_field] = name
        if withdraw_offers:
            changes.update(rematch_offer="", draw_offer="", takeback_offer="")
        store.bump(game, **changes)
        Forecast.objects.filter(game_id=game.id, player_id=from_player).update(player_id=to_player)
        TurnNotice.objects.filter(game_id=game.id, player_id=from_player).update(player_id=to_player)
        progress = Progress(game, [events.seats_event(game, store.current_record(game))])
        transaction.on_commit(functools.partial(publish_sync, game.id, progress.events))
        return progress


def games_of(player: str) -> list[str]:
    """The ids of every game in which ``player`` (a player id) holds a seat, oldest first."""
    if not player:
        return []
    return list(Game.objects.filter(Q(black_player=player) | Q(white_player=player))
                .order_by("created_at").values_list("id", flat=True))
