"""Rated pools of "Play online": the rating range that widens with the wait, decided in Python and
checked again in Redis, only for signed-in accounts; rated games with their players' ratings.

The pure decision (``pair_rated``) is tested without Redis; the pools against the real Redis of
``MATCHMAKING_REDIS_URL`` with a fake clock (``now_us`` passed to ``settle`` and ``claim``); the
socket with real sessions, accounts and ratings in the real database.
"""

from __future__ import annotations

import asyncio
import random
import threading
import uuid
from collections import Counter

import pytest
from channels.db import database_sync_to_async
from django.conf import settings as django_settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.signed_cookies import SessionStore
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from game.lobby.pairing import (
    POOLS,
    RANGE_MAX,
    Pairing,
    Seek,
    in_range,
    pair_rated,
    rated_twin,
    rating_range,
)
from game.lobby.pools import Matchmaker
from game.models import Account, Game, Rating
from tests.web.conftest import Browser, make_browser
from tests.web.test_matchmaking import (  # noqa: F401
    RemoteLobby,
    matchmaking_prefix,
    next_message,
    open_lobby,
    pools,
    quiet,
    servers,
)

RATED = "5+0-rated"
S = 1_000_000  # µs in a second


def rated(n: int, player: str, rating: int, since: int = 0) -> Seek:
    return Seek(id=f"s{n}", player=player, name=player, pool=RATED, channel=f"chan-{n}", since=since,
                rating=rating)


def ids(pairings: list[Pairing]) -> list[set[str]]:
    return [{p.black.id, p.white.id} for p in pairings]


# ---- the decision, pure -------------------------------------------------------------------------

def test_every_timed_pool_has_a_rated_twin_and_untimed_has_none():
    casual = [pool for pool in POOLS.values() if not pool.rated]
    for pool in casual:
        twin = rated_twin(pool.id)
        if pool.time_control == "untimed":
            assert twin is None
        else:
            assert twin == f"{pool.id}-rated"
            assert POOLS[twin].rated and POOLS[twin].ballot == pool.ballot
            assert POOLS[twin].time_control == pool.time_control and POOLS[twin].category is not None
    assert rated_twin(RATED) is None and rated_twin("nope") is None
    assert sum(pool.rated for pool in POOLS.values()) == len(casual) - 2


def test_the_range_widens_by_50_every_5_seconds_up_to_500():
    assert [rating_range(t * S) for t in (0, 4, 5, 9, 10, 20, 39, 40, 3600)] == [
        100, 100, 150, 150, 200, 300, 450, 500, 500]
    assert rating_range(-5 * S) == 100


def test_1500_and_1800_meet_once_the_range_covers_300():
    a, b = rated(1, "alice", 1500, since=0), rated(2, "bob", 1800, since=0)
    rng = random.Random(0)
    assert pair_rated([a, b], 0, rng) == []
    assert pair_rated([a, b], 19 * S, rng) == []
    assert ids(pair_rated([a, b], 20 * S, rng)) == [{"s1", "s2"}]


def test_the_range_of_the_one_who_waited_longer_counts():
    old, new = rated(1, "alice", 1500, since=0), rated(2, "bob", 1800, since=20 * S)
    assert in_range(old, new, 20 * S) and in_range(new, old, 20 * S)
    assert not in_range(old, new, 19 * S)


def test_nearest_in_range_is_preferred_over_the_older_one():
    oldest = rated(1, "alice", 1500, since=0)
    far = rated(2, "bob", 1590, since=1)      # in range, older
    near = rated(3, "carol", 1520, since=2)   # in range, nearer
    assert ids(pair_rated([oldest, far, near], 3, random.Random(0))) == [{"s1", "s3"}]


def test_equal_gaps_go_to_the_older_seek():
    mid = rated(1, "alice", 1500, since=0)
    above, below = rated(2, "bob", 1550, since=5), rated(3, "carol", 1450, since=4)
    assert ids(pair_rated([mid, above, below], 10, random.Random(0))) == [{"s1", "s3"}]


def test_two_seeks_of_one_player_never_meet_and_unrated_seeks_are_left_out():
    a, b = rated(1, "alice", 1500), rated(2, "alice", 1500)
    casual = Seek(id="s3", player="bob", name="bob", pool=RATED, channel="c")
    assert pair_rated([a, b, casual], 0, random.Random(0)) == []


