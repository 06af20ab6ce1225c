"""Follows: a signed-in player follows others by username and sees which of them are online and
playing, with their game one click away.

Online means a page of the site open: every page of a signed-in player keeps a people socket
(:mod:`game.people.socket`), which marks its player in a Redis sorted set (scored by expiry) when it
opens and every :data:`ONLINE_RENEW_S` seconds, for :data:`ONLINE_TTL_S` seconds.  Playing means
a seat in a game in play (the most recently active one is shown).
"""

from __future__ import annotations

import functools
import logging
import time

import redis
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from checkers_site import redis_cluster
from game.errors import ActionError
from game.lobby import pools
from game.models import Account, Block, Game
from game.people.models import Card, Follow
from game.sockets import storable

log = logging.getLogger(__name__)

#: Players one account may follow at most.
MAX_FOLLOWS = 500
#: Seconds a player counts as online after their page last said so, and between two renewals.
ONLINE_TTL_S = 60
ONLINE_RENEW_S = 20.0


def account_named(username: object) -> Account:
    """The account named ``username`` (any case), with its user.  Raises :class:`ActionError`
    ``no_such_player`` for a name no account has, or anything that is no name."""
    if not isinstance(username, str) or not 0 < len(username) <= 150 or not storable(username):
        raise ActionError("no_such_player", _("There is no player of that name."))
    account = Account.objects.select_related("user").filter(user__username__iexact=username).first()
    if account is None:
        raise ActionError("no_such_player", _("There is no player of that name."))
    return account


def follow(follower: Account, username: object) -> Account:
    """``follower`` follows the account named ``username`` (again: no change).  Returns it.  Raises
    :class:`ActionError` ``no_such_player``, ``self_follow``, ``blocked`` (either blocks the other),
    ``too_many_follows`` (:data:`MAX_FOLLOWS`)."""
    target = account_named(username)
    if target.player_id == follower.player_id:
        raise ActionError("self_follow", _("You cannot follow yourself."))
    if Block.objects.filter(Q(blocker=follower.player_id, blocked=target.player_id)
                            | Q(blocker=target.player_id, blocked=follower.player_id)).exists():
        raise ActionError("blocked", _("You cannot follow this player."))
    if Follow.objects.filter(follower=follower.player_id).count() >= MAX_FOLLOWS:
        raise ActionError("too_many_follows", _("You follow as many players as one may."))
    Follow.objects.get_or_create(follower=follower.player_id, followed=target.player_id)
    return target


def unfollow(follower: Account, username: object) -> Account:
    """``follower`` stops following the account named ``username``.  Raises ``no_such_player``."""
    target = account_named(username)
    Follow.objects.filter(follower=follower.player_id, followed=target.player_id).delete()
    return target


def followed(player_id: str) -> list[tuple[str, str]]:
    """``[(player id, username)]`` of the accounts ``player_id`` follows, by username."""
    ids = Follow.objects.filter(follower=player_id).values_list("followed", flat=True)
    return list(Account.objects.filter(player_id__in=list(ids)).order_by("user__username")
                .values_list("player_id", "user__username"))


def games_of(player_ids: list[str]) -> dict[str, str]:
    """``{player id: game id}``: the most recently active game in play of each of ``player_ids`` that has one."""
    rows = (Game.objects.filter(Q(black_player__in=player_ids) | Q(white_player__in=player_ids),
                                status=Game.Status.ACTIVE)
            .order_by("-updated_at").values_list("id", "black_player", "white_player")[:1000])
    found: dict[str, str] = {}
    for game_id, black, white in rows:
        for player in (black, white):
            if player in player_ids:
                found.setdefault(player, game_id)
    return found


def _key() -> str:
    return f"{{{settings.MATCHMAKING_PREFIX}:online}}:people"


async def mark_online(player_id: str) -> None:
    """Count ``player_id`` as online for :data:`ONLINE_TTL_S` seconds.  A Redis failure is logged."""
    client = pools.from_settings().client
    try:
        await client.zadd(_key(), {player_id: time.time() + ONLINE_TTL_S})
        await client.expire(_key(), ONLINE_TTL_S * 2)
    except Exception as exc:  # noqa: BLE001 - being shown online is not worth more than a log line
        log.warning("people: could not mark %s online: %s", player_id, exc)


async def online_among(player_ids: list[str]) -> set[str]:
    """Which of ``player_ids`` are online now (none when Redis fails)."""
    if not player_ids:
        return set()
    try:
        scores = await pools.from_settings().client.zmscore(_key(), player_ids)
    except Exception as exc:  # noqa: BLE001 - then nobody shows as online
        log.warning("people: could not read who is online: %s", exc)
        return set()
    now = time.time()
    return {pid for pid, score in zip(player_ids, scores, strict=True) if score is not None and score > now}


@functools.cache
def _sync_client(url: str):
    if url.startswith("redis+cluster://"):
        return redis_cluster.sync_client(url, socket_timeout=2, socket_connect_timeout=2)
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def is_online(player_id: str) -> bool:
    """Whether ``player_id`` is online now (a profile's status; False when Redis fails).  Synchronous."""
    try:
        score = _sync_client(settings.MATCHMAKING_REDIS_URL).zscore(_key(), player_id)
    except redis_cluster.ERRORS_OR_VALUE as exc:
        log.warning("people: could not read whether %s is online: %s", player_id, exc)
        return False
    return score is not None and score > time.time()


def seen(player_id: str) -> None:
    """Record that a page of ``player_id`` opened or closed now (the profile's "last seen"): one
    write per people socket opened or closed.  A player without a card gets one only while it is
    an account (the pages of an account deleted meanwhile close after its card went).
    Synchronous (the database)."""
    now = timezone.now()
    if not Card.objects.filter(player_id=player_id).update(last_seen=now) and \
            Account.objects.filter(player_id=player_id).exists():
        Card.objects.get_or_create(player_id=player_id, defaults={"last_seen": now})


def counts(player_id: str) -> tuple[int, int]:
    """``(followers, following)`` of ``player_id`` (two indexed counts)."""
    return (Follow.objects.filter(followed=player_id).count(),
            Follow.objects.filter(follower=player_id).count())
