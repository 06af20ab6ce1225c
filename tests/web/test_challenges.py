"""Challenges by name over the people socket: real sockets, channel layer and database.

Accept makes the game through create and join, and every page of both players is sent there;
decline carries a reason; limits, expiry and races store nothing wrong; refusals go to the sender.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from django.utils import timezone

from checkers_site.asgi import application
from game.errors import ActionError
from game.models import Game
from game.people import challenges
from game.people.models import Challenge
from game.round import actions
from tests.web.conftest import make_browser
from tests.web.test_rated_pools import account_browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def people(browser) -> tuple[WebsocketCommunicator, dict]:
    """Open the people socket of ``browser``; return it and its first ``challenges`` message (its
    ``turns`` and ``notifications`` kept as ``comm.opened_with``)."""
    comm = WebsocketCommunicator(application, "/ws/people/", headers=browser.headers())
    connected, _ = await comm.connect(timeout=5)
    assert connected
    first = await comm.receive_json_from(timeout=5)
    assert first["type"] == "challenges", first
    following, turns = await comm.receive_json_from(timeout=5), await comm.receive_json_from(timeout=5)
    assert (following["type"], turns["type"]) == ("following", "turns"), (following, turns)
    bell = await comm.receive_json_from(timeout=5)
    assert bell["type"] == "notifications", bell
    comm.opened_with = {"turns": turns, "notifications": bell}
    return comm, first


#: What the bell and the "My games" badge are sent (tests/web/test_notifications.py), passed over by :func:`answer`.
BELL_AND_BADGE = frozenset({"notification", "unread", "turns"})


async def answer(comm) -> dict:
    """The next message on ``comm`` other than the bell's and the badge's (:data:`BELL_AND_BADGE`)."""
    while True:
        message = await comm.receive_json_from(timeout=5)
        if message["type"] not in BELL_AND_BADGE:
            return message


async def hear(comm) -> dict:
    """The next message on ``comm``, whatever it is."""
    return await comm.receive_json_from(timeout=5)


async def accounts(*names: str):
    return [await database_sync_to_async(account_browser)(name, 1500.0) for name in names]


async def test_a_challenge_reaches_every_page_of_its_player_and_accept_sends_both_to_one_game():
    ann, ben = await accounts("ann", "ben")
    a, _ = await people(ann)
    b1, _ = await people(ben)
    b2, _ = await people(ben)
    await a.send_json_to({"type": "challenge", "to": "BEN", "control": "5+3", "color": "W", "rated": True,
                          "ballot": True})
    sent = await answer(a)
    assert sent["type"] == "challenge_sent" and sent["to"] == "ben" and sent["rated"] and sent["ballot"]
    for page in (b1, b2):
        news = await answer(page)
        assert (news["type"], news["id"], news["from"], news["control"]) == ("challenge", sent["id"], "ann", "5+3")
    await b2.send_json_to({"type": "accept", "id": sent["id"]})
    urls = {(await answer(page))["url"] for page in (a, b1, b2)}
    assert len(urls) == 1
    game = await database_sync_to_async(Game.objects.get)(pk=urls.pop().split("/")[2])
    assert (game.white_name, game.black_name, game.time_control) == ("ann", "ben", "5+3")
    assert game.rated and game.ballot is not None and game.status == Game.Status.ACTIVE
    for page in (a, b1, b2):
        await page.disconnect()


async def test_decline_with_a_reason_tells_both_and_the_open_ones_come_on_connect():
    ann, ben = await accounts("ann", "ben")
    a, _ = await people(ann)
    await a.send_json_to({"type": "challenge", "to": "ben", "control": "1+0", "color": "random"})
    sent = await answer(a)
    b, first = await people(ben)  # not online when it was sent: it comes with the page
    assert [c["id"] for c in first["incoming"]] == [sent["id"]]
    await b.send_json_to({"type": "decline", "id": sent["id"], "reason": "bogus"})
    assert (await answer(b))["code"] == "bad_reason"
    await b.send_json_to({"type": "decline", "id": sent["id"], "reason": "too_fast"})
    for page in (a, b):
        gone = await answer(page)
        assert (gone["type"], gone["status"], gone["reason"], gone["by"]) == ("challenge_gone", "declined",
                                                                              "too_fast", "ben")
    await b.send_json_to({"type": "accept", "id": sent["id"]})
    assert (await answer(b))["code"] == "challenge_gone"
    assert await database_sync_to_async(Game.objects.count)() == 0
    for page in (a, b):
        await page.disconnect()


async def test_refusals_go_to_the_sender_only_and_store_nothing():
    ann, ben = await accounts("ann", "ben")
    a, _ = await people(ann)
    b, _ = await people(ben)
    for message, code in (({"to": "nobody", "control": "5+0", "color": "B"}, "no_such_player"),
                          ({"to": "ann", "control": "5+0", "color": "B"}, "self_challenge"),
                          ({"to": "ben", "control": "9x", "color": "B"}, "bad_time_control"),
                          ({"to": "ben", "control": "5+0", "color": "red"}, "bad_color"),
                          ({"to": "ben", "control": "untimed", "color": "B", "rated": True}, "unrated_control"),
                          ({"to": "ben", "control": 5, "color": "B"}, "bad_message"),
                          ({"to": "ben", "control": "5+0", "color": "B", "rated": "yes"}, "bad_message"),
                          ({"to": "ben", "control": "5+0", "color": "B", "ballot": 1}, "bad_message")):
        await a.send_json_to({"type": "challenge", **message})
        assert (await answer(a))["code"] == code, message
    await b.send_json_to({"type": "accept", "id": "f" * 32})
    assert (await answer(b))["code"] == "challenge_gone"
    assert await b.receive_nothing(timeout=0.1)
    assert await database_sync_to_async(Challenge.objects.count)() == 0
    guest = WebsocketCommunicator(application, "/ws/people/", headers=make_browser("gus").headers())
    await guest.connect(timeout=5)
    assert (await guest.receive_output(timeout=5))["code"] == 4401
    for page in (a, b):
        await page.disconnect()


async def test_at_most_three_open_one_per_player_and_expired_ones_count_no_more():
    names = ["ann", "ben", "cat", "dan", "eve"]
    ann, *_ = await accounts(*names)
    a, _ = await people(ann)
    for name in names[1:4]:
        await a.send_json_to({"type": "challenge", "to": name, "control": "10+0", "color": "B"})
        assert (await answer(a))["type"] == "challenge_sent"
    await a.send_json_to({"type": "challenge", "to": "ben", "control": "3+0", "color": "B"})
    assert (await answer(a))["code"] == "already_challenged"
    await a.send_json_to({"type": "challenge", "to": "eve", "control": "10+0", "color": "B"})
    assert (await answer(a))["code"] == "too_many_challenges"
    past = timezone.now() - timedelta(seconds=1)
    await database_sync_to_async(lambda: Challenge.objects.filter(challenged_name="ben").update(expires_at=past))()
    await a.send_json_to({"type": "challenge", "to": "eve", "control": "10+0", "color": "B"})
    assert (await answer(a))["type"] == "challenge_sent"
    expired = await database_sync_to_async(Challenge.objects.get)(challenged_name="ben")
    with pytest.raises(ActionError) as refused:
        await database_sync_to_async(challenges.accept)(expired.id, expired.challenged)
    assert refused.value.code == "challenge_gone"
    await a.disconnect()


async def test_an_accept_racing_a_cancel_makes_one_outcome():
    ann, ben = await accounts("ann", "ben")
    a, _ = await people(ann)
    b, _ = await people(ben)
    await a.send_json_to({"type": "challenge", "to": "ben", "control": "untimed", "color": "random"})
    sent = await answer(a)
    await answer(b)
    await asyncio.gather(a.send_json_to({"type": "cancel", "id": sent["id"]}),
                         b.send_json_to({"type": "accept", "id": sent["id"]}))
    first = await answer(a)
    if first["type"] in ("go", "error"):     # accepted first: the cancel is refused, to ann only
        seen = sorted([first, await answer(a)], key=lambda m: m["type"])
        assert [m["type"] for m in seen] == ["error", "go"] and seen[0]["code"] == "challenge_gone"
        assert (await answer(b))["type"] == "go"
    else:                                    # cancelled first: the accept is refused, to ben only
        assert first["type"] == "challenge_gone"
        seen = sorted([await answer(b), await answer(b)], key=lambda m: m["type"])
        assert [m["type"] for m in seen] == ["challenge_gone", "error"] and seen[1]["code"] == "challenge_gone"
    stored = await database_sync_to_async(Challenge.objects.get)(pk=sent["id"])
    games = await database_sync_to_async(Game.objects.count)()
    assert (stored.status, games) in (("cancelled", 0), ("accepted", 1))
    for page in (a, b):
        await page.disconnect()


async def test_the_game_page_links_a_signed_in_viewer_to_challenge_the_accounts_seated():
    ann, ben = await accounts("ann", "ben")

    def pages() -> tuple[str, str]:
        game = actions.start_game(black=(ann.player_id, "ann"), white=(ben.player_id, "ben"))
        signed_in = Client()
        signed_in.cookies[settings.SESSION_COOKIE_NAME] = ann.cookie
        return (signed_in.get(f"/g/{game.id}/").content.decode(), Client().get(f"/g/{game.id}/").content.decode())

    mine, guests = await database_sync_to_async(pages)()
    assert '<a href="/@/ben#challenge-panel" class="challenge-link">Challenge ben</a>' in mine
    assert "Challenge ann" not in mine and 'id="challenge-links"' not in guests
