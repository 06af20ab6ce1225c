"""A log-in ends the guest identity (game/accounts/identity.py, docs/accounts.md): a copy of the
guest's cookie from before the log-in cannot seek, is paired as no one, holds none of the seats
and gets a new guest id at its next page; the seats move once, at the log-in.  Real database,
Redis, lobby and game sockets."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from django.db.models import Q

from game.lobby import pools as matchmaking
from game.models import Account, Game
from game.round import actions
from tests.web.conftest import recv
from tests.web.test_accounts import browser_of, create_game, guest, log_in, log_out, sign_up

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_rate_limits")]


@pytest.fixture(autouse=True)
def own_pools(settings):
    """Seek pools of this test's own."""
    settings.MATCHMAKING_PREFIX = f"{settings.MATCHMAKING_PREFIX}-guests-{uuid.uuid4().hex[:8]}"


def account_and_guest(username: str):
    """An account ``username`` (signed up, logged out) and a browser that is a guest now: the
    browser and a copy of its guest cookie, taken before it logs in."""
    owner = guest()
    sign_up(owner, username)
    log_out(owner)
    browser = guest()
    return browser, browser_of(browser, "someone")


def seats_of(player_id: str) -> int:
    return Game.objects.filter(Q(black_player=player_id) | Q(white_player=player_id)).count()


def test_a_copy_of_the_guest_cookie_cannot_seek_after_the_log_in():
    """The attack as filed: a copy of the cookie seeks after its browser logged in, a stranger
    seeks too; nothing pairs them, and no game is made with the account in a seat."""
    from tests.web.test_matchmaking import next_message, open_lobby, seek

    victim, stolen = account_and_guest("Vera")
    assert log_in(victim, "Vera").status_code == 302
    vera = Account.objects.get(user__username="Vera")
    stranger = guest()

    async def scenario():
        thief = await open_lobby(stolen)
        other = await open_lobby(browser_of(stranger, "otto"))
        try:
            await thief.send_json_to({"type": "seek", "pool": "untimed", "name": "Vera"})
            refused = await next_message(thief)
            assert refused["type"] == "error" and refused["code"] == "session_ended", refused
            closing = await thief.receive_output(timeout=5)
            assert closing == {"type": "websocket.close", "code": 4409}
            assert (await seek(other, pool="untimed", name="otto"))["waiting"] == 1   # alone in the pool
        finally:
            for comm in (thief, other):
                await comm.disconnect()
            await matchmaking.close_all()

    asyncio.run(scenario())
    assert seats_of(vera.player_id) == 0 and seats_of(stolen.player_id) == 0


def test_a_seek_made_before_the_log_in_is_paired_as_no_one():
    """The guest sought in another tab before logging in: when that seek meets someone, it fails
    (no game is made as the account, nor as the ended guest id) and the other seeker waits on."""
    from tests.web.test_matchmaking import next_message, open_lobby, seek

    visitor, before = account_and_guest("Hana")
    hana = Account.objects.get(user__username="Hana")
    stranger, newcomer = guest(), browser_of(guest(), "lena")

    async def scenario():
        tab = await open_lobby(before)
        other = await open_lobby(browser_of(stranger, "otto"))
        try:
            assert (await seek(tab, pool="untimed", name="someone"))["waiting"] == 1
            assert (await asyncio.to_thread(log_in, visitor, "Hana")).status_code == 302
            await seek(other, pool="untimed", name="otto")
            failed = await next_message(tab, timeout=10)
            assert failed["type"] == "error" and failed["code"] == "pairing_failed", failed
            # The stranger's seek went back in the pool: it meets the next one who comes.
            late = await open_lobby(newcomer)
            await late.send_json_to({"type": "seek", "pool": "untimed", "name": "lena"})
            assert (await next_message(other, timeout=10))["type"] == "paired"
            await late.disconnect()
        finally:
            for comm in (tab, other):
                await comm.disconnect()
            await matchmaking.close_all()

    asyncio.run(scenario())
    assert seats_of(hana.player_id) == 0 and seats_of(before.player_id) == 0


def test_the_seats_move_once_and_the_old_cookie_is_a_new_guest(alice):
    """The guest's seat moves at the log-in; a copy of the guest cookie then holds no seat, cannot
    move, and its next page gives it a new guest id, so the games it makes or joins are that new
    guest's, never the account's nor the old id's."""
    from django.conf import settings
    from django.test import Client

    visitor, before = account_and_guest("Ida")
    game = create_game(visitor)                                  # the guest is Black, to move first
    actions.join_game(game.id, alice.player_id, "alice")
    assert log_in(visitor, "Ida").status_code == 302
    ida = Account.objects.get(user__username="Ida")
    game.refresh_from_db()
    assert game.black_player == ida.player_id

    async def scenario():
        tab, snap = await before.connect(game.id)                # the copy of the cookie only watches
        assert snap["you"] is None
        await tab.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
        refused = await recv(tab)
        assert refused["type"] == "error" and refused["code"] == "not_seated", refused
        await tab.disconnect()

    asyncio.run(scenario())
    copy = Client()
    copy.cookies[settings.SESSION_COOKIE_NAME] = before.cookie
    made = create_game(copy, color="W")
    other = create_game(guest())
    assert copy.post(f"/g/{other.id}/join", {"name": ""}).status_code == 302
    other.refresh_from_db()
    new_id = copy.session["player_id"]
    assert new_id not in (before.player_id, ida.player_id)
    assert made.white_player == new_id and other.white_player == new_id
    assert seats_of(before.player_id) == 0 and seats_of(ida.player_id) == 1
