"""The lobby's channel-layer groups, by name, and the layer they live in.

Every lobby socket joins the group of its player (:func:`player_group`: all their tabs, so that
a pairing in one tab withdraws the seeks of the others, and the seeks of an account deleted
meanwhile are withdrawn) and the group of each pool (:func:`pool_group`: the pool's counts).  The
names need nothing of the sockets or of the accounts: whatever must reach a player's lobby
sockets (:mod:`game.accounts.deletion`) names their group from here.
"""

from __future__ import annotations

from channels.layers import BaseChannelLayer, get_channel_layer


def player_group(player_id: str) -> str:
    """The channel-layer group of every lobby socket of one player (all their tabs)."""
    return f"lobby.player.{player_id}"


def pool_group(pool: str) -> str:
    """The channel-layer group of the lobby sockets that follow ``pool``: ``lobby.<pool>``.

    Group names allow no ``+``, pool ids no ``.``: ``+`` becomes ``.``.

    >>> pool_group("untimed"), pool_group("5+3")
    ('lobby.untimed', 'lobby.5.3')
    """
    return f"lobby.{pool.replace('+', '.')}"


def layer() -> BaseChannelLayer:
    """The channel layer of the lobby (always configured: ``CHANNEL_LAYERS``)."""
    found = get_channel_layer()
    assert found is not None, "CHANNEL_LAYERS has no default layer"
    return found
