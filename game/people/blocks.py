"""Blocks: a signed-in player blocks another account from its profile (docs/people.md, "Blocks").

A block is one :class:`game.models.Block` row, read where it acts:

- a challenge from the blocked player to the blocker is refused ``blocked``
  (:func:`game.people.challenges.send`), and so is one from the blocker to the blocked;
- the blocker's game pages do not receive the blocked player's chat lines
  (:mod:`game.round.hiding`);
- the lobby never pairs the two: each seek carries its player's blocks (``Seek.avoid``), which the
  pools' atomic claim checks both ways (:mod:`game.lobby.pool_scripts`), and a click on the seek of
  either is refused ``blocked`` (:mod:`game.lobby.accepting`).

Blocking also ends following in both directions and cancels the open challenges between the two.
The blocked player is never told; a refusal says only that the action cannot be done.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.models import Account, Block
from game.people.follows import account_named
from game.people.models import Challenge, Follow

#: Players one account may block at most (each seek carries them: docs/people.md, "Blocks").
MAX_BLOCKS = 500


def block(blocker: Account, username: object) -> Account:
    """``blocker`` blocks the account named ``username`` (again: no change).  Returns it.  Raises
    :class:`ActionError` ``no_such_player``, ``self_block``, ``too_many_blocks`` (:data:`MAX_BLOCKS`)."""
    target = account_named(username)
    if target.player_id == blocker.player_id:
        raise ActionError("self_block", _("You cannot block yourself."))
    me, them = blocker.player_id, target.player_id
    with transaction.atomic():
        if Block.objects.filter(blocker=me, blocked=them).exists():
            return target
        if Block.objects.filter(blocker=me).count() >= MAX_BLOCKS:
            raise ActionError("too_many_blocks", _("You block as many players as one may: unblock one first."))
        Block.objects.get_or_create(blocker=me, blocked=them)
        Follow.objects.filter(Q(follower=me, followed=them) | Q(follower=them, followed=me)).delete()
        Challenge.objects.filter(Q(challenger=me, challenged=them) | Q(challenger=them, challenged=me),
                                 status=Challenge.Status.OPEN).update(status=Challenge.Status.CANCELLED)
    return target


def unblock(blocker: Account, username: object) -> Account:
    """``blocker`` stops blocking the account named ``username``.  Raises ``no_such_player``."""
    target = account_named(username)
    Block.objects.filter(blocker=blocker.player_id, blocked=target.player_id).delete()
    return target


def blocks(blocker_id: str, blocked_id: str) -> bool:
    """Whether ``blocker_id`` blocks ``blocked_id`` (one indexed query)."""
    return Block.objects.filter(blocker=blocker_id, blocked=blocked_id).exists()


def between(a: str, b: str) -> bool:
    """Whether either of the players ``a`` and ``b`` blocks the other (one query)."""
    return Block.objects.filter(Q(blocker=a, blocked=b) | Q(blocker=b, blocked=a)).exists()


def blocked_names(blocker_id: str) -> list[str]:
    """The user names of the accounts ``blocker_id`` blocks, by name (the profile settings' list)."""
    ids = list(Block.objects.filter(blocker=blocker_id).values_list("blocked", flat=True)[:MAX_BLOCKS])
    return list(Account.objects.filter(player_id__in=ids).order_by("user__username")
                .values_list("user__username", flat=True))
