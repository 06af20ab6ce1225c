"""An arena end to end on a real site: two Daphne processes, a worker of the ``tournaments`` queue
with RQ's scheduler, and guests over real sockets, each on the arena's socket and, when it says
``paired``, on its game's socket answering at once with a random legal move (or resigning).  One
player's page is gone as their first game starts (both sockets closed, no move made): the
first-move clock aborts that game (a spectator's page asking the clock, as its countdown does) and
the player is withdrawn, never paired again.  Halfway, one Daphne process is killed (its players'
pages are gone with it).  Then the arena is ended: every game that finished in time was scored,
the standings are what the stored games give, and nobody was ever paired into two games at once.
The players play until games have finished, not for a set time: half of them before the kill, as
many as there are players in all (a slow machine only takes longer).

Forty players, as the issue asks: they join side by side, and a player paired before their
socket opened finds the game on the page ("Your game"), as a page does.  Against ten players, on
the shared 2-core machine, back to back: 71-81 s against 92-99 s of wall time, 36 s against 30 s
of CPU (the test and its processes): with more players left after the kill, fewer wait on a gone
player's first-move clock.  The gone player's game takes the first-move clock's 30 s to end: the
one wait this test may add, when the others' games finish sooner.  That player is one of the
killed Daphne process's, so the players left after the kill are as many as without them.  Every
player's game socket pings as the page does: a player waiting for the first move of an opponent
who is gone is not closed as silent (its page would not be)."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from websockets.asyncio.client import connect

from game.clock import FIRST_MOVE_S
from game.round.protocol import PING_EVERY_S
from game.tournaments import scoring
from tests.system.processes import ROOT, running_site
from tests.system.test_scaleout import Visitor

PLAYERS = 40
#: The longest the players may take to finish their games (s); they usually need 10-20 s.
PLAY_DEADLINE_S = 150
#: The players answer at once, a move every few milliseconds, all from 127.0.0.1: the limits on a
#: socket's, a session's and an address's game messages (set for people, and for one client's many
#: throwaway sessions) would refuse some moves, and a refused move leaves its game to the clock.
SITE_ENV = {"GAME_SOCKET_RATE_LIMIT": "1000/second", "GAME_SESSION_RATE_LIMIT": "", "GAME_ADDRESS_RATE_LIMIT": ""}
#: From this ply on, a player to move resigns with this chance instead of moving: games end sooner
#: than random play would end them, some won and some lost.
RESIGN_FROM_PLY, RESIGN_CHANCE = 16, 0.08

CREATE = """
from django.utils import timezone
from game.tournaments import arena, jobs
from tests.ratings.helpers import account
t = arena.create(account("systemhost"), "System Arena", "1+0", 10, timezone.now(), rated=False)
jobs.schedule_tick(t)
print(t.id)
"""
END = """
from datetime import timedelta
from django.utils import timezone
from game.tournaments.models import Tournament
t = Tournament.objects.get(pk={id!r})
Tournament.objects.filter(pk=t.pk).update(starts_at=timezone.now() - timedelta(minutes=t.minutes))
"""
CHECK = """
import json
from game.models import Game
from game.round.berserk import has_moved
from game.rules import Color, ballots
from game.clock import FIRST_MOVE_S
from game.round.protocol import PING_EVERY_S
from game.tournaments import scoring
from game.tournaments.models import Entry, Pairing, Tournament
t = Tournament.objects.get(pk={id!r})
out = {{"status": t.status, "players": {{}}}}
gone = Game.objects.filter(pk={gone!r}).first()
out["gone"] = {{"player": gone.player(gone.turn), "status": gone.status}} if gone else None
for entry in Entry.objects.filter(tournament=t):
    games = []
    for p in Pairing.objects.filter(tournament=t).filter(black=entry.player_id) | Pairing.objects.filter(
            tournament=t, white=entry.player_id):
        g = Game.objects.get(pk=p.game_id)
        games.append((g.created_at.timestamp(), g.finished_at.timestamp() if g.finished_at else None, g.status,
                      g.result, g.ply, "B" if p.black == entry.player_id else "W", p.scored,
                      g.finished_at is not None and g.finished_at <= t.ends_at, p.black_points, p.white_points))
    out["players"][entry.player_id] = {{"score": entry.score, "games": sorted(games), "withdrawn": entry.withdrawn}}
