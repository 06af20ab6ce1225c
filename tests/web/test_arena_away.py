"""An arena player gone when their game ends, over the real sockets: one who moved, then closed
both the game's page and the arena's, loses on time and is paused (``away``), not paired again;
one who left the game's page for the arena's page is not; the gone player's arena page opening
again brings them back into the pairing."""

from __future__ import annotations

from datetime import timedelta

import django_rq
import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from checkers_site.asgi import application
from game.models import Game
from game.round import actions
from game.tournaments import arena, jobs
from game.tournaments.models import Entry, Pairing
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs
from tests.web.conftest import make_browser

pytestmark = pytest.mark.django_db(transaction=True)

OPENING = ["11-15", "23-19", "8-11", "22-17"]


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


def work() -> int:
    """Run the jobs queued on the ``tournaments`` queue (the game's end: scored, then the pairing),
    each as a worker would (RQ's workers need the main thread, which the socket tests' loop holds);
    returns how many ran."""
    queue = django_rq.get_queue(jobs.QUEUE)
    ran = 0
    for job in queue.get_jobs():
        queue.remove(job)
        job.perform()
        ran += 1
    return ran


def opening_then_black_out_of_time(game_id: str) -> Game:
    for text in OPENING:
        game = Game.objects.get(pk=game_id)
        actions.play_move(game.id, game.player(game.turn), text, game.version)
    Game.objects.filter(pk=game_id).update(turn_started_at=timezone.now() - timedelta(minutes=4))
    actions.check_clock(game_id)
    return Game.objects.get(pk=game_id)


async def arena_page(tournament_id: str, browser) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(application, f"/ws/tournament/{tournament_id}/", headers=browser.headers())
    assert (await comm.connect(timeout=5))[0]
    assert (await comm.receive_json_from(timeout=5))["type"] == "standings"
    return comm


def seated(tournament_id: str, player_id: str) -> bool:
    return arena.current_pairing(tournament_id, player_id) is not None


async def test_a_player_gone_when_their_game_ends_is_paused_until_their_arena_page_opens_again():
    browsers = [make_browser(name) for name in ("alice", "bob")]
    tournament = await sync_to_async(arena.create)(await sync_to_async(account)("host"), "Casual", "3+0", 30,
                                                   timezone.now(), rated=False)
    for browser in browsers:
        await sync_to_async(arena.join)(tournament.id, browser.player_id, browser.name)
    await sync_to_async(jobs.tick)(tournament.id)              # starts and pairs alice and bob
    game_id = (await sync_to_async(arena.current_pairing)(tournament.id, browsers[0].player_id)).game_id
    game = await sync_to_async(Game.objects.get)(pk=game_id)
    gone, stays = sorted(browsers, key=lambda b: b.player_id != game.black_player)   # Black runs out
    pages = {b.name: await arena_page(tournament.id, b) for b in browsers}
    boards = {b.name: (await b.connect(game_id))[0] for b in browsers}
    for name in (gone.name, stays.name):
        await boards[name].disconnect()                        # both leave the game's page ...
    await pages[gone.name].disconnect()                        # ... Black the arena's page too
    for name in ("carol", "dave"):                             # two more players, free
        await sync_to_async(arena.join)(tournament.id, await sync_to_async(account)(name), name)
    game = await sync_to_async(opening_then_black_out_of_time)(game_id)
    assert (game.status, game.result) == (Game.Status.FINISHED, "0-1")
    assert await sync_to_async(work)() == 1                    # game_over: scored, the free players paired
    entry = await sync_to_async(Entry.objects.get)(tournament=tournament, player_id=gone.player_id)
    assert (entry.away, entry.withdrawn, entry.free_since) == (True, False, None)
    assert not await sync_to_async(seated)(tournament.id, gone.player_id)
    assert await sync_to_async(seated)(tournament.id, stays.player_id)   # on the arena's page: paired
    assert await sync_to_async(Pairing.objects.filter(tournament=tournament, scored=False).count)() == 1
    back = await arena_page(tournament.id, gone)               # the arena's page again
    entry = await sync_to_async(Entry.objects.get)(pk=entry.pk)
    assert not entry.away and entry.free_since is not None
    await sync_to_async(jobs.pair_arena)(tournament.id)
    assert await sync_to_async(seated)(tournament.id, gone.player_id)
    for comm in (back, pages[stays.name]):
        await comm.disconnect()
