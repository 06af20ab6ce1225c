"""A Redis outage never decides a game (docs/protocol.md, "Outages").

Two Daphne processes behind the repository's nginx, a Redis of their own that the test stops for
:data:`OUTAGE_S` seconds and starts again, one database.  Two live one-minute games are on:

- in the first, Black makes the first move during the outage: the White tab on Black's process
  gets it at once, the White tab on the other process once Redis is back, and the game is not
  aborted by the 30 s first-move rule (30 s pass during the outage);
- in the second, Black has thought 30 s of the minute when Redis stops and is still thinking when
  it comes back: not lost on time (35 s pass during the outage).

Afterwards each clock shows at most :data:`MAX_CHARGE_MS` charged for the outage, and both games
go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import time

import pytest

from tests.system.processes import running_site
from tests.system.test_faults import Player
from tests.system.test_scaleout import Visitor

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")

#: Seconds Redis is down.
OUTAGE_S = 35
#: Seconds Black of the second game has thought when Redis stops.
THINK_S = 30
#: The most a clock may be charged for the outage (its edges: noticing it, the snapshot after it).
MAX_CHARGE_MS = 1000


class Page(Player):
    """A game page's socket as the page keeps it: pings every 3 s, keeps the last state and every
    ``link`` notice (with its time) and snapshot time."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.state: dict | None = None
        self.links: list[tuple[bool, float]] = []
        self.snapshot_at: list[float] = []
        self.pinger: asyncio.Task | None = None

    async def start(self) -> None:
        await super().start()
        self.pinger = asyncio.create_task(self.ping())

    async def ping(self) -> None:
        while True:
            await asyncio.sleep(3)
            await self.send({"type": "ping"})

    def apply(self, message: dict) -> None:
        if message["type"] == "link":
            self.links.append((message["up"], time.monotonic()))
        if message["type"] == "snapshot":
            self.snapshot_at.append(time.monotonic())
        if "state" in message and message.get("v", -1) >= self.v:
            self.state = message["state"]
        super().apply(message)

    async def close(self) -> None:
        if self.pinger is not None:
            self.pinger.cancel()
        await super().close()


def new_game(base: str, control: str) -> tuple[str, list[str]]:
    """A ``control`` game Alice (Black) and Bob (White) sit in, and their cookies."""
    alice, bob = Visitor(base), Visitor(base)
    url = alice._post("/", {"name": "alice", "color": "B", "time_control": control})
    game_id = re.search(r"/g/([a-z0-9]+)/", url).group(1)
    bob.join(game_id, "bob")
    return game_id, [alice.cookie_header(), bob.cookie_header()]


async def page_on(port: int, game_id: str, cookie: str, upstream: str | None) -> Page:
    """A page of ``game_id`` through nginx served by ``upstream`` (None: by whichever; nginx
    alternates between the processes, so a few tries find it)."""
    for _ in range(10):
        page = Page(port, game_id, cookie)
        await page.start()
        if upstream is None or page.upstreams[-1] == upstream:
            return page
        await page.close()
    raise AssertionError(f"no page on {upstream}")


async def wait_for(condition, timeout_s: float = 20) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def outage_windows(database_url: str) -> list[tuple]:
    """The stored outage windows: ``(instance, started_at, ended_at)`` as the database gives them."""
    query = "SELECT instance, started_at, ended_at FROM game_deliveryoutage ORDER BY started_at"
    if database_url.startswith("sqlite:///"):
        import sqlite3

        with contextlib.closing(sqlite3.connect(database_url[len("sqlite:///"):])) as conn:
            return conn.execute(query).fetchall()
    import psycopg

    with psycopg.connect(database_url) as conn:
        return conn.execute(query).fetchall()


def ended(page: Page) -> list[str]:
    return [u["what"] for u in page.updates if u["what"] in ("flagged", "aborted")]


def _timestamp(value) -> float:
    """Unix seconds of a stored time (a datetime, or SQLite's text in UTC)."""
    if isinstance(value, str):
        from datetime import UTC, datetime

        value = datetime.fromisoformat(value).replace(tzinfo=UTC)
    return value.timestamp()


@pytest.fixture
def site(tmp_path):
    with running_site(tmp_path) as site:
        yield site


