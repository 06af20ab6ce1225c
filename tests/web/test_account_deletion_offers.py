"""Deleting an account leaves nothing of it for the others to meet: its pending rematch proposals
(and any proposal to it) lapse, a rematch with the deleted player is refused ``opponent_deleted``,
and its seeks in the lobby are withdrawn at once (game/accounts/deletion.py); its blocks, follows,
notifications, card and open challenges go, and the reports by and about it stay for the moderators
with nothing pointing to a live account (game/people/leaving.py); real database and Redis."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from game import players
from game.errors import ActionError
from game.lobby import pools as matchmaking
from game.models import Block, Game
from game.people import follows, notices
from game.people.models import Card, Challenge, Follow, Notification, Report
from game.round import actions, rematcher
from tests.web.conftest import recv
from tests.web.test_accounts import PASSWORD, browser_of, create_game, guest, sign_up
from tests.web.test_matchmaking import next_message, open_lobby, seek

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_rate_limits")]


def delete_account(client) -> None:
    assert client.post("/accounts/delete/", {"password": PASSWORD}).status_code == 302


@pytest.mark.parametrize("proposer", ["deleted", "opponent"])
def test_a_rematch_with_a_deleted_player_is_refused(alice, proposer):
    client = guest()
    sign_up(client, "Vera")
    vera = client.session["player_id"]
    game = create_game(client)
    actions.join_game(game.id, alice.player_id, "alice")
    actions.resign(game.id, alice.player_id)
    rematcher.offer_rematch(game.id, vera if proposer == "deleted" else alice.player_id)

    async def scenario():
        a, snap = await alice.connect(game.id)
        assert snap["state"]["rematch_offer"] == ("B" if proposer == "deleted" else "W")
        await asyncio.to_thread(delete_account, client)
        seats = await recv(a)
        assert seats["type"] == "seats" and seats["state"]["rematch_offer"] is None   # lapsed, on the board
        # The deleted seat says so (the page offers no rematch against it); alice's does not.
        assert seats["state"]["seats"]["B"] == {"name": "deleted player", "deleted": True}
        assert "deleted" not in seats["state"]["seats"]["W"]
        await a.send_json_to({"type": "rematch_accept" if proposer == "deleted" else "rematch_offer"})
        refused = await recv(a)
        assert refused["type"] == "error" and refused["code"] == "opponent_deleted", refused
        await a.disconnect()

    asyncio.run(scenario())
    game.refresh_from_db()
    assert game.rematch_offer == "" and game.next_game_id is None
    assert Game.objects.count() == 1
    with pytest.raises(ActionError) as exc:
        rematcher.offer_rematch(game.id, alice.player_id)
    assert exc.value.code == "opponent_deleted"


def test_a_deleted_accounts_seek_is_withdrawn(alice, settings):
    settings.MATCHMAKING_PREFIX = f"{settings.MATCHMAKING_PREFIX}-deleted-{uuid.uuid4().hex[:8]}"
    client = guest()
    sign_up(client, "Wynn")

    async def scenario():
        wynn = await open_lobby(browser_of(client))
        other = await open_lobby(alice)
        try:
            await seek(wynn, pool="untimed")
            await asyncio.to_thread(delete_account, client)
            cancelled = await next_message(wynn)
            assert cancelled["type"] == "cancelled" and cancelled["reason"] == "account_deleted", cancelled
            closing = await wynn.receive_output(timeout=5)
            assert closing["type"] == "websocket.close" and closing["code"] == 4409
            answer = await seek(other, pool="untimed")
            assert answer["waiting"] == 1                       # alone: Wynn's seek is gone
            for _ in range(5):                                  # and nobody is paired with it
                while not await other.receive_nothing(timeout=0.3):
                    assert (await other.receive_json_from(timeout=1))["type"] == "pool"
        finally:
            for comm in (wynn, other):
                await comm.disconnect()
            await matchmaking.close_all()

    asyncio.run(scenario())
    assert not Game.objects.exists()


def test_a_deleted_accounts_people_rows_go_and_its_reports_stay_without_it(alice, bob):
    client = guest()
    sign_up(client, "Xena")
    xena, ann, ben = client.session["player_id"], alice.player_id, bob.player_id
    game = create_game(client)
    actions.join_game(game.id, ann, "alice")
    actions.resign(game.id, ann)
    Block.objects.bulk_create([Block(blocker=xena, blocked=ann), Block(blocker=ben, blocked=xena),
                               Block(blocker=ann, blocked=ben)])
    Follow.objects.bulk_create([Follow(follower=xena, followed=ann), Follow(follower=ben, followed=xena),
                                Follow(follower=ann, followed=ben)])
    notices.add(xena, "challenge", "alice", "/games/mine")
    kept_notice = notices.add(ann, "challenge", "Xena", "/games/mine")
    Card.objects.bulk_create([Card(player_id=xena, country="FR"), Card(player_id=ann, country="ES")])
    soon = timezone.now() + timedelta(minutes=5)
    Challenge.objects.bulk_create([Challenge(id="c1", challenger=xena, challenger_name="Xena", challenged=ann,
                                             challenged_name="alice", expires_at=soon),
                                   Challenge(id="c2", challenger=ben, challenger_name="bob", challenged=xena,
                                             challenged_name="Xena", expires_at=soon)])
    filed = Report.objects.create(reporter=xena, reporter_name="Xena", reported=ann, reported_name="alice",
                                  reason="rude_chat", game=game.id, text="rude")
    about = Report.objects.create(reporter=ben, reporter_name="bob", reported=xena, reported_name="Xena",
                                  reason="cheating", game=game.id)

    delete_account(client)
    follows.seen(xena)   # a page of hers that closes afterwards makes no card again

    game.refresh_from_db()
    deleted = game.black_player
    assert players.is_deleted(deleted)
    assert list(Block.objects.values_list("blocker", "blocked")) == [(ann, ben)]
    assert list(Follow.objects.values_list("follower", "followed")) == [(ann, ben)]
    assert list(Notification.objects.values_list("id", flat=True)) == [kept_notice.id]
    assert list(Card.objects.values_list("player_id", flat=True)) == [ann]
    assert set(Challenge.objects.values_list("status", flat=True)) == {Challenge.Status.CANCELLED}
    filed.refresh_from_db()
    about.refresh_from_db()
    assert (filed.reporter, filed.reporter_name, filed.reported, filed.game, filed.text) == (
        deleted, "deleted player", ann, game.id, "rude")
    assert (about.reporter, about.reported, about.reported_name, about.game) == (ben, deleted, "Xena", game.id)
