"""A tournament page that opens while its player's first move of a game is due is sent to that
game (``paired``), as the pairing's own message would have sent it: the page reloads as the
tournament starts, and the message of a pairing made meanwhile reaches no socket of the player.
Once the player has moved, a page that opens is not sent there again; a spectator's page never is."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.urls import reverse
from django.utils import timezone

from checkers_site.asgi import application
from game.models import Game
from game.round import actions
from game.tournaments import arena, jobs
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs
from tests.web.conftest import make_browser

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


async def opened_page(tournament_id: str, browser) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, f"/ws/tournament/{tournament_id}/", headers=browser.headers())
    assert (await comm.connect(timeout=5))[0]
    assert (await comm.receive_json_from(timeout=5))["type"] == "standings"
    return comm


async def next_message(page: WebsocketCommunicator) -> dict:
    """The page's next message after what it was sent on opening: a bad chat line is answered with
    an ``error`` to it, after anything the socket had sent before (a ``paired`` among them)."""
    await page.send_json_to({"type": "chat", "text": 5})
    return await page.receive_json_from(timeout=5)


def play(game_id: str, text: str) -> None:
    game = Game.objects.get(pk=game_id)
    actions.play_move(game.id, game.player(game.turn), text, game.version)


async def test_a_page_opened_after_the_pairing_is_sent_to_the_game_until_its_player_has_moved():
    alice, bob, carol = (make_browser(name) for name in ("alice", "bob", "carol"))
    tournament = await sync_to_async(arena.create)(await sync_to_async(account)("host"), "Casual", "3+0", 30,
                                                   timezone.now(), rated=False)
    for browser in (alice, bob):
        await sync_to_async(arena.join)(tournament.id, browser.player_id, browser.name)
    await sync_to_async(jobs.tick)(tournament.id)      # starts and pairs alice and bob: no page open
    game_id = (await sync_to_async(arena.current_pairing)(tournament.id, alice.player_id)).game_id
    game = await sync_to_async(Game.objects.get)(pk=game_id)
    black, white = sorted((alice, bob), key=lambda b: b.player_id != game.black_player)
    expected = {"type": "paired", "game": game_id, "url": reverse("game", args=[game_id])}

    pages = [await opened_page(tournament.id, b) for b in (black, white)]
    assert [await page.receive_json_from(timeout=5) for page in pages] == [expected, expected]
    watching = await opened_page(tournament.id, carol)          # not an entrant
    await sync_to_async(play)(game_id, "11-15")                 # Black's first move
    again = [await opened_page(tournament.id, b) for b in (black, white)]
    assert (await next_message(again[0]))["code"] == "bad_message"   # Black has moved: not sent
    assert await again[1].receive_json_from(timeout=5) == expected   # White's first move is still due
    await sync_to_async(play)(game_id, "23-19")
    later = await opened_page(tournament.id, white)
    for page in (later, watching):
        assert (await next_message(page))["code"] == "bad_message"
    for page in (*pages, *again, later, watching):
        await page.disconnect()
