"""The socket counts (game/round/admission.py) on a real Redis Cluster: each session's and each
address's set in a slot of its own, spread over the shards, and the limits still exact."""

from __future__ import annotations

import pytest
from django.test import override_settings
from redis.crc import key_slot

from game.round import admission
from tests.cluster_support import Cluster

pytestmark = [pytest.mark.django_db(transaction=True)]


def session(n: int) -> str:
    return f"{n:032x}"


def counted(cluster: Cluster, key: str) -> int:
    return cluster.master_of(key).client().zcard(key)


@override_settings(GAME_SOCKETS_PER_SESSION=2, GAME_SOCKETS_PER_ADDRESS=3)
async def test_socket_counts_spread_over_the_shards_and_still_hold_the_limits(site_on_cluster):
    tickets = []
    for n in range(30):          # thirty sessions, each from an address of its own
        ticket, refused = await admission.admit(f"s{n}", session(n), f"10.9.{n}.1")
        assert refused is None and ticket is not None and len(ticket.keys) == 2
        tickets.append(ticket)
    keys = [key for ticket in tickets for key in ticket.keys]
    assert len({key_slot(key.encode()) for key in keys}) == len(keys) == 60
    masters = {site_on_cluster.master_of(key).port for key in keys}
    assert len(masters) == 3
    # A session's limit: its third socket is refused, and counted nowhere.
    assert (await admission.admit("s0-b", session(0), "10.9.0.1"))[1] is None
    assert await admission.admit("s0-c", session(0), "10.9.0.1") == (None, admission.OVER_SESSION)
    session_key, address_key = admission._keys(session(0), "10.9.0.1", "game")
    assert (counted(site_on_cluster, session_key), counted(site_on_cluster, address_key)) == (2, 2)
    # An address's limit, whatever the sessions: the refused socket's session entry is taken out.
    assert (await admission.admit("x1", session(100), "10.9.0.1"))[1] is None
    assert await admission.admit("x2", session(101), "10.9.0.1") == (None, admission.OVER_ADDRESS)
    assert counted(site_on_cluster, admission._keys(session(101), None, "game")[0]) == 0
    assert counted(site_on_cluster, address_key) == 3
    # A socket closed gives its place back.
    await admission.release(tickets[0])
    assert counted(site_on_cluster, address_key) == 2
    ticket, refused = await admission.admit("x3", session(101), "10.9.0.1")
    assert refused is None and ticket is not None
    assert counted(site_on_cluster, address_key) == 3
