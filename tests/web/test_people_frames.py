"""The people socket attacked: text PostgreSQL cannot store (a NUL, a lone surrogate) in each
field it looks up is refused to the sender (``bad_message``; ``no_such_player`` for a name to
follow), the socket still answering, nothing stored; a socket whose log-in ended (logged out in
another tab) acts no more for the account."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from game.models import Game
from game.people.models import Challenge, Follow
from tests.web.test_accounts import browser_of, guest, log_out, sign_up
from tests.web.test_challenges import accounts, answer, people

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

UNSTORABLE = ("be\x00n", "ben\ud800")


@pytest.mark.parametrize("text", UNSTORABLE)
async def test_unstorable_text_in_any_field_is_refused_to_the_sender_and_the_socket_goes_on(text):
    ann, _ben = await accounts("ann", "ben")
    a, _ = await people(ann)
    for message in ({"type": "challenge", "to": text, "control": "5+0", "color": "B"},
                    {"type": "challenge", "to": "ben", "control": "5+0", "color": text},
                    {"type": "accept", "id": text}, {"type": "decline", "id": text, "reason": "not_now"},
                    {"type": "cancel", "id": text}, {"type": "follow", "name": text},
                    {"type": "unfollow", "name": text}):
        await a.send_json_to(message)
        refused = await answer(a)
        code = "no_such_player" if "follow" in message["type"] else "bad_message"
        assert (refused["type"], refused["code"]) == ("error", code), (message, refused)
    await a.send_json_to({"type": "ping"})
    assert (await answer(a))["type"] == "pong"
    assert await database_sync_to_async(Challenge.objects.count)() == 0
    assert await database_sync_to_async(Follow.objects.count)() == 0
    await a.disconnect()


@pytest.mark.usefixtures("fresh_rate_limits")
async def test_a_people_socket_of_a_browser_that_logged_out_acts_no_more():
    client = await asyncio.to_thread(guest)
    await asyncio.to_thread(sign_up, client, "Rosa")
    tab = browser_of(client)
    (ben,) = await accounts("ben")
    r, _ = await people(tab)
    b, _ = await people(ben)
    await b.send_json_to({"type": "challenge", "to": "Rosa", "control": "5+0", "color": "B"})
    sent = await answer(b)
    assert (await answer(r))["type"] == "challenge"
    await asyncio.to_thread(log_out, client)
    await r.send_json_to({"type": "accept", "id": sent["id"]})
    refused = await answer(r)
    assert (refused["type"], refused["code"]) == ("error", "session_ended")
    assert await r.receive_output(timeout=5) == {"type": "websocket.close", "code": 4409}
    stored = await database_sync_to_async(Challenge.objects.get)(pk=sent["id"])
    assert stored.status == Challenge.Status.OPEN and await database_sync_to_async(Game.objects.count)() == 0
    await b.disconnect()
