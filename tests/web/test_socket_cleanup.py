"""A game socket gives back everything it holds when it closes, whatever failed under it: its
Round's membership, its presence kept by the process, its shared rate limits, the process's
socket gauge.  Redis is a server of the test's own, killed while a move's handler runs."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from prometheus_client import REGISTRY

from game.round import actions, admission, fanout, presence
from tests.system.processes import RedisServer

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def own_redis(tmp_path, settings):
    """The site's Redis (game events, presence, admission) is a server of this test's own."""
    server = RedisServer(tmp_path / "redis.log")
    server.start()
    settings.REDIS_URL = server.url
    try:
        yield server
    finally:
        server.stop()


def open_sockets() -> float:
    return REGISTRY.get_sample_value("checkers_open_sockets", {"kind": "game"}) or 0.0


async def test_sockets_give_back_all_they_hold_when_redis_dies_under_a_handler(own_redis, alice, bob):
    game = await database_sync_to_async(actions.start_game)((alice.player_id, "alice"), (bob.player_id, "bob"),
                                                            "5+3")
    before = open_sockets()
    a, snap = await alice.connect(game.id)
    b, _ = await bob.connect(game.id)
    hub = fanout.hub()
    assert len(hub.rounds[game.id].members) == 2 and open_sockets() == before + 2
    assert alice.player_id in admission.session_rates.limits
    assert len(presence.keeper().entries) == 2
    await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
    own_redis.kill()                       # while the move is carried out and published
    for comm in (a, b):
        await comm.disconnect()
    the_round = hub.rounds[game.id]
    assert the_round.members == set()
    assert the_round.audience is not None
    await the_round.audience               # the last notice of who is there (it fails: no Redis)
    assert game.id not in hub.rounds       # then nothing of the game is left in this process
    assert open_sockets() == before
    assert alice.player_id not in admission.session_rates.limits
    assert bob.player_id not in admission.session_rates.limits
    assert presence.keeper().entries == {}
    stored = await database_sync_to_async(type(game).objects.get)(pk=game.id)
    assert stored.ply == 1                 # the move itself was stored
