"""``manage.py housekeeping``: waiting games nobody joined end through the actions (version bumped,
the creator's page told), stale presence entries and expired seeks are cleared, and a report says so."""

from __future__ import annotations

import asyncio
import io
import time
import uuid
from datetime import timedelta

import pytest
import redis
from channels.db import database_sync_to_async
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from game.lobby.pairing import POOLS, Seek
from game.lobby.pools import Matchmaker
from game.management.commands.housekeeping import duration
from game.models import Game
from game.round import actions, presence
from tests.web.conftest import recv

pytestmark = pytest.mark.django_db(transaction=True)


def housekeeping(*args: str) -> str:
    out = io.StringIO()
    call_command("housekeeping", *args, stdout=out)
    return out.getvalue()


def count(report: str, before: str, after: str) -> int:
    """The number in the report's line ``housekeeping: <before> N <after>``."""
    line = next(line for line in report.splitlines() if before in line and after in line)
    return int(line.split(before, 1)[1].split()[0])


def waiting_game(player_id: str, age: timedelta) -> Game:
    game = actions.create_game(player_id, "alice", "B")
    Game.objects.filter(pk=game.id).update(created_at=timezone.now() - age)
    return Game.objects.get(pk=game.id)


def test_durations():
    assert duration("90s") == timedelta(seconds=90)
    assert duration("30m") == timedelta(minutes=30)
    assert duration("7d") == timedelta(days=7)
    for bad in ("", "0", "-5m", "3w", "h"):
        with pytest.raises(ValueError):
            duration(bad)


def test_old_waiting_games_are_aborted_through_the_actions(alice, bob):
    old = waiting_game(alice.player_id, timedelta(hours=25))
    young = waiting_game(alice.player_id, timedelta(hours=1))
    joined = waiting_game(alice.player_id, timedelta(hours=30))
    actions.join_game(joined.id, bob.player_id, "bob")
    joined_version = Game.objects.get(pk=joined.id).version

    report = housekeeping("--dry-run")
    assert "would abort 1 waiting games never joined" in report
    assert Game.objects.get(pk=old.id).status == "waiting"

    report = housekeeping()
    assert "aborted 1 waiting games never joined" in report
    stored = Game.objects.get(pk=old.id)
    assert (stored.status, stored.result, stored.termination) == ("aborted", "*", "aborted")
    assert stored.version == old.version + 1
    assert Game.objects.get(pk=young.id).status == "waiting"
    assert (Game.objects.get(pk=joined.id).status, Game.objects.get(pk=joined.id).version) == \
        ("active", joined_version)

    assert "aborted 1 waiting games" in housekeeping("--waiting-after", "30m")
    assert Game.objects.get(pk=young.id).status == "aborted"
    assert "aborted 0 waiting games" in housekeeping()


def test_a_game_joined_meanwhile_is_not_aborted(alice, bob):
    game = waiting_game(alice.player_id, timedelta(days=2))
    actions.join_game(game.id, bob.player_id, "bob")
    with pytest.raises(actions.ActionError) as refused:
        actions.abort_unjoined(game.id, timezone.now())
    assert refused.value.code == "not_waiting"
    assert Game.objects.get(pk=game.id).status == "active"


async def test_the_creators_open_page_is_told(alice):
    game = await database_sync_to_async(waiting_game)(alice.player_id, timedelta(days=2))
    comm, snapshot = await alice.connect(game.id)
    assert snapshot["state"]["status"] == "waiting"
    await database_sync_to_async(housekeeping)()
    event = await recv(comm)
    assert (event["type"], event["what"], event["state"]["status"]) == ("update", "aborted", "aborted")
    assert event["v"] == snapshot["v"] + 1
    await comm.disconnect()


def test_stale_presence_entries_are_removed():
    game_id = f"hk{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(settings.REDIS_URL)
    key = presence._key(game_id)
    now = time.time()
    client.zadd(key, {"B:dead.channel": now - 5, "S:dead.spectator": now - 1, "W:live.channel": now + 60})
    client.expire(key, 120)
    try:
        # Other tests' games may have stale entries of their own in this Redis: at least these two.
        assert count(housekeeping("--dry-run"), "would remove", "stale presence entries") >= 2
        assert client.zcard(key) == 3
        assert count(housekeeping(), "removed", "stale presence entries") >= 2
        assert client.zrange(key, 0, -1) == [b"W:live.channel"]
    finally:
        client.delete(key)
        client.close()


@pytest.fixture
def seek_prefix(settings):
    prefix = f"test-hk-{uuid.uuid4().hex[:12]}"
    settings.MATCHMAKING_PREFIX = prefix
    settings.MATCHMAKING_SEEK_TTL = 0.2
    yield prefix
    client = redis.Redis.from_url(settings.MATCHMAKING_REDIS_URL)
    for key in client.scan_iter(match=f"{{{prefix}:*"):
        client.delete(key)
    client.close()


def test_expired_seeks_are_removed(seek_prefix):
    pool = next(iter(POOLS))

    async def seek_then_die() -> list[str]:
        mm = Matchmaker.from_url(settings.MATCHMAKING_REDIS_URL, prefix=seek_prefix, seek_ttl_s=0.2)
        try:
            await mm.add(Seek(id="s1", player="p1", name="alice", pool=pool, channel="c1"))
            await mm.add(Seek(id="s2", player="p2", name="bob", pool=pool, channel="c2"))
            await asyncio.sleep(0.3)  # their sockets stopped refreshing: both expired
            return mm.keys(pool)
        finally:
            await mm.close()

    keys = asyncio.run(seek_then_die())
    client = redis.Redis.from_url(settings.MATCHMAKING_REDIS_URL)
    try:
        assert "would remove 2 expired seeks" in housekeeping("--dry-run")
        assert client.zcard(keys[1]) == 2
        assert "removed 2 expired seeks" in housekeeping()
        assert (client.zcard(keys[0]), client.zcard(keys[1]), client.hlen(keys[2])) == (0, 0, 0)
    finally:
        client.close()


def test_redis_unreachable_is_reported_and_fails(alice, settings, monkeypatch):
    waiting_game(alice.player_id, timedelta(days=2))
    settings.MATCHMAKING_REDIS_URL = "redis://127.0.0.1:1/0"

    def unavailable(dry_run=False):
        raise presence.PresenceUnavailable("connection refused")

    monkeypatch.setattr(presence, "sweep", unavailable)
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError):
        call_command("housekeeping", stdout=out, stderr=err)
    assert "aborted 1 waiting games" in out.getvalue()
    assert "presence: Redis unavailable" in err.getvalue()
    assert "seeks: Redis unavailable" in err.getvalue()
