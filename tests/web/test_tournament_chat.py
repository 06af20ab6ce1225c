"""A tournament's chat over its real socket (Channels' communicator, the real database and Redis):
an entrant's line reaches every viewer, an outsider reads but may not write, bad frames and
refused lines are answered to their sender only and store nothing, the game chat's rates hold,
a new socket gets the history, and a flood of frames closes the socket."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils import timezone

from checkers_site.asgi import application
from game.models import Block
from game.round import chat as game_chat
from game.tournaments import arena, socket
from game.tournaments.models import ChatLine
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs
from tests.web.test_accounts import browser_of, guest, log_out, sign_up

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_rate_limits")]


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


async def opened(tournament_id: str, browser) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, f"/ws/tournament/{tournament_id}/", headers=browser.headers())
    assert (await comm.connect())[0]
    assert (await comm.receive_json_from(timeout=5))["type"] == "standings"
    return comm


async def an_arena(*entrants) -> str:
    host = await sync_to_async(account)("host")
    tournament = await sync_to_async(arena.create)(host, "Chatty", "3+0", 30, timezone.now(), rated=False)
    for browser in entrants:
        await sync_to_async(arena.join)(tournament.id, browser.player_id, browser.name)
    return tournament.id


async def test_an_entrants_line_reaches_every_viewer_and_an_outsider_only_reads(alice, carol):
    tournament_id = await an_arena(alice)
    writer, reader = await opened(tournament_id, alice), await opened(tournament_id, carol)
    await writer.send_json_to({"type": "chat", "text": "  Good luck all!  "})
    for comm in (writer, reader):
        message = await comm.receive_json_from(timeout=5)
        assert message["type"] == "chat" and [(line["name"], line["text"]) for line in message["lines"]] == [
            ("alice", "Good luck all!")]
        assert alice.player_id not in str(message)
    await reader.send_json_to({"type": "chat", "text": "let me in"})
    assert (await reader.receive_json_from(timeout=5))["code"] == "chat_not_allowed"
    await writer.send_json_to({"type": "chat", "text": "second"})
    # the writer's next message is its own second line: the outsider's refusal went to the outsider only
    assert (await writer.receive_json_from(timeout=5))["lines"][0]["text"] == "second"
    assert (await reader.receive_json_from(timeout=5))["lines"][0]["text"] == "second"
    late = WebsocketCommunicator(application, f"/ws/tournament/{tournament_id}/", headers=carol.headers())
    assert (await late.connect())[0]
    assert (await late.receive_json_from(timeout=5))["type"] == "standings"
    history = await late.receive_json_from(timeout=5)
    assert [line["text"] for line in history["lines"]] == ["Good luck all!", "second"]
    page = await sync_to_async(Client().get)(f"/tournaments/{tournament_id}")
    assert "Good luck all!" in page.content.decode() and "let me in" not in page.content.decode()
    for comm in (writer, reader, late):
        await comm.disconnect()


@pytest.mark.parametrize(("frame", "code"), [
    ("not json", "bad_message"),
    ('{"type": "join"}', "unknown_type"),
    ('["chat"]', "bad_message"),
    ('{"type": "chat", "text": 5}', "bad_message"),
    ('{"type": "chat", "text": "' + "x" * (game_chat.MAX_CHARS + 1) + '"}', "chat_too_long"),
    ('{"type": "chat", "text": "a\\u202eb"}', "chat_invalid"),
    ('{"type": "chat", "text": "   "}', "chat_empty"),
    ('{"type": "chat", "text": "' + "y" * 3000 + '"}', "too_large"),
])
async def test_bad_frames_are_refused_to_their_sender_and_store_nothing(alice, carol, frame, code):
    tournament_id = await an_arena(alice)
    writer, reader = await opened(tournament_id, alice), await opened(tournament_id, carol)
    await writer.send_to(text_data=frame)
    refused = await writer.receive_json_from(timeout=5)
    assert (refused["type"], refused["code"]) == ("error", code)
    assert await reader.receive_nothing(timeout=0.2)
    assert not await sync_to_async(ChatLine.objects.exists)()
    for comm in (writer, reader):
        await comm.disconnect()


async def test_the_game_chats_rate_holds_and_a_flood_closes_the_socket(alice):
    tournament_id = await an_arena(alice)
    comm = await opened(tournament_id, alice)
    for index in range(game_chat.RATE_LINES):
        await comm.send_json_to({"type": "chat", "text": f"line {index}"})
        assert (await comm.receive_json_from(timeout=5))["type"] == "chat"
    await comm.send_json_to({"type": "chat", "text": "one too many"})
    assert (await comm.receive_json_from(timeout=5))["code"] == "chat_too_fast"
    assert await sync_to_async(ChatLine.objects.count)() == game_chat.RATE_LINES
    for _ in range(socket.FRAMES - game_chat.RATE_LINES - 1):
        await comm.send_to(text_data="{}")
        assert (await comm.receive_json_from(timeout=5))["code"] == "unknown_type"
    await comm.send_to(text_data="{}")
    assert (await comm.receive_json_from(timeout=5))["code"] == "too_many_messages"
    assert (await comm.receive_output(timeout=5))["code"] == socket.CLOSE_FLOOD


def test_a_socket_of_a_browser_that_logged_out_writes_nothing():
    client = guest()
    sign_up(client, "Vera")
    tab = browser_of(client, "Vera")

    async def scenario():
        tournament_id = await an_arena(tab)
        comm = await opened(tournament_id, tab)
        await comm.send_json_to({"type": "chat", "text": "hello"})
        assert (await comm.receive_json_from(timeout=5))["type"] == "chat"
        await sync_to_async(log_out)(client)
        await comm.send_json_to({"type": "chat", "text": "still me?"})
        assert (await comm.receive_json_from(timeout=5))["code"] == "session_ended"
        assert await sync_to_async(ChatLine.objects.count)() == 1
        await comm.disconnect()

    async_to_sync(scenario)()


async def test_a_viewer_who_blocks_the_writer_does_not_receive_their_lines(alice, bob, carol):
    tournament_id = await an_arena(alice, bob)
    await sync_to_async(Block.objects.create)(blocker=carol.player_id, blocked=alice.player_id)
    blocker, other = await opened(tournament_id, carol), await opened(tournament_id, bob)
    for writer, text in ((alice, "from alice"), (bob, "from bob")):
        comm = await opened(tournament_id, writer) if writer is alice else other
        await comm.send_json_to({"type": "chat", "text": text})
        if writer is alice:
            assert (await comm.receive_json_from(timeout=5))["lines"][0]["text"] == "from alice"
            await comm.disconnect()
    assert [(await other.receive_json_from(timeout=5))["lines"][0]["text"] for _ in range(2)] == [
        "from alice", "from bob"]
    # the blocker's next line is bob's: alice's never came
    assert (await blocker.receive_json_from(timeout=5))["lines"][0]["text"] == "from bob"
    late = WebsocketCommunicator(application, f"/ws/tournament/{tournament_id}/", headers=carol.headers())
    assert (await late.connect())[0]
    assert (await late.receive_json_from(timeout=5))["type"] == "standings"
    assert [line["text"] for line in (await late.receive_json_from(timeout=5))["lines"]] == ["from bob"]
    for comm in (blocker, other, late):
        await comm.disconnect()