@hypothesis_settings(max_examples=300, deadline=None)
@given(
    seekers=st.lists(st.tuples(st.integers(0, 8), st.integers(1000, 2400), st.integers(0, 60)), max_size=40),
    now_s=st.integers(0, 60),
    seed=st.integers(0, 2**32),
)
def test_any_rated_pool_pairs_each_seek_once_within_range_and_leaves_nobody_who_could_play(seekers, now_s, seed):
    seeks = [rated(n, f"p{player}", rating, since=arrived * S) for n, (player, rating, arrived) in enumerate(seekers)]
    now = now_s * S
    pairings = pair_rated(seeks, now, random.Random(seed))
    used = Counter(s.id for p in pairings for s in p)
    assert all(count == 1 for count in used.values())
    assert all(p.black.player != p.white.player and in_range(p.black, p.white, now) for p in pairings)
    assert all(abs(p.black.rating - p.white.rating) <= RANGE_MAX for p in pairings)
    left = [s for s in seeks if s.id not in used]
    assert not any(a.player != b.player and in_range(a, b, now) for a in left for b in left)


# ---- the pools in Redis, on a fake clock ----------------------------------------------------------

@pytest.mark.asyncio
async def test_redis_pairs_1500_and_1800_only_once_the_range_covers_300(pools):  # noqa: F811
    a, _ = await pools.add(rated(1, "alice", 1500))
    b, _ = await pools.add(rated(2, "bob", 1800))
    t0 = max(a.since, b.since)
    rng = random.Random(0)
    assert await pools.settle(RATED, rng, now_us=t0) == ([], 2)
    assert await pools.settle(RATED, rng, now_us=a.since + 19 * S) == ([], 2)
    taken, waiting = await pools.settle(RATED, rng, now_us=a.since + 20 * S)
    assert ids(taken) == [{"s1", "s2"}] and waiting == 0
    # Taken once: another settling finds nothing.
    assert await pools.settle(RATED, rng, now_us=a.since + 60 * S) == ([], 0)


@pytest.mark.asyncio
async def test_redis_refuses_a_claim_out_of_range_whoever_proposes_it(pools):  # noqa: F811
    a, _ = await pools.add(rated(1, "alice", 1500))
    b, _ = await pools.add(rated(2, "bob", 1800))
    assert await pools.claim(RATED, [Pairing(a, b)], now_us=b.since) == ([], 2)
    # On the Redis clock now (the seeks are a moment old): still out of range.
    assert await pools.claim(RATED, [Pairing(a, b)]) == ([], 2)
    taken, waiting = await pools.claim(RATED, [Pairing(a, b)], now_us=a.since + 20 * S)
    assert len(taken) == 1 and waiting == 0


@pytest.mark.asyncio
async def test_redis_prefers_the_nearest_in_range(pools):  # noqa: F811
    await pools.add(rated(1, "alice", 1500))
    await pools.add(rated(2, "bob", 1590))
    await pools.add(rated(3, "carol", 1520))
    taken, waiting = await pools.settle(RATED, random.Random(0))
    assert ids(taken) == [{"s1", "s3"}] and waiting == 1
    assert [s.id for s in await pools.snapshot(RATED)] == ["s2"]


@pytest.mark.asyncio
async def test_a_seek_without_rating_is_never_claimed_in_a_rated_pool(pools):  # noqa: F811
    a, _ = await pools.add(rated(1, "alice", 1500))
    b, _ = await pools.add(Seek(id="s2", player="bob", name="bob", pool=RATED, channel="c"))
    assert await pools.claim(RATED, [Pairing(a, b)], now_us=a.since + 60 * S) == ([], 2)


