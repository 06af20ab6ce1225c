"""Routing by game: the repository's nginx sends every socket of a game to one Daphne process
(consistent hashing on the game id), that process alone reads the game's events from Redis, and
when it leaves its games move to another process without losing a move."""

from __future__ import annotations

import asyncio
import re
import shutil
import urllib.request

import pytest
import redis

from tests.system.processes import running_site
from tests.system.test_scaleout import Viewer, play, seat_players

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None,
                                reason="nginx is not installed (`apt-get install nginx`; .ci/run does)")

GAMES = 8
PROCESSES = 3


def events_read(port: int) -> dict[str, float]:
    """``checkers_game_events_read_total`` of the Daphne on ``port``, by ``wanted`` (yes / no)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    found = {"yes": 0.0, "no": 0.0}
    for wanted, value in re.findall(r'^checkers_game_events_read_total\{wanted="(yes|no)"\} (\S+)$', text, re.M):
        found[wanted] = float(value)
    return found


def test_a_games_sockets_go_to_one_process_which_alone_reads_its_events(tmp_path):
    env = {"CHANNELS_PREFIX": "asgi", "GAME_CREATE_RATE_LIMIT_ADDRESS": "100/minute"}
    with running_site(tmp_path, daphnes=PROCESSES, routing=True, env=env) as site:
        port = site["nginx"].port
        ports = {f"127.0.0.1:{d.port}": d for d in site["daphnes"]}

        async def scenario():
            games = [await seat_players(port) for _ in range(GAMES)]
            viewers: dict[str, list[Viewer]] = {}
            try:
                for game_id, cookies in games:
                    viewers[game_id] = [Viewer(port, game_id, cookie) for cookie in cookies]
                    for viewer in viewers[game_id]:
                        await viewer.start()
                served = {game_id: {v.upstreams[-1] for v in vs} for game_id, vs in viewers.items()}
                # Black, White and a spectator of each game: all three on one process.
                assert all(len(upstreams) == 1 for upstreams in served.values()), served
                home = {game_id: upstreams.pop() for game_id, upstreams in served.items()}
                assert len(set(home.values())) >= 2, home  # the games are spread over the processes

                for vs in viewers.values():
                    await play(vs[0], vs, "11-15", 1)
                # One subscriber per game channel in Redis: the process serving it.
                admin = redis.Redis.from_url(site["redis"].url)
                prefix = "asgi:game:"
                counts = dict(admin.pubsub_numsub(*[prefix + g for g in viewers]))
                admin.close()
                assert counts == {(prefix + g).encode(): 1 for g in viewers}, counts
                reads = {address: events_read(daphne.port) for address, daphne in ports.items()}
                print("events read per process (wanted yes / no):", reads)
                for address, figures in reads.items():
                    serves = address in home.values()
                    assert (figures["yes"] > 0) == serves, (address, figures)
                    assert figures["no"] == 0, (address, figures)

                # The process of the first game leaves: its sockets reconnect, all to one other
                # process, and the game goes on with nothing lost.
                game_id = games[0][0]
                gone = ports[home[game_id]]
                gone.kill()
                vs = viewers[game_id]
                for viewer in vs:
                    await viewer.wait(lambda viewer=viewer: viewer.reconnects >= 1 and viewer.ws is not None,
                                      timeout_s=30)
                # (nginx names every server it tried: the dead one first, then the one that served)
                now = {v.upstreams[-1].split(", ")[-1] for v in vs}
                assert len(now) == 1 and home[game_id] not in now, now
                await play(vs[1], vs, "22-18", 2)
                for viewer in vs:
                    assert viewer.moves == ["11-15", "22-18"]
                    assert viewer.events[-1] == 2
            finally:
                for vs in viewers.values():
                    for viewer in vs:
                        await viewer.close()

        asyncio.run(scenario())
