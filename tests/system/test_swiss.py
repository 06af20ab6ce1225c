"""A 5-round Swiss of nine players end to end on a real site: two Daphne processes, a worker of the
``tournaments`` queue with RQ's scheduler, and guests over real sockets, each on the event's socket
and, when it says ``paired``, on its game's socket answering at once with a random legal move (or
resigning now and then), at 1+0.

- One player's page goes away for good once their second game is over: their next game is
  aborted by the first-move clock (asked by the opponent's socket), a forfeit: lost for them, won
  for the opponent, and they are withdrawn, paired no more.
- While the second round is played, one Daphne process is killed: its players' pages open the
  event's socket again on the other one, find their game in play from the page ("Your game") and
  play on, as a reloaded page does.

Then: five rounds were played; each round paired everyone still in the event once (a game or a
bye), a bye exactly when they were odd, never twice to one player; nobody met an opponent twice
or sat in two games at once; every game was scored, and the standings are what the stored games
give.  The forfeit's first-move clock is the one wait (30 s); the rounds themselves take a few
seconds each."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.system.processes import ROOT, running_site
from tests.system.test_arena import SITE_ENV, join, my_game, play_game, shell

PLAYERS, ROUNDS = 9, 5
#: The player whose page goes away for good after their second game (on the Daphne that stays).
GONE = 2
#: The Daphne process killed once this many games have finished (during the second round).
KILL_AFTER_GAMES = 6
#: The longest the event may take (s): a guard against a hang (a quiet machine needs about 35 s).
DEADLINE_S = 300


CREATE = """
from datetime import timedelta
from django.utils import timezone
from game.tournaments import arena
from game.tournaments.models import Tournament
from tests.ratings.helpers import account
t = arena.create(account("swisshost"), "System Swiss", "1+0", 0, timezone.now() + timedelta(minutes=10),
                 rated=False, system=Tournament.System.SWISS, rounds={rounds})
print(t.id)
"""
START = """
from django.utils import timezone
from game.tournaments import jobs
from game.tournaments.models import Tournament
Tournament.objects.filter(pk={id!r}).update(starts_at=timezone.now())
jobs.schedule_tick(Tournament.objects.get(pk={id!r}))
"""
CHECK = """
import json
from game.models import Game
from game.tournaments import standings
from game.tournaments.models import Entry, Pairing, Tournament
t = Tournament.objects.get(pk={id!r})
games = []
for p in Pairing.objects.filter(tournament=t).select_related("game"):
    g = p.game
    games.append({{"round": p.round, "black": p.black, "white": p.white, "scored": p.scored,
                  "points": [p.black_points, p.white_points], "status": g.status, "result": g.result,
                  "ply": g.ply, "turn": g.turn.value, "created": g.created_at.timestamp(),
                  "finished": g.finished_at.timestamp() if g.finished_at else None}})
entries = {{e.player_id: {{"score": e.score, "withdrawn": e.withdrawn, "bye": e.bye_round, "number": e.number}}
           for e in Entry.objects.filter(tournament=t)}}
