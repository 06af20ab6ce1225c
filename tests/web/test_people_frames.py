"""The people socket fed text PostgreSQL cannot store (a NUL, a lone surrogate) in each field it
looks up: an error to the sender (``bad_message``; ``no_such_player`` for a name to follow), the socket still answering, nothing stored."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from game.people.models import Challenge, Follow
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
