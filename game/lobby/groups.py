"""The lobby's channel-layer groups, by name, and the layer they live in.

Every lobby socket joins the group of its player (:func:`player_group`: all their tabs, so that
a pairing in one tab withdraws the seeks of the others, and the seeks of an account deleted
meanwhile are withdrawn).  The news for every page (the pools' counts and seeks) goes another way,
one message a process: :mod:`game.lobby.fanout`.  The names need nothing of the sockets or of the
accounts.
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, get_channel_layer

log = logging.getLogger(__name__)


def player_group(player_id: str) -> str:
    """The channel-layer group of every lobby socket of one player (all their tabs)."""
    return f"lobby.player.{player_id}"


def layer() -> BaseChannelLayer:
    """The channel layer of the lobby (always configured: ``CHANNEL_LAYERS``)."""
    found = get_channel_layer()
    assert found is not None, "CHANNEL_LAYERS has no default layer"
    return found


def on_account_deleted(sender: object, player_id: str, **kwargs: object) -> None:
    """:data:`game.accounts.deletion.account_deleted`: take the seeks of ``player_id`` out of the
    lobby's pools: each of its lobby sockets, in every server process, is told
    (``lobby.account_deleted``, through the channel layer), cancels its seek, tells its page
    ``cancelled`` with ``reason`` ``account_deleted`` and closes.  A channel layer that fails is
    logged: the seeks then expire with their sockets, or are paired (a casual game the opponent
    can abort)."""
    try:
        async_to_sync(layer().group_send)(player_group(player_id), {"type": "lobby.account_deleted"})
    except Exception as exc:  # noqa: BLE001 - the account is deleted already; its seeks expire
        log.warning("could not withdraw the seeks of deleted %s: %s", player_id, exc)