print(json.dumps(out))
"""


def shell(env: dict, code: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def join(base: str, tournament_id: str) -> str:
    """A new guest joins the arena through its page; returns the guest's cookie header."""
    guest = Visitor(base)
    page = guest.opener.open(f"{base}/tournaments/{tournament_id}").read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = urllib.parse.urlencode({"csrfmiddlewaretoken": token}).encode()
    guest.opener.open(urllib.request.Request(f"{base}/tournaments/{tournament_id}/join", data=data,
                                             headers={"Referer": f"{base}/tournaments/{tournament_id}"})).read()
    return "; ".join(f"{c.name}={c.value}" for c in guest.jar)


async def play_game(port: int, game_id: str, cookie: str, rng: random.Random, ended: list[str]) -> None:
    """Play ``game_id`` at once with random legal moves (or resign, now and then) until it is over;
    then add it to ``ended`` (the games seen finished, once each).  Pings as the page does, so that
    a wait for an opponent who is gone (their first-move clock runs 30 s) is not taken for a page
    gone silent."""
    async with connect(f"ws://127.0.0.1:{port}/ws/game/{game_id}/", origin=f"http://127.0.0.1:{port}",
                       additional_headers={"Cookie": cookie}) as socket:
        pinging = asyncio.create_task(ping(socket))
        try:
            await play_moves(socket, game_id, rng, ended)
        finally:
            pinging.cancel()


async def ping(socket) -> None:
    """A page's ``ping`` every :data:`~game.round.protocol.PING_EVERY_S` seconds."""
    while True:
        await asyncio.sleep(PING_EVERY_S)
        await socket.send(json.dumps({"type": "ping"}))


async def play_moves(socket, game_id: str, rng: random.Random, ended: list[str]) -> None:
    """Answer each state of ``socket``'s game with a move or a resignation until the game is over.
    As the page does, an ``audience`` notice of a version past the last one seen (an event that
    never came: its process died before sending it) asks for a snapshot (``sync``)."""
    seen = 0
    async for text in socket:
        message = json.loads(text)
        seen = max(seen, message.get("v") or 0)
        if message.get("type") == "audience" and (message.get("game_v") or 0) > seen:
            await socket.send(json.dumps({"type": "sync"}))
            continue
        state = message.get("state")
        if not state:
            continue
        if state["status"] in ("finished", "aborted"):
            if state["status"] == "finished" and game_id not in ended:
                ended.append(game_id)
            return
        if state.get("legal") and state["ply"] >= RESIGN_FROM_PLY and rng.random() < RESIGN_CHANCE:
            await socket.send(json.dumps({"type": "resign"}))
        elif state.get("legal"):
            await socket.send(json.dumps({"type": "move", "move": rng.choice(state["legal"]),
                                          "v": message["v"]}))


def my_game(base: str, tournament_id: str, cookie: str) -> str | None:
    """The player's game in play, as their event's page links it ("Your game"), or None."""
    request = urllib.request.Request(f"{base}/tournaments/{tournament_id}", headers={"Cookie": cookie})
    page = urllib.request.urlopen(request, timeout=10).read().decode()
    found = re.search(r'id="my-game" href="/g/([^/"]+)/"', page)
    return found.group(1) if found else None


async def player(port: int, tournament_id: str, cookie: str, seed: int, ended: list[str],
                 gone: dict | None = None) -> int:
    """Follow the arena's socket and play every game it pairs this player in; returns their count.
    A game paired before the socket opened is found as the page shows it ("Your game").  With
    ``gone`` (a dict): the page goes away as the first game starts, once its first state came
    (both sockets closed, no move made); ``gone["game"]`` is that game's id."""
    rng, games = random.Random(seed), 0
    async with connect(f"ws://127.0.0.1:{port}/ws/tournament/{tournament_id}/", origin=f"http://127.0.0.1:{port}",
                       additional_headers={"Cookie": cookie}) as socket:
        await socket.recv()         # the standings: this socket hears its pairings from now on
        paired = await asyncio.to_thread(my_game, f"http://127.0.0.1:{port}", tournament_id, cookie)
        while True:
            if paired and gone is not None:
                async with connect(f"ws://127.0.0.1:{port}/ws/game/{paired}/",
                                   origin=f"http://127.0.0.1:{port}", additional_headers={"Cookie": cookie}) as game:
                    while "state" not in json.loads(await game.recv()):
                        pass
                gone["game"] = paired
                return 0
            if paired:
                games += 1
                await play_game(port, paired, cookie, rng, ended)
            message = json.loads(await socket.recv())
            paired = message["game"] if message["type"] == "paired" else None