table = {{row["player"]: row["score"] for row in standings.table(t)}}
print(json.dumps({{"status": t.status, "round": t.round, "games": games, "entries": entries, "table": table}}))
"""


async def swiss_player(ports: list[int], index: int, tournament_id: str, cookie: str, ended: list[str],
                       leave_after: int | None = None) -> int:
    """Follow the event's socket and play every game it pairs this player in, until the event is
    finished; a socket dropped (its Daphne killed) opens again on a process still up, and the game
    in play is found from the page.  With ``leave_after``: the page goes away for good once that
    many games are over.  Returns the games played to their end."""
    rng, done = random.Random(index), set()
    while True:
        port = ports[index % len(ports)]
        try:
            async with connect(f"ws://127.0.0.1:{port}/ws/tournament/{tournament_id}/",
                               origin=f"http://127.0.0.1:{port}", additional_headers={"Cookie": cookie}) as socket:
                if json.loads(await socket.recv())["status"] == "finished":
                    return len(done)
                pending = await asyncio.to_thread(my_game, f"http://127.0.0.1:{port}", tournament_id, cookie)
                while True:
                    if pending and pending not in done:
                        await play_game(port, pending, cookie, rng, ended)
                        done.add(pending)
                        if leave_after is not None and len(done) >= leave_after:
                            return len(done)
                    message = json.loads(await socket.recv())
                    if message["type"] == "standings" and message["status"] == "finished":
                        return len(done)
                    pending = message["game"] if message["type"] == "paired" else None
        except (ConnectionClosed, OSError):
            await asyncio.sleep(0.2)        # a page reconnecting, on a process still up


async def everyone(site: dict, tournament_id: str, cookies: list[str]) -> None:
    ports = [daphne.port for daphne in site["daphnes"]]
    ended: list[str] = []
    tasks = [asyncio.create_task(swiss_player(ports, i, tournament_id, cookie, ended,
                                              leave_after=2 if i == GONE else None))
             for i, cookie in enumerate(cookies)]
    deadline = time.monotonic() + DEADLINE_S
    while len(ended) < KILL_AFTER_GAMES:
        assert time.monotonic() < deadline, f"only {len(ended)} games finished"
        await asyncio.sleep(0.1)
    site["daphnes"][1].kill()
    ports.remove(site["daphnes"][1].port)
    done, _ = await asyncio.wait(tasks, timeout=deadline - time.monotonic())
    assert len(done) == len(tasks), "the event did not finish in time"
    for task in done:
        task.result()


def half_points(game: dict, seat: str) -> int:
    """What ``seat`` (``"B"``/``"W"``) scores by the stored game: a win 2, a draw 1; an aborted game
    is lost by the side that let its first move's clock run out (the side to move, with no move
    yet) and won by the other."""
    if game["status"] == "aborted":
        return 0 if game["turn"] == seat else 2
    return {"1-0": {"B": 2}, "0-1": {"W": 2}, "1/2-1/2": {"B": 1, "W": 1}}.get(game["result"], {}).get(seat, 0)


def test_a_five_round_swiss_of_nine_over_real_sockets_scores_what_the_games_give(tmp_path):
    with running_site(tmp_path, daphnes=2, front=False, env=SITE_ENV) as site:
        env = site["daphnes"][0].env
        worker = subprocess.Popen([sys.executable, "manage.py", "rqworker", "tournaments", "--with-scheduler"],
                                  cwd=ROOT, env=env, stdout=(tmp_path / "worker.log").open("w"),
                                  stderr=subprocess.STDOUT)
        try:
            tournament_id = shell(env, CREATE.format(rounds=ROUNDS))
            ports = [daphne.port for daphne in site["daphnes"]]
            with ThreadPoolExecutor(8) as pool:
                cookies = list(pool.map(lambda i: join(f"http://127.0.0.1:{ports[i % 2]}", tournament_id),
                                        range(PLAYERS)))
            shell(env, START.format(id=tournament_id))
            asyncio.run(everyone(site, tournament_id, cookies))
            report = json.loads(shell(env, CHECK.format(id=tournament_id)))
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    assert (report["status"], report["round"]) == ("finished", ROUNDS)
    games, entries = report["games"], report["entries"]
    assert len(entries) == PLAYERS and all(game["scored"] for game in games)
    # the player who left: one game aborted without their move (a forfeit), then withdrawn
    gone = [p for p, e in entries.items() if e["withdrawn"]]
    assert len(gone) == 1
    [forfeit] = [g for g in games if g["status"] == "aborted"]
    assert gone[0] == (forfeit["black"] if forfeit["turn"] == "B" else forfeit["white"])
    assert max(g["round"] for g in games if gone[0] in (g["black"], g["white"])) == forfeit["round"]
    # each round: everyone still in the event once, a bye exactly when they were odd, never twice
    byes = Counter(e["bye"] for e in entries.values() if e["bye"])
    assert sum(byes.values()) == len({e["bye"] for e in entries.values() if e["bye"]})
    for round_number in range(1, ROUNDS + 1):
        seated = [p for g in games if g["round"] == round_number for p in (g["black"], g["white"])]
        byed = [p for p, e in entries.items() if e["bye"] == round_number]
        present = [p for p in entries if p not in gone or round_number <= forfeit["round"]]
        assert sorted(seated + byed) == sorted(present), f"round {round_number} left someone out"
        assert len(byed) == len(present) % 2
    # nobody met an opponent twice, nor sat in two games at once
    met = [frozenset((g["black"], g["white"])) for g in games]
    assert len(met) == len(set(met))
    for player in entries:
        own = sorted((g["created"], g["finished"]) for g in games if player in (g["black"], g["white"]))
        for earlier, later in itertools.pairwise(own):
            assert earlier[1] is not None and earlier[1] <= later[0], f"{player} was in two games at once"
    # the standings are what the stored games give (and the byes)
    expected = Counter()
    for g in games:
        assert g["points"] == [half_points(g, "B"), half_points(g, "W")]
        expected[g["black"]] += half_points(g, "B")
        expected[g["white"]] += half_points(g, "W")
    for player, entry in entries.items():
        expected[player] += 2 if entry["bye"] else 0
        assert entry["score"] == expected[player], player
        assert report["table"][player] == expected[player] / 2
