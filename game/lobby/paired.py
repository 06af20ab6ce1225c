"""The game of a pairing: created, and each seek's socket told.

For each pairing a settling claims (:mod:`game.lobby.settling`), the process creates the game
(:func:`game.round.actions.start_game`, colours as the pairing drew them) and sends
``lobby.paired`` through the channel layer to the channel of each seek, which may belong to a
socket of another process; the player's other tabs are sent ``lobby.withdraw`` through the
player's group.  A pairing that cannot be played sends ``lobby.failed``, or ``lobby.requeue`` to
the seek that may seek on.
"""

from __future__ import annotations

import logging

from django.urls import reverse

from game import sessions
from game.errors import ActionError
from game.lobby.groups import layer, player_group
from game.lobby.pairing import POOLS, Pairing, Seek
from game.models import Account
from game.round import actions
from game.sockets import in_db_thread

log = logging.getLogger(__name__)


async def _tell(channel: str, message: dict) -> None:
    try:
        await layer().send(channel, message)
    except Exception:  # the other seeks of the wave must still be told
        log.exception("lobby: could not send %s to %s", message.get("type"), channel)


def _seeks_without_account(pairing: Pairing) -> list[Seek]:
    """The seeks of ``pairing`` whose player id is no account's (any more)."""
    players = [seek.player for seek in pairing]
    accounts = set(Account.objects.filter(player_id__in=players).values_list("player_id", flat=True))
    return [seek for seek in pairing if seek.player not in accounts]


async def start_paired_game(pairing: Pairing):
    """Create the game of ``pairing`` (in its pool's time control, with a random approved 3-move ballot in
    a ballot pool, rated in a rated pool: :func:`game.round.actions.start_game` keeps both players'
    current ratings on the game) and send ``lobby.paired`` to each seek's channel.

    Returns the game, or ``None`` when it could not be created (both seeks then
    get ``lobby.failed``; they were already taken out of the pool).
    """
    pool = POOLS[pairing.black.pool]
    # A seek of a guest id that has logged in to an account since is no one's: it fails, the other requeues.
    ended = await in_db_thread(sessions.ended_guests)([seek.player for seek in pairing])
    if ended or pairing.black.player == pairing.white.player:
        for seek in pairing:
            failed = seek.player in ended or not ended
            await _tell(seek.channel, {"type": "lobby.failed" if failed else "lobby.requeue", "seek": seek.id})
        return None
    try:
        game = await in_db_thread(actions.start_game)(
            black=(pairing.black.player, pairing.black.name),
            white=(pairing.white.player, pairing.white.name),
            time_control=pool.time_control,
            ballot="random" if pool.ballot else None,
            rated=pool.rated,
        )
    except ActionError as exc:
        # A seat the rules of the game refuse now, most likely a rated seek whose account was
        # deleted since: that seeker is told; the other one seeks again at once (``lobby.requeue``),
        # so an honest player keeps waiting instead of failing.
        stale = await in_db_thread(_seeks_without_account)(pairing) if pool.rated else list(pairing)
        log.warning("lobby: the pairing of %s and %s refused (%s): %s", pairing.black.id, pairing.white.id,
                    exc.code, ", ".join(seek.id for seek in stale) or "both")
        for seek in pairing:
            if seek in stale or not stale:
                await _tell(seek.channel, {"type": "lobby.failed", "seek": seek.id})
            else:
                await _tell(seek.channel, {"type": "lobby.requeue", "seek": seek.id})
        return None
    except Exception:  # both players must hear of it
        log.exception("lobby: could not create the game of %s and %s", pairing.black.id, pairing.white.id)
        for seek in pairing:
            await _tell(seek.channel, {"type": "lobby.failed", "seek": seek.id})
        return None
    url = reverse("game", args=[game.id])
    for seek, colour in ((pairing.black, "B"), (pairing.white, "W")):
        await _tell(seek.channel, {"type": "lobby.paired", "seek": seek.id, "game": game.id, "url": url,
                                   "color": colour})
        try:  # the player's other tabs stop seeking: one person, one new game
            await layer().group_send(player_group(seek.player), {
                "type": "lobby.withdraw", "keep": seek.channel, "game": game.id, "url": url})
        except Exception:  # their seeks then expire or meet someone; never fatal here
            log.exception("lobby: could not withdraw the other seeks of %s", seek.player)
    return game