async def watch_until_over(port: int, game_id: str, timeout_s: float) -> str:
    """A spectator's page on ``game_id``: asks the clock every second (as its countdown does when it
    reaches zero) until the game is over; returns its status."""
    async with connect(f"ws://127.0.0.1:{port}/ws/game/{game_id}/", origin=f"http://127.0.0.1:{port}") as socket:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            await socket.send(json.dumps({"type": "clock_check"}))
            try:
                while True:
                    state = json.loads(await asyncio.wait_for(socket.recv(), 1)).get("state")
                    if state and state["status"] in ("finished", "aborted"):
                        return state["status"]
            except TimeoutError:
                continue
    return "active"


async def until(ended: list[str], count: int, deadline: float) -> None:
    """Wait until ``count`` games have been seen finished (AssertionError past ``deadline``)."""
    while len(ended) < count:
        assert time.monotonic() < deadline, f"only {len(ended)} games finished"
        await asyncio.sleep(0.2)


async def everyone(site: dict, tournament_id: str, cookies: list[str]) -> str:
    """Everyone plays (the second player's page gone as their first game starts, the second Daphne,
    theirs, killed halfway); then the gone player's game is watched until the first-move clock ends it.
    Returns that game's id."""
    ports = [daphne.port for daphne in site["daphnes"]]
    ended: list[str] = []
    gone: dict = {}
    tasks = [asyncio.create_task(player(ports[i % len(ports)], tournament_id, cookie, i, ended,
                                        gone if i == 1 else None))
             for i, cookie in enumerate(cookies)]
    deadline = time.monotonic() + PLAY_DEADLINE_S
    await until(ended, PLAYERS // 2, deadline)
    site["daphnes"][1].kill()
    await until(ended, PLAYERS, deadline)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert "game" in gone, "the second player was never paired"
    assert await watch_until_over(ports[0], gone["game"], FIRST_MOVE_S + 5) == "aborted"
    return gone["game"]


def expected_score(games: list[list]) -> int:
    """A player's score as the stored games give it, by the arena's rules (``scoring.score``):
    the games finished by the arena's end and played for (``arena.played_for``: the players are
    guests, so only the moves count), in order (nobody went berserk here)."""
    total = streak = 0
    for _created, _finished, status, result, ply, seat, _scored, in_time, _bp, _wp in games:
        if status != "finished" or not in_time or ply < 4:   # given up before two moves each: not played for
            continue
        winner = {"1-0": "B", "0-1": "W"}.get(result)
        outcome = scoring.Result.DRAW if result == "1/2-1/2" else (
            scoring.Result.WIN if winner == seat else scoring.Result.LOSS)
        scored = scoring.score(outcome, streak, False, ply // 2)
        total, streak = total + scored.points, scored.streak
    return total


def test_an_arena_over_real_sockets_scores_what_the_games_give(tmp_path):
    with running_site(tmp_path, daphnes=2, front=False, env=SITE_ENV) as site:
        env = site["daphnes"][0].env
        worker = subprocess.Popen([sys.executable, "manage.py", "rqworker", "tournaments", "--with-scheduler"],
                                  cwd=ROOT, env=env, stdout=(tmp_path / "worker.log").open("w"),
                                  stderr=subprocess.STDOUT)
        try:
            tournament_id = shell(env, CREATE)
            ports = [daphne.port for daphne in site["daphnes"]]
            with ThreadPoolExecutor(8) as pool:   # the players join side by side, as people do
                cookies = list(pool.map(lambda i: join(f"http://127.0.0.1:{ports[i % 2]}", tournament_id),
                                        range(PLAYERS)))
            gone = asyncio.run(everyone(site, tournament_id, cookies))
            shell(env, END.format(id=tournament_id))
            deadline = time.monotonic() + 30
            check = CHECK.format(id=tournament_id, gone=gone)
            while (report := json.loads(shell(env, check)))["status"] != "finished" \
                    or not report["players"][report["gone"]["player"]]["withdrawn"]:
                assert time.monotonic() < deadline, "the arena's tick never finished it"
                time.sleep(1)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    players = report["players"]
    assert len(players) == PLAYERS
    # the player whose page went away: their game aborted by its clock, withdrawn, never paired again
    assert report["gone"]["status"] == "aborted"
    assert len(players[report["gone"]["player"]]["games"]) == 1
    finished = sum(1 for p in players.values() for g in p["games"] if g[2] == "finished")
    assert finished >= PLAYERS, f"only {finished} games finished"
    for player_id, record in players.items():
        in_time = [g for g in record["games"] if g[2] == "finished" and g[7]]
        assert all(g[6] for g in in_time), f"a finished game of {player_id} was never scored"
        assert record["score"] == expected_score(record["games"]), player_id
        games = record["games"]
        for earlier, later in itertools.pairwise(games):
            assert earlier[1] is not None and earlier[1] <= later[0], f"{player_id} was in two games at once"
