"""Follows over the people socket: whom a player follows, which of them are online and playing (with
the game to watch), and the count of games waiting for the player's move; real sockets and database."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from checkers_site.asgi import application
from game.people.models import Follow
from game.round import actions
from tests.web.test_challenges import accounts, answer, hear, people

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_following_shows_who_is_online_and_the_game_to_watch():
    ann, ben, cat = await accounts("ann", "ben", "cat")
    a, _ = await people(ann)
    await a.send_json_to({"type": "follow", "name": "BEN"})
    listed = await answer(a)
    assert listed == {"type": "following", "players": [{"name": "ben", "online": False, "url": None}]}
    b, _ = await people(ben)  # ben opens a page: online
    game = await database_sync_to_async(actions.start_game)(black=(ben.player_id, "ben"),
                                                            white=(cat.player_id, "cat"))
    await a.send_json_to({"type": "follow", "name": "cat"})
    listed = await answer(a)
    assert listed["players"] == [{"name": "ben", "online": True, "url": f"/g/{game.id}/"},
                                 {"name": "cat", "online": False, "url": f"/g/{game.id}/"}]
    await a.send_json_to({"type": "unfollow", "name": "ben"})
    assert [p["name"] for p in (await answer(a))["players"]] == ["cat"]
    for page in (a, b):
        await page.disconnect()


async def test_refused_follows_store_nothing():
    ann, _ben = await accounts("ann", "ben")
    a, _ = await people(ann)
    for message, code in (({"name": "nobody"}, "no_such_player"), ({"name": "ann"}, "self_follow"),
                          ({"name": 7}, "no_such_player")):
        await a.send_json_to({"type": "follow", **message})
        assert (await answer(a))["code"] == code, message
    assert await database_sync_to_async(Follow.objects.count)() == 0
    await a.disconnect()


async def test_the_count_of_games_waiting_for_ones_move_comes_with_the_page():
    ann, ben = await accounts("ann", "ben")
    await database_sync_to_async(actions.start_game)(black=(ann.player_id, "ann"), white=(ben.player_id, "ben"),
                                                     time_control="1d")
    comm = WebsocketCommunicator(application, "/ws/people/", headers=ann.headers())
    assert (await comm.connect(timeout=5))[0]
    kinds = {}
    for _ in range(4):
        message = await hear(comm)
        kinds[message["type"]] = message
    assert kinds["turns"] == {"type": "turns", "count": 1}
    await comm.disconnect()


async def test_a_session_holds_its_most_people_sockets(settings):
    settings.PEOPLE_SOCKETS_PER_SESSION = 2
    [ann] = await accounts("ann")
    first, _ = await people(ann)
    second, _ = await people(ann)
    third = WebsocketCommunicator(application, "/ws/people/", headers=ann.headers())
    await third.connect(timeout=5)
    assert (await third.receive_output(timeout=5)) == {"type": "websocket.close", "code": 4429}
    await first.disconnect()
    again, _ = await people(ann)  # a closed page frees its place
    for comm in (second, again):
        await comm.disconnect()
