"""What a player's page shows when the site is in trouble: Redis down (docs/protocol.md,
"Outages"), and too many pages of the site open in one browser (4429).  A Daphne server and a Redis
of the test's own; Chromium through Playwright."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Server
from tests.browser.test_clocks import clock, play, start_game
from tests.system.processes import RedisServer

INTERRUPTED = "Live updates interrupted, reconnecting…"


@pytest.fixture
def redis_server(tmp_path):
    redis = RedisServer(tmp_path / "redis.log")
    redis.start()
    yield redis
    redis.stop()


@pytest.fixture
def outage_server(server_env, tmp_path, redis_server):
    """A server of the test's own on a Redis the test may stop; one game socket per session."""
    env = dict(server_env, REDIS_URL=redis_server.url, GAME_SOCKETS_PER_SESSION="1")
    srv = Server(env, tmp_path / "daphne.log")
    srv.start()
    yield srv
    srv.stop()


def test_redis_down_the_page_says_so_stops_its_clocks_and_moves_still_arrive(outage_server, redis_server,
                                                                              new_context):
    t = start_game(new_context, outage_server, "1+0", spectator=False)
    alice, bob = t.alice.page, t.bob.page
    play(alice, "11-15", [alice, bob])
    play(bob, "23-19", [alice, bob])
    black = clock(alice, "B")
    expect(black).to_have_attribute("data-running", "true")

    redis_server.kill()
    for page in (alice, bob):
        expect(page.locator("#connection")).to_be_visible()
        expect(page.locator("#connection")).to_have_text(INTERRUPTED)
    frozen = black.inner_text()
    time.sleep(2.5)
    assert black.inner_text() == frozen            # no clock is charged during the outage
    play(alice, "8-11", [alice, bob])               # one server process: the move arrives at once
    expect(bob.locator("#connection")).to_have_text(INTERRUPTED)

    redis_server.start()
    for page in (alice, bob):
        expect(page.locator("#connection")).to_be_hidden()
        expect(page.locator("body")).to_have_attribute("data-ply", "3")
    white = clock(bob, "W")
    before = white.inner_text()
    expect(white).not_to_have_text(before, timeout=3000)   # White's clock runs again


def test_a_page_over_the_socket_limit_tries_a_few_times_then_says_why(outage_server, new_context):
    """One game socket a session here: a second tab of the same browser is refused (4429), says it
    tries again, and gives up with a message after three spaced tries; a tab opened after the
    first one closed gets in."""
    t = start_game(new_context, outage_server, "untimed", spectator=False)
    context = t.alice.page.context
    second = context.new_page()
    second.goto(t.url)
    connection = second.locator("#connection")
    expect(connection).to_have_text(re.compile("trying again"))
    expect(connection).to_have_text(
        "Too many pages of this site are open in this browser: close one, then reload this page.",
        timeout=45_000)
    expect(connection).to_have_attribute("data-state", "closed")
    t.alice.page.close()
    second.reload()
    expect(second.locator("#connection")).to_have_attribute("data-state", "open", timeout=15_000)
    expect(second.locator("body")).to_have_attribute("data-you", "B")
