"""Who seeks, as whom and under which name: the seek a lobby socket puts into a pool.

A rated pool (:attr:`game.lobby.pairing.Pool.rated`) is for signed-in accounts only.  The lobby
socket has the session of the page that opened it (channels' session middleware, no
``scope["user"]``), so :func:`rated_seeker` reads the signed-in user from that session as
Django's own ``get_user`` does (the session's user id, backend and password hash checked), then
the user's :class:`game.models.Account` and its :class:`game.models.Rating` in the pool's
category; it runs in a database thread (:func:`game.sockets.in_db_thread`).  A casual seek plays
under the seat's name rules (:func:`game.accounts.identity.seat_name`).  :func:`new_seek` makes
either from the socket's ``seek`` message, with the players its player blocks or is blocked by
(``avoid``: the pools never pair them, and the seek list does not show the seek to them,
docs/people.md "Blocks"); :func:`hidden_from` is the same set for a page that watches the list.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from game import sessions
from game.accounts.identity import account_name, seat_name
from game.errors import ActionError
from game.lobby.pairing import POOLS, Seek
from game.lobby.protocol import SeekGame
from game.models import Account, Block
from game.names import ACCOUNT_NAME_MESSAGE, NAME_MAX_CHARS, belongs_to_account, clean_name
from game.ratings import games as ratings
from game.ratings import playban
from game.sockets import in_db_thread


@dataclass(frozen=True)
class RatedSeeker:
    """A signed-in account seeking in a rated pool: ``player_id`` (the account's, which its seats
    hold), ``name`` (the username, the name its rated games show) and ``rating`` (whole points of
    its current rating in the pool's category, :func:`game.ratings.games.current`: 1500 without one)."""

    player_id: str
    name: str
    rating: int


def signed_in_account(session: Any) -> Account | None:
    """The :class:`Account` signed in on ``session`` (a session store, or None), or None for a
    guest, a session whose log-in no longer holds (password changed, user gone or inactive, logged
    out since: :func:`game.accounts.sessions.log_in_holds`) or a
    user without an account row.  Reads the database; raises nothing else."""
    if session is None:
        return None
    user = sessions.user_of(session)
    if not user.is_authenticated or not sessions.log_in_ended_not_recorded(session):
        return None
    return Account.objects.filter(user_id=user.pk).select_related("user").first()


def rated_seeker(session: Any, category: str) -> RatedSeeker:
    """The signed-in account of ``session`` as a seeker of a rated pool of ``category``
    (``"blitz"``...): its player id, its username as the name, its rating (rounded points).

    Raises :class:`ActionError` ``rated_needs_account`` for a guest (or a log-in that no longer
    holds): only accounts play rated games; ``playban`` for an account that left too many rated
    games unplayed lately (:mod:`game.ratings.playban`).
    """
    account = signed_in_account(session)
    if account is None:
        raise ActionError("rated_needs_account", _("Rated games are for signed-in players: sign in or "
                                                   "sign up, or choose a casual pool."))
    playban.check(account.player_id)
    username = account.user.get_username()
    try:
        name = clean_name(username[:NAME_MAX_CHARS])
    except ActionError:  # a username the display names refuse: still the account, by its own name
        name = clean_name(f"player {account.player_id[:8]}")
    rating = ratings.current(account.player_id, category).rating  # a new player's 1500 without a row
    return RatedSeeker(player_id=account.player_id, name=name, rating=max(0, round(rating)))


#: Blocks a seek carries at most (as many as one account may make: game.people.blocks.MAX_BLOCKS).
AVOID_MAX = 500
#: Players who block the seeker that a seek carries at most, after its own blocks.
BLOCKED_BY_MAX = 500


def avoided(player_id: str, blocked_by_max: int | None = BLOCKED_BY_MAX) -> tuple[str, ...]:
    """The player ids ``player_id`` blocks (:class:`game.models.Block`, at most :data:`AVOID_MAX`),
    then those who block it (at most ``blocked_by_max``; None: all), each once: two indexed
    queries, nothing for a guest.  Every block is carried by its blocker's seeks, whatever the
    cap on the blockers, so the pools' claim always sees it."""
    blocks = list(Block.objects.filter(blocker=player_id).order_by("blocked")
                  .values_list("blocked", flat=True)[:AVOID_MAX])
    blockers = list(Block.objects.filter(blocked=player_id).order_by("blocker")
                    .values_list("blocker", flat=True)[:blocked_by_max])
    return tuple(dict.fromkeys(blocks + blockers))


def hidden_from(player_id: str) -> frozenset[str]:
    """The players whose seeks a page of ``player_id`` is not shown: those it blocks or is blocked
    by (:func:`avoided`, all of them).  Only accounts block and are blocked: a guest's page need not
    ask (:func:`game.sessions.signed_in`)."""
    return frozenset(avoided(player_id, blocked_by_max=None))


async def new_seek(session: Any, message: SeekGame, player_id: str, remembered: str | None,
                   channel: str) -> Seek:
    """The seek of a lobby socket's ``message`` (a new id, ``message.pool``, the socket's ``channel``).

    In a rated pool the seek is the signed-in account's of ``session`` (:func:`rated_seeker`: its
    player id, which differs from the socket's ``player_id`` when the session is older than its
    log-in; its username; its rating).  In a casual pool it is ``player_id``'s, under the seat's
    name for the name typed (``message.name``; None: ``remembered``, the session's): signed in,
    the username; else the name typed, or the guest name.  Reads the database in a database
    thread.  Raises :class:`ActionError` ``rated_needs_account``, ``bad_name``, or ``name_taken``
    for a guest's name that is an account's.
    """
    pool = POOLS[message.pool]
    if pool.rated:
        assert pool.category is not None  # only timed pools have rated twins
        seeker = await in_db_thread(rated_seeker)(session, pool.category)
        return Seek(id=uuid.uuid4().hex, player=seeker.player_id, name=seeker.name, pool=pool.id,
                    channel=channel, rating=seeker.rating, avoid=await in_db_thread(avoided)(seeker.player_id))
    typed = message.name if message.name is not None else remembered
    name = seat_name(session, typed, player_id)
    if typed and typed.split() and not account_name(session) and await in_db_thread(belongs_to_account)(name):
        raise ActionError("name_taken", ACCOUNT_NAME_MESSAGE)
    return Seek(id=uuid.uuid4().hex, player=player_id, name=name, pool=pool.id, channel=channel,
                avoid=await in_db_thread(avoided)(player_id))
