"""A takeback accepted on one server process while a move is played on another settles once.

Two Daphne processes on one Redis and one database (PostgreSQL when ``DATABASE_URL`` names it):
alice (Black) on the first, bob with a tab on each. Alice plays 11-15 and proposes a takeback;
bob's tab on the first process accepts while his tab on the second plays 23-19, both sent at
once. Every socket sees one outcome, the other tab is refused with a code, and the stored game is
the outcome's, nothing half-applied.
"""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest
from websockets.asyncio.client import connect

from game import rules
from tests.system.processes import running_site
from tests.system.test_scaleout import Visitor

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")

START = rules.Position.initial().fen()
AFTER_REPLY = rules.Game.from_moves(["11-15", "23-19"]).position.fen()


class Tab:
    """One game socket: every message it receives, in order (``audience`` notices left out)."""

    def __init__(self, port: int, game_id: str, cookie: str):
        self.uri = f"ws://127.0.0.1:{port}/ws/game/{game_id}/"
        self.origin = f"http://127.0.0.1:{port}"
        self.cookie = cookie
        self.inbox: asyncio.Queue[dict] = asyncio.Queue()

    async def __aenter__(self) -> Tab:
        self.ws = await connect(self.uri, origin=self.origin, open_timeout=10,
                                additional_headers={"Cookie": self.cookie})
        self.reader = asyncio.create_task(self._read())
        self.snapshot = await self.next()
        assert self.snapshot["type"] == "snapshot"
        return self

    async def __aexit__(self, *exc) -> None:
        self.reader.cancel()
        await self.ws.close()

    async def _read(self) -> None:
        async for frame in self.ws:
            message = json.loads(frame)
            if message["type"] not in ("audience", "pong"):
                await self.inbox.put(message)

    async def next(self, timeout_s: float = 10) -> dict:
        return await asyncio.wait_for(self.inbox.get(), timeout_s)

    async def quiet(self, timeout_s: float = 0.5) -> bool:
        try:
            message = await asyncio.wait_for(self.inbox.get(), timeout_s)
        except TimeoutError:
            return True
        raise AssertionError(f"unexpected {message}")

    async def send(self, message: dict) -> None:
        await self.ws.send(json.dumps(message))


async def one_race(ports: list[int], alice: Visitor, bob: Visitor, cookies: list[str], swap: bool) -> str:
    game_id = await asyncio.to_thread(alice.create_game, "alice", "B")
    await asyncio.to_thread(bob.join, game_id, "bob")
    async with Tab(ports[0], game_id, cookies[0]) as a, Tab(ports[0], game_id, cookies[1]) as b1, \
            Tab(ports[1], game_id, cookies[1]) as b2:
        v = a.snapshot["v"]
        await a.send({"type": "move", "move": "11-15", "v": v})
        for tab in (a, b1, b2):
            assert (await tab.next())["type"] == "move"
        await a.send({"type": "takeback_propose"})
        for tab in (a, b1, b2):
            offered = await tab.next()
            assert (offered["type"], offered["what"], offered["v"]) == ("update", "takeback_offered", v + 2)
        v += 2
        frames = [b1.send({"type": "takeback_accept"}), b2.send({"type": "move", "move": "23-19", "v": v})]
        await asyncio.gather(*(frames[::-1] if swap else frames))
        event = await a.next()
        assert event["type"] in ("takeback", "move") and event["v"] == v + 1, event
        assert await a.quiet()
        if event["type"] == "takeback":
            assert (event["state"]["ply"], event["state"]["fen"]) == (0, START)
            assert (await b1.next())["type"] == "takeback"
            got = sorted(m.get("code", m["type"]) for m in [await b2.next() for _ in range(3)])
            assert got == ["snapshot", "stale", "takeback"], got
        else:
            assert (event["ply"], event["state"]["fen"], event["state"]["takeback_offer"]) == (2, AFTER_REPLY, None)
            assert (await b2.next())["type"] == "move"
            got = sorted(m.get("code", m["type"]) for m in [await b1.next() for _ in range(2)])
            assert got == ["move", "no_offer"], got
        for tab in (a, b1, b2):
            assert await tab.quiet(0.3)
        # What is stored is the outcome's: a fresh snapshot from either process agrees.
        for tab in (b1, b2):
            await tab.send({"type": "sync"})
            snap = await tab.next()
            assert snap["v"] == v + 1
            assert snap["moves"] == ([] if event["type"] == "takeback" else ["11-15", "23-19"])
        return event["type"]


def test_a_takeback_accepted_on_one_process_while_a_move_is_played_on_another_settles_once(tmp_path):
    with running_site(tmp_path, daphnes=2, front=False) as site:
        ports = [d.port for d in site["daphnes"]]

        async def main() -> list[str]:
            base = f"http://127.0.0.1:{ports[0]}"
            alice, bob = Visitor(base), Visitor(base)
            cookies = [await asyncio.to_thread(v.cookie_header) for v in (alice, bob)]
            return [await one_race(ports, alice, bob, cookies, swap=i % 2 == 1) for i in range(8)]

        outcomes = asyncio.run(main())
    print("winners:", outcomes)  # which side won each race: both orders are possible and both are checked
    assert set(outcomes) <= {"takeback", "move"} and len(outcomes) == 8