def test_a_redis_outage_decides_no_game_and_charges_nobody(site):
    async def scenario():
        port = site["nginx"].port
        base = f"http://127.0.0.1:{port}"
        pages: list[Page] = []
        try:
            # The second game first: Black starts thinking THINK_S before the outage.
            g2, (alice2, bob2) = await asyncio.to_thread(new_game, base, "1+0")
            a2 = await page_on(port, g2, alice2, None)
            here, = a2.upstreams
            b2 = await page_on(port, g2, bob2, None)
            pages += [a2, b2]
            await a2.send({"type": "move", "move": "11-15", "v": a2.v})
            await wait_for(lambda: b2.moves == ["11-15"])
            await b2.send({"type": "move", "move": "23-19", "v": b2.v})
            await wait_for(lambda: a2.moves == ["11-15", "23-19"])
            thinking_since = time.monotonic()
            black_ms = a2.state["clock"]["B"]
            assert a2.state["clock"]["running"] == "B"

            # The first game: Alice and one of Bob's tabs on the same process, Bob's other tab on
            # the other process.
            g1, (alice1, bob1) = await asyncio.to_thread(new_game, base, "1+0")
            a1 = await page_on(port, g1, alice1, here)
            b1_here = await page_on(port, g1, bob1, here)
            b1_there = None
            while b1_there is None:
                page = await page_on(port, g1, bob1, None)
                if page.upstreams[-1] != here:
                    b1_there = page
                else:
                    await page.close()
            pages += [a1, b1_here, b1_there]
            await asyncio.sleep(max(0.0, THINK_S - (time.monotonic() - thinking_since)))

            site["redis"].kill()
            stopped = time.monotonic()
            think_before_ms = (stopped - thinking_since) * 1000
            await asyncio.sleep(3)
            sent = time.monotonic()
            await a1.send({"type": "move", "move": "11-15", "v": a1.v})
            with contextlib.suppress(AssertionError):
                await wait_for(lambda: "11-15" in b1_here.received, timeout_s=5)
            await asyncio.sleep(OUTAGE_S - (time.monotonic() - stopped))
            ends_during = {id(p): ended(p) for p in pages}
            there_during = list(b1_there.moves)
            links_during = [[up for up, _ in p.links] for p in pages]
            sockets_kept = [p.ws is not None for p in pages]

            site["redis"].start()
            restarted = time.monotonic()
            restarted_wall = time.time()
            with contextlib.suppress(AssertionError):
                await wait_for(lambda: b1_there.moves == ["11-15"] and all(
                    p.snapshot_at and p.snapshot_at[-1] > restarted for p in pages), timeout_s=15)
            print(f"b1 on the other process got the move {time.monotonic() - restarted:.2f} s after "
                  f"Redis was back")

            # Nobody lost, during the outage or after it.
            assert not any(ends_during.values()), [p.updates for p in pages]
            for page in pages:
                assert page.state["status"] == "active", (page.state, page.updates)
                assert not ended(page)
            # The move reached the process's own pages at once, the other process's after.
            assert a1.moves == ["11-15"]
            assert b1_here.received.get("11-15", float("inf")) - sent < 1.0
            assert b1_here.events == [1]                       # once: its republish is not sent again
            assert there_during == [] and b1_there.moves == ["11-15"]
            # The pages were told, kept their sockets, and got a snapshot once Redis was back.
            assert all(links and links[0] is False for links in links_during), links_during
            assert all(p.links[-1][0] is True for p in pages)
            assert all(sockets_kept)

            # The clocks were not charged for the outage.  White's first move in the first game:
            # its 30 s began during the outage.
            first_move_ms = b1_there.state["clock"]["first_move_ms"]
            since_snapshot_ms = (time.monotonic() - b1_there.snapshot_at[-1]) * 1000
            charged_first = 30_000 - first_move_ms
            # Black of the second game: thought THINK_S before the outage, none charged during it.
            expected_black_ms = black_ms - think_before_ms
            charged_black = expected_black_ms - b2.state["clock"]["B"]
            print(f"charged for the outage: White's first move {charged_first} ms, "
                  f"Black's clock {charged_black:.0f} ms (snapshot {since_snapshot_ms:.0f} ms old)")
            assert charged_first <= MAX_CHARGE_MS
            assert -200 <= charged_black <= MAX_CHARGE_MS

            # Each process kept one window, ended within a second or two of Redis's return.
            await asyncio.sleep(1)
            windows = await asyncio.to_thread(outage_windows, site["database_url"])
            print(f"outage windows: {windows}")
            assert len({instance for instance, _, _ in windows}) == 2, windows
            assert all(end is not None for _, _, end in windows), windows
            last_end = max(_timestamp(end) for _, _, end in windows)
            assert last_end - restarted_wall < 2.0, (last_end - restarted_wall, windows)

            # Both games go on, at once, over both processes.
            started = time.monotonic()
            await b1_there.send({"type": "move", "move": "23-19", "v": b1_there.v})
            await wait_for(lambda: a1.moves == ["11-15", "23-19"], timeout_s=5)
            await a2.send({"type": "move", "move": "8-11", "v": a2.v})
            await wait_for(lambda: b2.moves == ["11-15", "23-19", "8-11"], timeout_s=5)
            assert time.monotonic() - started < 2
            assert a1.state["clock"]["W"] == 60_000          # a first move: no clock ran
        finally:
            for page in pages:
                with contextlib.suppress(Exception):
                    await page.close()

    asyncio.run(scenario())
