"""A game socket acts for its session's log-in only while that log-in holds: after a password
change, a log-out or the account's deletion, a socket opened before is refused at its next action
and closed with 4409 (the page reconnects with the browser's cookie as it is now); real database
and Redis (game/accounts/identity.py, docs/protocol.md)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from django.test import Client

from game.round import actions
from tests.web.conftest import recv
from tests.web.test_accounts import PASSWORD, browser_of, create_game, guest, log_in, log_out, sign_up

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_rate_limits")]

NEW_PASSWORD = "another-long-password-8"


def change_password(client: Client) -> None:
    response = client.post("/accounts/password/change/", {"oldpassword": PASSWORD, "password1": NEW_PASSWORD,
                                                          "password2": NEW_PASSWORD})
    assert response.status_code == 302, response.content.decode()[-2000:]


async def refused_and_closed(comm, message: dict) -> None:
    """``message`` sent on ``comm`` is refused ``session_ended`` and the socket closed with 4409."""
    await comm.send_json_to(message)
    error = await recv(comm)
    assert error["type"] == "error" and error["code"] == "session_ended", error
    closing = await comm.receive_output(timeout=5)
    assert closing == {"type": "websocket.close", "code": 4409}


def test_a_socket_opened_before_a_password_change_is_refused(alice):
    client = guest()
    sign_up(client, "Quinn")
    game = create_game(client)                                # Quinn is Black, to move first
    actions.join_game(game.id, alice.player_id, "alice")
    before = browser_of(client)                               # a tab's cookie, before the change

    async def scenario():
        tab, snap = await before.connect(game.id)
        assert snap["you"] == "B"
        await asyncio.to_thread(change_password, client)
        await refused_and_closed(tab, {"type": "move", "move": "11-15", "v": snap["v"]})
        # The browser that changed the password is still signed in, and still the seat.
        again, snap = await browser_of(client).connect(game.id)
        assert snap["you"] == "B"
        await again.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
        assert (await recv(again))["type"] == "move"
        # The old cookie opens a socket that only watches.
        late, snap = await before.connect(game.id)
        assert snap["you"] is None
        for comm in (again, late):
            await comm.disconnect()

    asyncio.run(scenario())
    game.refresh_from_db()
    assert game.ply == 1


def test_a_socket_of_a_browser_that_logged_out_is_refused_and_another_devices_is_not(alice):
    client = guest()
    sign_up(client, "Rosa")
    game = create_game(client)
    actions.join_game(game.id, alice.player_id, "alice")
    laptop = Client()
    assert log_in(laptop, "Rosa").status_code == 302
    tab, other_device = browser_of(client), browser_of(laptop)

    async def scenario():
        t, snap = await tab.connect(game.id)
        d, _ = await other_device.connect(game.id)
        assert snap["you"] == "B"
        await asyncio.to_thread(log_out, client)
        await refused_and_closed(t, {"type": "chat", "room": "players", "text": "still me?"})
        await d.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
        assert (await recv(d))["type"] == "move"              # the laptop's log-in holds
        await d.disconnect()

    asyncio.run(scenario())
    game.refresh_from_db()
    assert game.ply == 1


def test_a_socket_of_a_deleted_account_is_refused(alice):
    client = guest()
    sign_up(client, "Sven")
    game = create_game(client)
    actions.join_game(game.id, alice.player_id, "alice")
    actions.resign(game.id, alice.player_id)                  # over: the rematch is what is left
    laptop = Client()
    assert log_in(laptop, "Sven").status_code == 302
    other_device = browser_of(laptop)

    async def scenario():
        d, snap = await other_device.connect(game.id)
        assert snap["you"] == "B"
        response = await asyncio.to_thread(client.post, "/accounts/delete/", {"password": PASSWORD})
        assert response.status_code == 302
        while True:                                           # the seats handed to the deleted player
            event = await recv(d)
            if event["type"] == "seats":
                break
        closing = await d.receive_output(timeout=5)
        assert closing == {"type": "websocket.close", "code": 4409}
        # A socket the old cookie opens now only watches, and may not offer a rematch.
        late, snap = await other_device.connect(game.id)
        assert snap["you"] is None
        await late.send_json_to({"type": "rematch_offer"})
        error = await recv(late)
        assert error["type"] == "error" and error["code"] == "not_seated"
        await late.disconnect()

    asyncio.run(scenario())


@pytest.mark.parametrize(("pool", "code", "closed"), [
    ("untimed", "session_ended", True),            # a casual seek: the page must reconnect as it is now
    ("5+0-rated", "rated_needs_account", False),   # a rated seek: the socket is a guest's for rated pools
])
def test_a_lobby_socket_of_a_browser_that_logged_out_seeks_no_more_as_the_account(settings, pool, code, closed):
    from game.lobby import pools as matchmaking
    from tests.web.test_matchmaking import next_message, open_lobby

    settings.MATCHMAKING_PREFIX = f"{settings.MATCHMAKING_PREFIX}-sessions-{uuid.uuid4().hex[:8]}"
    client = guest()
    sign_up(client, f"Tilda{uuid.uuid4().hex[:6]}")
    tab = browser_of(client)

    async def scenario():
        lobby = await open_lobby(tab)
        try:
            await asyncio.to_thread(log_out, client)
            await lobby.send_json_to({"type": "seek", "pool": pool})
            refused = await next_message(lobby)
            assert refused["type"] == "error" and refused["code"] == code, refused
            if closed:
                closing = await lobby.receive_output(timeout=5)
                assert closing["type"] == "websocket.close" and closing["code"] == 4409
        finally:
            await lobby.disconnect()
            await matchmaking.close_all()

    asyncio.run(scenario())
