"""What the tournament's viewers hear, through the channel layer: the standings (batched: at most
one message a second per tournament, however many games end) and each paired player's new game.

Every socket of a tournament page (:class:`game.tournaments.socket.TournamentConsumer`) is in the
group :func:`group` of its tournament and in :func:`player_group` of its player.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import django_rq
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db.models import Q
from django.urls import reverse
from redis.exceptions import RedisError

from game.models import Game

from . import standings
from .models import Tournament

log = logging.getLogger(__name__)

#: The RQ queue of the tournaments' jobs (``RQ_QUEUES`` in the settings).
QUEUE = "tournaments"
#: Seconds between two standings messages of one tournament at most.
STANDINGS_EVERY_S = 1


def group(tournament_id: str) -> str:
    """The channel-layer group of every socket of a tournament's page."""
    return f"tournament.{tournament_id}"


def player_group(tournament_id: str, player_id: str) -> str:
    """The channel-layer group of one player's sockets of a tournament's page (all their tabs)."""
    return f"tournament.{tournament_id}.{player_id}"


def _send(group_name: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group_name, message)
    except Exception:
        log.exception("tournaments: could not send %s to %s", message.get("type"), group_name)


def _gate_key(tournament_id: str) -> str:
    return f"tournaments:standings-due:{tournament_id}"


def changed(tournament_id: str) -> None:
    """The standings of ``tournament_id`` changed: their message goes out within
    :data:`STANDINGS_EVERY_S` seconds, one for every change made meanwhile (a job on the RQ
    scheduler, queued by the first change only).  Never raises: with Redis down the change is
    logged and told with the next one (the pages show the stored standings meanwhile), and the
    action that made it stands."""
    try:
        connection = django_rq.get_connection(QUEUE)
        if connection.set(_gate_key(tournament_id), "1", nx=True, ex=30):
            django_rq.get_queue(QUEUE).enqueue_in(timedelta(seconds=STANDINGS_EVERY_S), push_standings,
                                                  tournament_id, result_ttl=0)
    except RedisError as exc:
        log.warning("tournaments: the standings of %s could not be queued: %s", tournament_id, exc)


def push_standings(tournament_id: str) -> None:
    """The job: send the current standings of ``tournament_id`` to every viewer (``standings``
    message: :func:`game.tournaments.standings.public`).  A change made while it reads queues the
    next one."""
    django_rq.get_connection(QUEUE).delete(_gate_key(tournament_id))
    if not Tournament.objects.filter(pk=tournament_id).exists():
        return      # deleted meanwhile (by an operator): nobody to tell
    _send(group(tournament_id), {"type": "tournament.standings", "data": standings.public(tournament_id)})


def paired(tournament_id: str, game: Game) -> None:
    """Tell both players of ``game`` (their sockets of the tournament page) to go to it."""
    for player in (game.black_player, game.white_player):
        _send(player_group(tournament_id, player), {"type": "tournament.paired", **paired_message(game)})


def paired_message(game: Game) -> dict[str, str]:
    """The ``game`` and ``url`` of a ``paired`` message for ``game``."""
    return {"game": game.id, "url": reverse("game", args=[game.id])}


def first_move_due(tournament_id: str, player_id: str) -> Game | None:
    """The active game of ``tournament_id`` in which ``player_id`` has not moved yet (no move at
    all, or only Black's first with the player White), or None.  A page that opens while its
    player is paired there (it reloads as the tournament starts, and a ``paired`` message sent
    meanwhile reaches no socket) is sent to it as that message would have sent it: the first
    move is due within the tournament's first-move time, or the game is aborted."""
    return (Game.objects.filter(pairing__tournament_id=tournament_id, status=Game.Status.ACTIVE)
            .filter(Q(black_player=player_id, ply=0) | Q(white_player=player_id, ply__lte=1))
            .order_by("-created_at").first())
