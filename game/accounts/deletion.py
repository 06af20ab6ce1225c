"""Deleting an account: its ongoing games end, its finished games stay with the seat shown as a
deleted player, and the account, its user and its ratings go.

Ongoing games end through the game's own actions (:func:`game.round.actions.resign` for a game
in play, :func:`game.round.actions.abort` for one still waiting for an opponent), so both pages
update live and a rated game is rated as any resignation.  Then every seat the account holds is
handed to a player id of its own (:func:`game.players.deleted_id`) under the name :data:`DELETED_NAME`
(:func:`game.round.handover.hand_over`, a ``seats`` event each), and its conditional moves, turn
mails, ratings and rating history are deleted with the user (the :class:`~game.models.Account`
and allauth's email addresses go with it, by cascade).  Every pending proposal of its games (a
rematch, a draw, a takeback, its own or its opponent's) lapses with the hand-over, and its seeks in
the lobby are withdrawn (:data:`account_deleted`, which the lobby hears).  What the rooms above
keep of it (its blocks, follows, notifications, challenges, reports) is removed or re-pointed in
the same transaction (:data:`account_deleting`, which the people's rooms hear).
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.dispatch import Signal

from game.errors import ActionError
from game.models import Account, Forecast, Rating, RatingChange, TurnNotice
from game.players import deleted_id
from game.round import actions, handover
from game.round.fanout import publish_sync

log = logging.getLogger(__name__)

#: An account was deleted (``player_id``: its player id, sent after the deletion committed): the
#: lobby withdraws its seeks (:func:`game.lobby.groups.on_account_deleted`).
account_deleted = Signal()
#: An account is being deleted (``player_id``: its player id; ``deleted_id``: the player id its
#: seats now hold), sent inside the deletion's transaction: the people's rooms remove or re-point
#: what they keep of it (:func:`game.people.leaving.forget`).  A receiver that raises undoes the
#: deletion.
account_deleting = Signal()

#: The name a deleted account's seats are shown under (stored as it is, in every game).
DELETED_NAME = "deleted player"


def end_ongoing_games(player: str) -> list[str]:
    """Resign (or abort, while waiting for an opponent) every game not over in which ``player``
    (a player id) holds a seat, each published at once.  Returns the ids of the games ended."""
    ended = []
    for game_id in handover.games_of(player):
        for action in (actions.resign, actions.abort):
            try:
                progress = action(game_id, player)
            except ActionError as exc:
                if exc.code == "not_started":   # waiting for an opponent: aborted instead
                    continue
                break                           # over already (or the clock ended it first)
            publish_sync(game_id, progress.events)
            ended.append(game_id)
            break
    return ended


def delete_account(user: Any) -> list[str]:
    """Delete ``user`` (a :class:`django.contrib.auth.models.User`) and its account as the module
    docstring says.  Returns the ids of the games whose seat now shows the deleted player.  The
    caller logs the browser out."""
    account = Account.objects.filter(user=user).first()
    if account is None:
        user.delete()
        return []
    player = account.player_id
    end_ongoing_games(player)
    end_ongoing_games(player)   # a game started meanwhile (a seek of another tab paired) ends too
    deleted = deleted_id()
    moved = []
    with transaction.atomic():
        Forecast.objects.filter(player_id=player).delete()
        TurnNotice.objects.filter(player_id=player).delete()
        Rating.objects.filter(player_id=player).delete()
        RatingChange.objects.filter(player_id=player).delete()
        for game_id in handover.games_of(player):
            try:
                progress = handover.hand_over(game_id, player, deleted, name=DELETED_NAME, withdraw_offers=True)
            except ActionError as exc:
                log.warning("seat of deleted %s in game %s stays: %s", player, game_id, exc.code)
                continue
            if progress.events:
                moved.append(game_id)   # its seats event goes out once this commits
        account_deleting.send(sender=delete_account, player_id=player, deleted_id=deleted)
        user.delete()
    account_deleted.send(sender=delete_account, player_id=player)
    return moved