def test_threads_racing_to_settle_a_rated_pool_never_pair_a_seek_twice(matchmaking_prefix):  # noqa: F811
    """Four threads, each with its own event loop and Redis connections (as four server processes),
    settle one rated pool while 200 seeks arrive; every seek is paired at most once, every pair
    within range, and nobody is left who could meet."""
    url = django_settings.MATCHMAKING_REDIS_URL
    rng = random.Random(11)
    seeks = [rated(n, f"p{n}", rng.randrange(1200, 2000)) for n in range(200)]
    taken: list[list[Pairing]] = [[] for _ in range(4)]
    added = threading.Event()

    async def adder():
        mm = Matchmaker.from_url(url, prefix=matchmaking_prefix)
        try:
            for seek in seeks:
                await mm.add(seek)
        finally:
            await mm.close()
        added.set()

    async def settler(k: int):
        mm = Matchmaker.from_url(url, prefix=matchmaking_prefix)
        try:
            while True:
                done = added.is_set()
                won, _ = await mm.settle(RATED, random.Random(k))
                taken[k] += won
                if done:
                    return
                await asyncio.sleep(0)
        finally:
            await mm.close()

    threads = [threading.Thread(target=asyncio.run, args=(adder(),))]
    threads += [threading.Thread(target=asyncio.run, args=(settler(k),)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)

    async def look():
        mm = Matchmaker.from_url(url, prefix=matchmaking_prefix)
        try:
            return await mm.snapshot_at(RATED)
        finally:
            await mm.close()

    now, left = asyncio.run(look())
    pairings = [p for won in taken for p in won]
    paired = [s.id for p in pairings for s in p]
    assert len(paired) == len(set(paired))
    assert len(paired) + len(left) == len(seeks)
    # The claims were checked at the claim's time, which is before `now`: within range then, so now.
    assert all(in_range(p.black, p.white, now) for p in pairings)
    assert pair_rated(left, now, random.Random(0)) == []


# ---- the lobby socket: accounts only, rated games --------------------------------------------------

def account_browser(username: str, rating: float | None = None, category: str = "blitz") -> Browser:
    """A browser signed in to a new account ``username`` (its session as a log-in leaves it), with
    a rating row in ``category`` when ``rating`` is given."""
    user = User.objects.create_user(username=username, password=uuid.uuid4().hex)
    account = Account.objects.create(user=user, player_id=uuid.uuid4().hex)
    if rating is not None:
        Rating.objects.create(player_id=account.player_id, category=category, rating=rating, deviation=80.0)
    store = SessionStore()
    store["player_id"] = account.player_id
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = django_settings.AUTHENTICATION_BACKENDS[0]
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.save()
    return Browser(name=username, player_id=account.player_id, cookie=store.session_key)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_guest_is_refused_a_rated_pool_with_a_code_and_nothing_is_queued(pools):  # noqa: F811
    guest, other = make_browser("gina"), make_browser("other")
    g, o = await open_lobby(guest), await open_lobby(other)
    for message in ({"type": "seek", "pool": RATED}, {"type": "seek", "pool": "5+0", "rated": True}):
        await g.send_json_to(message)
        answer = await next_message(g)
        assert answer["type"] == "error" and answer["code"] == "rated_needs_account", answer
    assert await pools.waiting(RATED) == 0
    assert await quiet(o, 0.3) == []
    # The guest may still seek a casual pool.
    await g.send_json_to({"type": "seek", "pool": "5+0"})
    assert (await next_message(g))["type"] == "seeking"
    for comm in (g, o):
        await comm.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_session_whose_log_in_no_longer_holds_is_a_guest_for_rated_pools(pools):  # noqa: F811
    browser = await database_sync_to_async(account_browser)("dora")
    user = await database_sync_to_async(User.objects.get)(username="dora")  # its password changed elsewhere
    user.set_password("another-one")
    await database_sync_to_async(user.save)()
    comm = await open_lobby(browser)
    await comm.send_json_to({"type": "seek", "pool": RATED})
    assert (await next_message(comm))["code"] == "rated_needs_account"
    await comm.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize("message, code", [
    ({"type": "seek", "pool": "5+0-ratd"}, "unknown_pool"),
    ({"type": "seek", "pool": "5+0", "rated": "yes"}, "bad_message"),
    ({"type": "seek", "pool": "5+0", "rated": 1}, "bad_message"),
    ({"type": "seek", "pool": RATED, "rated": False}, "bad_message"),
    ({"type": "seek", "pool": "untimed", "rated": True}, "unrated_pool"),
    ({"type": "seek", "pool": ["5+0"], "rated": True}, "bad_message"),
])
async def test_bad_rated_seeks_get_an_error_code_to_the_sender_only(message, code, pools):  # noqa: F811
    sender = await database_sync_to_async(account_browser)("erin")
    watcher = await database_sync_to_async(account_browser)("fred")
    s, w = await open_lobby(sender), await open_lobby(watcher)
    await s.send_json_to(message)
    answer = await next_message(s)
    assert answer["type"] == "error" and answer["code"] == code, answer
    assert await quiet(w, 0.3) == [] and await quiet(s, 0.1) == []
    assert await pools.waiting(RATED) == 0
    for comm in (s, w):
        await comm.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_two_accounts_in_range_get_a_rated_game_with_their_ratings(pools):  # noqa: F811
    ann = await database_sync_to_async(account_browser)("ann", 1612.4)
    ben = await database_sync_to_async(account_browser)("ben")  # no blitz rating yet: 1500
    a, b = await open_lobby(ann), await open_lobby(ben)
    await a.send_json_to({"type": "seek", "pool": "5+0", "rated": True, "name": "not used"})
    first = await next_message(a)
    assert first == {"type": "seeking", "pool": RATED, "waiting": 1, "rating": 1612, "seek": first["seek"],
                     "range": {"start": 100, "step": 50, "step_s": 5, "max": 500}}, first
    assert len(first["seek"]) == 32
    await b.send_json_to({"type": "seek", "pool": RATED})
    second = await next_message(b)
    assert second["type"] == "seeking" and second["rating"] == 1500
    paired = [await next_message(a, timeout=10), await next_message(b, timeout=10)]
    assert [m["type"] for m in paired] == ["paired", "paired"], paired
    assert paired[0]["game"] == paired[1]["game"]
    game = await database_sync_to_async(Game.objects.get)(pk=paired[0]["game"])
    assert game.rated and game.time_control == "5+0" and game.status == Game.Status.ACTIVE
    seats = {game.black_player: (game.black_name, game.black_rating),
             game.white_player: (game.white_name, game.white_rating)}
    assert seats == {ann.player_id: ("ann", 1612), ben.player_id: ("ben", 1500)}
    for comm in (a, b):
        await comm.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_accounts_out_of_range_wait_and_a_casual_seek_never_meets_a_rated_one(pools):  # noqa: F811
    low = await database_sync_to_async(account_browser)("lou", 1400.0)
    high = await database_sync_to_async(account_browser)("hal", 1800.0)
    guest = make_browser("gus")
    lo, hi, gu = await open_lobby(low), await open_lobby(high), await open_lobby(guest)
    await lo.send_json_to({"type": "seek", "pool": RATED})
    await hi.send_json_to({"type": "seek", "pool": RATED})
    await gu.send_json_to({"type": "seek", "pool": "5+0"})
    assert [(await next_message(c))["type"] for c in (lo, hi, gu)] == ["seeking"] * 3
    assert await quiet(lo, 0.5) == [] and await quiet(hi, 0.1) == [] and await quiet(gu, 0.1) == []
    assert await pools.waiting(RATED) == 2 and await pools.waiting("5+0") == 1
    assert await database_sync_to_async(Game.objects.count)() == 0
    for comm in (lo, hi, gu):
        await comm.disconnect()
    assert await pools.waiting(RATED) == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_two_server_processes_pair_each_account_once_with_its_neighbour_in_rating(servers, pools):  # noqa: F811
    """Eight accounts in four rating groups, their lobby sockets spread over two Daphne processes,
    all seek the same rated pool at once: each meets the one account of its group (the others are
    260 points away or more, out of range for 20 s), once, in a rated game with both ratings."""
    ratings = [1200, 1240, 1500, 1530, 1800, 1850, 2100, 2120]
    browsers = [await database_sync_to_async(account_browser)(f"acc{n}x{uuid.uuid4().hex[:4]}", float(r))
                for n, r in enumerate(ratings)]
    ports = [(await servers.start())[0] for _ in range(2)]
    lobbies = [await RemoteLobby(b, ports[n % 2]).open() for n, b in enumerate(browsers)]
    try:
        await asyncio.gather(*(lobby.send({"type": "seek", "pool": RATED}) for lobby in lobbies))
        answers = [await lobby.next(20, skip=("pool", "seeking")) for lobby in lobbies]
        assert all(answer["type"] == "paired" for answer in answers), answers
        games = Counter(answer["game"] for answer in answers)
        assert sorted(games.values()) == [2, 2, 2, 2]
        for n in range(0, 8, 2):
            assert answers[n]["game"] == answers[n + 1]["game"]
            game = await database_sync_to_async(Game.objects.get)(pk=answers[n]["game"])
            assert game.rated
            assert {game.black_player: game.black_rating, game.white_player: game.white_rating} == {
                browsers[n].player_id: ratings[n], browsers[n + 1].player_id: ratings[n + 1]}
        assert await pools.waiting(RATED) == 0
    finally:
        for lobby in lobbies:
            await lobby.close()


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6)


