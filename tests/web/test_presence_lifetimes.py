"""How long a game's last sightings stay in Redis (``<prefix>:seen:{<id>}``, game/round/presence.py):
a day after their last write for a live game, 30 days for an untimed or a correspondence one; the
socket's first write, its process's renewals and its close each set that lifetime again.  Real
Redis, real sockets; the lifetimes are read with ``TTL``."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings

from game.round import actions, presence

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

DAY = 86400


def _game(black: str, white: str, control: str) -> str:
    return actions.start_game(black=(black, "alice"), white=(white, "bob"), time_control=control).id


def _admin() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


async def _until(check, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(check):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@pytest.mark.parametrize(("control", "kept_s"), [("5+3", DAY), ("untimed", 30 * DAY), ("3d", 30 * DAY)])
async def test_a_games_sightings_are_kept_a_day_when_it_is_live_and_30_days_otherwise(
        alice, bob, control, kept_s, monkeypatch):
    monkeypatch.setattr(presence, "RENEW_EVERY_S", 0.3)
    game_id = await database_sync_to_async(_game)(alice.player_id, bob.player_id, control)
    seen = presence._seen_key(game_id)
    admin = _admin()
    try:
        a, _ = await alice.connect(game_id)
        b, _ = await bob.connect(game_id)
        # The sockets' first writes.
        assert await _until(lambda: {b"B", b"W", b"epoch"} <= set(admin.hkeys(seen)))
        assert kept_s - 5 <= admin.ttl(seen) <= kept_s
        # The process's renewal of the open sockets sets it again.
        admin.expire(seen, 100)
        assert await _until(lambda: admin.ttl(seen) > 100, timeout=3)
        assert kept_s - 5 <= admin.ttl(seen) <= kept_s
        # So do the sockets' closes (no renewal runs any more), each writing its seat's last sighting.
        monkeypatch.setattr(presence, "RENEW_EVERY_S", 3600)
        await asyncio.sleep(0.2)
        admin.expire(seen, 100)
        await b.disconnect()
        await a.disconnect()
        assert await _until(lambda: admin.zcard(presence._key(game_id)) == 0)
        assert kept_s - 5 <= admin.ttl(seen) <= kept_s
        assert {b"B", b"W", b"epoch"} <= set(admin.hkeys(seen))
    finally:
        admin.close()


async def test_a_claim_in_a_live_game_whose_sightings_expired_measures_absence_from_their_return(alice, bob):
    """A day after a live game's last socket closed, its sightings are gone (expired, as after a
    Redis restart): the player who comes back to claim starts a new record, and the absent
    opponent is absent from then on, not from the turn's start: the claim waits the full
    limit, as after any loss of presence."""
    game_id = await database_sync_to_async(_game)(alice.player_id, bob.player_id, "5+3")
    admin = _admin()
    try:
        admin.delete(presence._key(game_id), presence._seen_key(game_id))   # what the day's expiry does
        b, _ = await bob.connect(game_id)   # White: Black (absent) is to move
        seen = presence._seen_key(game_id)
        assert await _until(lambda: admin.hget(seen, "epoch") is not None)
        assert admin.hget(seen, "B") is None
        epoch = float(admin.hget(seen, "epoch"))
        since = time.time() - 3600          # the turn began an hour ago
        away = await database_sync_to_async(presence.offline_s)(game_id, "B", since)
        assert 0 < away <= time.time() - epoch + 0.01 < settings.CLAIM_AFTER_LIVE_S
        await b.disconnect()
    finally:
        admin.close()
