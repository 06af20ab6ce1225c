"""A room of the game chat cannot be flooded from one client address with free guest sessions, and a
line cannot pile marks on a letter (real Redis, real database, the site's ASGI stack with the
client's address as Daphne sets it: game/round/chat.py)."""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from checkers_site.asgi import application
from game.models import ChatLine
from game.round import chat
from tests.web.conftest import make_browser, recv
from tests.web.test_chat import start_game

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

GUEST_SESSIONS = 30


def an_address() -> str:
    """A client address of this test alone (the counts live in Redis and outlast a test)."""
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"


async def spectator(game_id: str, address: str) -> WebsocketCommunicator:
    """A game socket of a new guest session from ``address``, past its snapshot."""
    comm = WebsocketCommunicator(application, f"/ws/game/{game_id}/",
                                 headers=make_browser(f"g{uuid.uuid4().hex[:6]}").headers())
    comm.scope["client"] = [address, 50000]
    connected, _ = await comm.connect(timeout=5)
    assert connected
    assert (await recv(comm))["type"] == "snapshot"
    return comm


async def answer_to(comm: WebsocketCommunicator, text: str) -> dict:
    """Send ``text`` to the spectators' room; the sender's own answer: its line, or its error
    (lines of the other sockets, which every spectator reads, are passed over)."""
    await comm.send_json_to({"type": "chat", "room": "spectators", "text": text})
    while True:
        message = await recv(comm)
        if message["type"] == "error" or (message["type"] == "chat" and message["line"]["text"] == text):
            return message


def stored_lines(game_id: str) -> list[str]:
    return list(ChatLine.objects.filter(game_id=game_id).order_by("id").values_list("text", flat=True))


async def test_guest_sessions_of_one_address_cannot_flood_a_room(alice, bob):
    game_id = await start_game(alice, bob)
    crowd_address = an_address()
    crowd = [await spectator(game_id, crowd_address) for _ in range(GUEST_SESSIONS)]
    answers = [await answer_to(comm, f"spam {index}") for index, comm in enumerate(crowd)]
    said = [a["line"]["text"] for a in answers if a["type"] == "chat"]
    refused = [a for a in answers if a["type"] == "error"]
    assert len(said) == chat.RATE_ADDRESS_LINES
    assert {a["code"] for a in refused} == {"chat_too_fast"} and len(refused) == GUEST_SESSIONS - len(said)
    assert await database_sync_to_async(stored_lines)(game_id) == said
    # Someone else, from another address, still speaks in the room.
    other = await spectator(game_id, an_address())
    assert (await answer_to(other, "hello from elsewhere"))["type"] == "chat"
    for comm in (*crowd, other):
        await comm.disconnect()


async def test_a_letter_carries_only_so_many_marks(alice, bob):
    game_id = await start_game(alice, bob)
    comm = await spectator(game_id, an_address())
    zalgo = "a" + "\u0301\u0316\u0327" * 46 + "\u0301"        # one letter, 139 combining marks
    refused = await answer_to(comm, zalgo)
    assert refused["type"] == "error" and refused["code"] == "chat_invalid", refused
    assert refused["message"]
    fine = "Tiếng Việt, ṩ, 1\ufe0f\u20e3, \U0001f44d\U0001f3fd"   # real accents, keycaps, skin tones
    assert (await answer_to(comm, fine))["type"] == "chat"
    assert await database_sync_to_async(stored_lines)(game_id) == [fine]
    await comm.disconnect()