@hypothesis_settings(max_examples=400, deadline=None)
@given(pool=st.sampled_from([*POOLS, "nope", ""]) | _json, rated=_json, name=_json, drop=st.sets(st.sampled_from(
    ["pool", "rated", "name"])))
def test_any_seek_message_is_a_seek_of_a_known_pool_or_a_coded_refusal(pool, rated, name, drop):
    from game.lobby.protocol import ProtocolError, SeekGame, parse_lobby_message

    data = {key: value for key, value in {"type": "seek", "pool": pool, "rated": rated, "name": name}.items()
            if key not in drop}
    try:
        message = parse_lobby_message(data)
    except ProtocolError as exc:
        assert exc.code in {"bad_message", "unknown_pool", "unrated_pool"}
        return
    assert isinstance(message, SeekGame) and message.pool in POOLS
    if data.get("rated") is True:
        assert POOLS[message.pool].rated
    if data.get("rated") is False or "rated" not in data or data.get("rated") is None:
        assert message.pool == data.get("pool", "untimed")


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_the_heartbeat_pairs_two_accounts_once_their_wait_widens_the_range(settings, pools):  # noqa: F811
    """On the real clock: 1500 and 1650 are 150 apart, out of the first 100-point range; nothing new
    arrives, yet after 5 s of waiting a heartbeat's settling pairs them."""
    settings.MATCHMAKING_HEARTBEAT = 0.5
    low = await database_sync_to_async(account_browser)("wil", 1500.0)
    high = await database_sync_to_async(account_browser)("wes", 1650.0)
    lo, hi = await open_lobby(low), await open_lobby(high)
    await lo.send_json_to({"type": "seek", "pool": RATED})
    assert (await next_message(lo))["type"] == "seeking"
    await hi.send_json_to({"type": "seek", "pool": RATED})
    assert (await next_message(hi))["type"] == "seeking"
    started = asyncio.get_running_loop().time()
    assert await quiet(lo, 2.5) == []
    paired = [await next_message(lo, timeout=10), await next_message(hi, timeout=10)]
    assert [m["type"] for m in paired] == ["paired", "paired"] and paired[0]["game"] == paired[1]["game"]
    assert asyncio.get_running_loop().time() - started >= 2.5
    for comm in (lo, hi):
        await comm.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_rated_seek_of_an_account_deleted_since_fails_alone_and_the_other_seeker_waits_on(
        pools, caplog):  # noqa: F811
    """X seeks a rated pool, then deletes the account; Y seeks the same pool and is paired with X's
    stale seek: the game cannot be made, Y is told nothing and seeks again at once, and meets Z."""
    from game.accounts.deletion import delete_account

    xena = await database_sync_to_async(account_browser)("xena", 1500.0)
    yves = await database_sync_to_async(account_browser)("yves", 1520.0)
    zoe = await database_sync_to_async(account_browser)("zoe", 1480.0)
    x, y = await open_lobby(xena), await open_lobby(yves)
    await x.send_json_to({"type": "seek", "pool": RATED})
    assert (await next_message(x))["type"] == "seeking"
    await database_sync_to_async(lambda: delete_account(User.objects.get(username="xena")))()
    await y.send_json_to({"type": "seek", "pool": RATED})
    assert (await next_message(y))["type"] == "seeking"
    assert await quiet(y, 1.5) == []   # Y hears nothing of it, and is still seeking:
    z = await open_lobby(zoe)
    await z.send_json_to({"type": "seek", "pool": RATED})
    async def news(comm) -> dict:
        while True:
            message = await next_message(comm, timeout=10)
            if message["type"] != "seeking":
                return message
    got = [await news(y), await news(z)]
    assert [m["type"] for m in got] == ["paired", "paired"] and got[0]["game"] == got[1]["game"], got
    assert not [r for r in caplog.records if r.levelname == "ERROR"], [r.getMessage() for r in caplog.records]
    for comm in (x, y, z):
        await comm.disconnect()
