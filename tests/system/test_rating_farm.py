"""A farmer and 40 throw-away accounts, black-box through the shipped nginx with two Daphne processes
and PostgreSQL: each puppet creates a rated 5+0 game, the farmer joins, the puppet resigns (half of
them at once, half after two moves a side).  The farmer gains nothing: a result given up before each
side made two moves is aborted, and accounts signed up from one address within days of each other
count nothing against each other until each has played others (docs/ratings.md, "Results that
count")."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import sqlite3
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from websockets.asyncio.client import connect

from tests.system.processes import running_site
from tests.system.test_scaleout import Visitor

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")

PUPPETS = 40
PASSWORD = "Farm-Pass-2026!"
OPENING = ["11-15", "23-19", "8-11", "22-18"]


class Patient(urllib.request.BaseHandler):
    """A request the front answers 429 (nginx's rate per address: the test goes faster than a
    person) is sent again after the time it says, as a patient client would, twenty times at most."""

    def http_error_429(self, request, response, code, message, headers):
        tries = getattr(request, "tries", 0)
        if tries >= 20:
            return None
        request.tries = tries + 1
        time.sleep(float(headers.get("Retry-After") or 1))
        return self.parent.open(request, timeout=request.timeout)


class Account(Visitor):
    """A browser signed up to an account of its own through the site's pages."""

    def __init__(self, base: str):
        super().__init__(base)
        self.opener.add_handler(Patient())

    def sign_up(self, username: str) -> Account:
        url = self._post("/accounts/signup/", {"username": username, "email": "", "password1": PASSWORD,
                                               "password2": PASSWORD})
        assert "/accounts/signup/" not in url, f"{username} was not signed up"
        return self

    def create_rated_game(self) -> str:
        url = self._post("/", {"name": "", "color": "B", "time_control": "5+0", "rated": "on"})
        return re.search(r"/g/([a-z0-9]+)/", url).group(1)


async def play(port: int, game_id: str, puppet: Account, farmer: Account, moves: list[str]) -> dict:
    """Over the game's sockets: ``moves`` played in turn (the puppet is Black), then the puppet
    resigns; returns the last state the farmer's socket saw."""
    origin = f"http://127.0.0.1:{port}"
    uri = f"ws://127.0.0.1:{port}/ws/game/{game_id}/"
    async with connect(uri, origin=origin, additional_headers={"Cookie": puppet.cookie_header()}) as black, \
            connect(uri, origin=origin, additional_headers={"Cookie": farmer.cookie_header()}) as white:
        v = json.loads(await black.recv())["v"]
        state = json.loads(await white.recv())["state"]
        for ply, move in enumerate(moves):
            await (black, white)[ply % 2].send(json.dumps({"type": "move", "move": move, "v": v}))
            v, state = await next_state(white, "move")
        await black.send(json.dumps({"type": "resign"}))
        _, state = await next_state(white, "update")
        return state


@contextlib.contextmanager
def site_database(url: str):
    """A connection to the site's database (the servers' SQLite file or PostgreSQL database)."""
    if url.startswith("sqlite:///"):
        db = sqlite3.connect(url[len("sqlite:///"):])
        try:
            yield db
        finally:
            db.close()
        return
    with psycopg.connect(url) as db:
        yield db


async def next_state(ws, kind: str) -> tuple[int, dict]:
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message["type"] == kind:
            return message["v"], message["state"]


def test_forty_puppet_resignations_give_the_farmer_no_rating_points(tmp_path):
    env = {"ACCOUNT_SIGNUP_RATE": "200/m/ip"}     # the test is not about the sign-up limit
    with running_site(tmp_path, daphnes=2, routing=True, env=env) as site:
        port = site["nginx"].port
        base = f"http://127.0.0.1:{port}"
        farmer = Account(base).sign_up("farmer")
        with ThreadPoolExecutor(4) as pool:
            puppets = list(pool.map(lambda n: Account(base).sign_up(f"puppet{n}"), range(PUPPETS)))
        ends = []
        for n, puppet in enumerate(puppets):
            game_id = puppet.create_rated_game()
            farmer.join(game_id, "farmer")
            moves = [] if n % 2 == 0 else OPENING
            ends.append(asyncio.run(play(port, game_id, puppet, farmer, moves)))
        with site_database(site["database_url"]) as db:
            farmer_id = db.execute("SELECT a.player_id FROM game_account a JOIN auth_user u ON u.id = a.user_id "
                                   "WHERE u.username = 'farmer'").fetchone()[0]
            ratings = db.execute(f"SELECT rating, games FROM game_rating WHERE player_id = '{farmer_id}'").fetchall()
            changes = db.execute(f"SELECT count(*) FROM game_ratingchange "
                                 f"WHERE player_id = '{farmer_id}'").fetchone()[0]
            statuses = db.execute("SELECT status, count(*) FROM game_game WHERE rated GROUP BY status").fetchall()
    # Half were given up before they were earned: aborted; the other half finished, counting nothing.
    assert sorted(statuses) == [("aborted", PUPPETS // 2), ("finished", PUPPETS // 2)]
    assert [end["status"] for end in ends] == ["aborted", "finished"] * (PUPPETS // 2)
    assert all(end["seats"]["W"].get("diff", 0) == 0 for end in ends)
    assert changes == 0 and ratings == []          # the farmer's rating never moved from a new player's
