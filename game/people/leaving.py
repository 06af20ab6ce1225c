"""What the people's rooms keep of a deleted account (docs/accounts.md, "Deleting an account").

:func:`forget` receives :data:`game.accounts.deletion.account_deleting`, inside the deletion's
transaction (connected in :mod:`game.people.apps`), so the account and these rows go together or
not at all:

- its blocks, both ways, its follows, both ways, its notifications and its card (country, last
  seen) are deleted: they concern a player who is no longer there;
- its open challenges, sent and received, are cancelled: none can make a game with a seat nobody
  holds;
- the reports it filed stay for the moderators (reason, game, text, the reported player), under the
  player id its seats now hold and the name :data:`game.accounts.deletion.DELETED_NAME`: nothing in
  them points to a live account, even one that takes the name later;
- the reports about it stay too, with their game, under the same player id (the one its seat in
  that game now holds) and the name it had when reported, so the moderators can still read what
  happened and close them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from game.accounts.deletion import DELETED_NAME
from game.models import Block
from game.people.models import Card, Challenge, Follow, Notification, Report


def forget(sender: Any, player_id: str, deleted_id: str, **kwargs: Any) -> None:
    """:data:`game.accounts.deletion.account_deleting` receiver: remove or re-point what the
    people's rooms keep of ``player_id`` as the module docstring says (``deleted_id``: the player
    id its seats now hold).  Raises the database's errors, which undo the deletion."""
    Block.objects.filter(Q(blocker=player_id) | Q(blocked=player_id)).delete()
    Follow.objects.filter(Q(follower=player_id) | Q(followed=player_id)).delete()
    Notification.objects.filter(player=player_id).delete()
    Card.objects.filter(player_id=player_id).delete()
    Challenge.objects.filter(Q(challenger=player_id) | Q(challenged=player_id),
                             status=Challenge.Status.OPEN).update(status=Challenge.Status.CANCELLED)
    Report.objects.filter(reporter=player_id).update(reporter=deleted_id, reporter_name=DELETED_NAME)
    Report.objects.filter(reported=player_id).update(reported=deleted_id)
