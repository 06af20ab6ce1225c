"""TV: each channel shows the best-rated game in play of its time controls (the live list's order),
a game that ends is never shown again, and the pages: /tv, /tv/<category>, /tv/game, the home
page's TV board."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.core.cache import cache
from django.test import Client

from game.models import Game
from game.people import tv
from game.round import actions
from game.round.fanout import publish_sync

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_kept_channels():
    """No choice kept from another test's games (the cache outlives each test's database)."""
    cache.delete(tv._KEY)
    cache.delete(tv._LOCK_KEY)
    yield
    cache.delete(tv._KEY)


def start(black, white, control: str, ratings: tuple[int, int] | None = None) -> Game:
    game = actions.start_game(black=(black.player_id, black.name), white=(white.player_id, white.name),
                              time_control=control)
    if ratings:
        Game.objects.filter(pk=game.id).update(rated=True, black_rating=ratings[0], white_rating=ratings[1])
    return game


def picked(channel: str, after: str | None = None) -> str | None:
    game = tv.pick(channel, after)
    return game["id"] if game else None


def test_each_channel_shows_its_best_rated_game_in_play(alice, bob, carol):
    blitz_strong = start(alice, bob, "3+2", (1900, 1880))
    blitz_weak = start(bob, carol, "5+0", (1500, 1520))
    rapid = start(carol, alice, "10+5", (1700, 1700))
    untimed = start(alice, carol, "untimed")
    finished = start(bob, alice, "3+2", (2400, 2400))
    actions.resign(finished.id, bob.player_id)

    assert picked(tv.TOP) == blitz_strong.id
    assert picked("blitz") == blitz_strong.id
    assert picked("rapid") == rapid.id
    assert picked("bullet") is None and picked("classical") is None and picked("correspondence") is None
    kept = tv.channels()
    assert [g["id"] for g in kept[tv.TOP]] == [blitz_strong.id, rapid.id, blitz_weak.id]
    assert untimed.id not in {g["id"] for games in kept.values() for g in games}  # only past the top 3
    assert kept["blitz"][0] == {"id": blitz_strong.id, "black": "alice", "white": "bob", "control": "3+2",
                                "rating": 1890}
    with pytest.raises(KeyError):
        tv.pick("untimed")


def test_equal_ratings_are_shown_in_one_order_every_time(alice, bob, carol, monkeypatch):
    games = [start(black, white, "3+2", (1600, 1600))
             for black, white in ((alice, bob), (bob, carol), (carol, alice), (alice, carol), (bob, alice))]
    Game.objects.filter(pk__in=[g.id for g in games]).update(created_at=games[0].created_at)
    monkeypatch.setattr(tv, "CANDIDATES", len(games))
    assert [g["id"] for g in tv.read_channels()["blitz"]] == sorted(g.id for g in games)   # then by id


def test_when_the_game_shown_ends_the_channel_shows_the_next_best_never_the_ended_one(alice, bob, carol):
    a = start(alice, bob, "3+2", (1900, 1900))
    b = start(bob, carol, "3+2", (1800, 1800))
    c = start(carol, alice, "3+2", (1700, 1700))
    assert picked("blitz") == a.id   # and kept in the cache
    actions.resign(a.id, alice.player_id)   # game_ended drops the kept choice
    assert cache.get(tv._KEY) is None
    assert picked("blitz") == b.id
    assert picked("blitz", after=a.id) == b.id
    assert picked("blitz", after=b.id) == c.id   # b still in play: the page that showed it is sent on

    # A choice read just before the end and kept just after it still holds the ended game: the page
    # that showed it asks with after=<it> and is never sent back to it.
    actions.resign(b.id, bob.player_id)
    cache.set(tv._KEY, {**tv.read_channels(), "blitz": [{"id": b.id}, {"id": c.id}]}, tv.CACHE_S)
    assert picked("blitz", after=b.id) == c.id


def test_asking_after_the_shown_game_reads_the_list_again_once_a_second_at_most(alice, bob, carol):
    a = start(alice, bob, "3+2", (1900, 1900))
    assert picked("blitz") == a.id
    b = start(bob, carol, "3+2", (1800, 1800))   # not in the kept choice yet
    assert picked("blitz", after=a.id) == b.id   # read again: a's page is sent to b
    c = start(carol, alice, "3+2", (1850, 1850))
    cache.set(tv._KEY, {**tv.read_channels(), "blitz": [{"id": a.id}]}, tv.CACHE_S)
    cache.set(tv._LOCK_KEY, 1, 30)   # another request read it within the second
    assert picked("blitz", after=a.id) is None   # the kept choice, without a

    cache.delete(tv._LOCK_KEY)
    assert picked("blitz", after=a.id) == c.id


def test_tv_pages_and_the_channel_endpoint():
    client = Client()
    assert client.get("/tv/nonsense").status_code == 404
    assert client.get("/tv/untimed").status_code == 404
    response = client.get("/tv/game", {"channel": "nonsense"})
    assert response.status_code == 404 and response.json()["error"] == "no_such_channel"
    response = client.get("/tv/game", {"channel": "blitz", "after": "../\x00"})
    assert response.status_code == 400 and response.json()["error"] == "bad_game_id"
    assert client.get("/tv/game", {"channel": "blitz"}).json() == {"channel": "blitz", "game": None}
    empty = client.get("/tv/blitz")
    assert empty.status_code == 200 and b'id="tv-empty"' in empty.content
    assert b'aria-current="page"' in empty.content and b'data-channel="blitz"' in empty.content
    assert client.post("/tv/game").status_code == 405


def test_the_tv_page_shows_the_channels_game_to_watch(alice, bob, carol):
    a = start(alice, bob, "3+2", (1900, 1880))
    b = start(bob, carol, "10+5", (1700, 1700))
    client = Client()
    page = client.get("/tv")
    assert page.status_code == 200
    assert f'data-game="{a.id}"'.encode() in page.content
    assert f'"wsPath": "/ws/game/{a.id}/"'.encode() in page.content   # the game page's own socket
    assert f'data-game="{b.id}"'.encode() in client.get("/tv/rapid").content
    assert f'data-game="{b.id}"'.encode() in client.get("/tv", {"after": a.id}).content
    assert f'data-game="{a.id}"'.encode() in client.get("/tv", {"after": "nonsense"}).content
    body = client.get("/tv/game", {"channel": "top", "after": b.id}).json()
    assert body["game"]["id"] == a.id and body["game"]["url"] == f"/g/{a.id}/"
    assert body["game"]["label"] == "3+2" and body["game"]["rating"] == 1890

    home = client.get("/")
    assert f'id="tv-mini" aria-labelledby="tv-mini-title" data-game="{a.id}"'.encode() in home.content
    assert b"alice (1900)" in home.content and b'href="/tv"' in home.content


@pytest.mark.asyncio
async def test_a_tv_watcher_sees_the_end_on_the_spectator_socket_then_gets_the_next_game(alice, bob, carol):
    a = await database_sync_to_async(start)(alice, bob, "3+2", (1900, 1900))
    b = await database_sync_to_async(start)(bob, carol, "3+2", (1800, 1800))
    assert await database_sync_to_async(picked)("blitz") == a.id
    comm, snapshot = await carol.connect(a.id)
    assert snapshot["you"] is None

    def resign() -> None:
        progress = actions.resign(a.id, alice.player_id)
        publish_sync(a.id, progress.events)

    await database_sync_to_async(resign)()
    while True:
        message = await comm.receive_json_from(timeout=5)
        if message["type"] == "update":
            break
    assert message["state"]["status"] in ("finished", "aborted")   # a live game without moves: aborted
    body = await database_sync_to_async(lambda: Client().get("/tv/game", {"channel": "blitz", "after": a.id}).json())()
    assert body["game"]["id"] == b.id
    await comm.disconnect()
