"""Every refused websocket handshake leaves one log line with its reason, path and client address,
and never the session cookie (checkers_site/handshakes.py)."""

from __future__ import annotations

import logging

import pytest
from channels.db import database_sync_to_async
from channels.sessions import InstanceSessionWrapper
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from checkers_site.asgi import application
from game.round import actions
from tests.web.conftest import make_browser

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ADDRESS = "198.51.100.7"


async def refused(path: str, headers, caplog) -> list[str]:
    """Open ``path`` from :data:`ADDRESS`; return the handshake log lines it left."""
    comm = WebsocketCommunicator(application, path, headers=headers)
    comm.scope["client"] = [ADDRESS, 41000]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="checkers_site.handshakes"):
        connected, _ = await comm.connect(timeout=5)
        if connected:
            while (await comm.receive_output(timeout=5))["type"] != "websocket.close":
                pass
        await comm.disconnect()
    return [r.getMessage() for r in caplog.records if r.name == "checkers_site.handshakes"]


def assert_one_line(lines: list[str], path: str, code: int, reason: str, secret: str) -> None:
    assert len(lines) == 1, lines
    line = lines[0]
    assert f"path='{path}'" in line and f"client={ADDRESS}" in line and f"code={code}" in line, line
    assert reason in line, line
    assert secret not in line  # never the session cookie


async def test_bad_origin_is_logged_with_the_origin(alice, caplog):
    lines = await refused("/ws/game/abcdefghij/", alice.headers(origin="https://evil.example"), caplog)
    assert_one_line(lines, "/ws/game/abcdefghij/", 403, "origin 'https://evil.example' not allowed", alice.cookie)


async def test_unknown_game_is_logged(alice, caplog):
    lines = await refused("/ws/game/abcdefghij/", alice.headers(), caplog)
    assert_one_line(lines, "/ws/game/abcdefghij/", 4404, "no such game", alice.cookie)


async def test_a_path_without_a_route_is_logged(alice, caplog):
    lines = await refused("/ws/nothing/", alice.headers(), caplog)
    assert_one_line(lines, "/ws/nothing/", 4404, "no route", alice.cookie)


async def test_lobby_without_a_session_is_logged(caplog):
    headers = [(b"origin", b"http://127.0.0.1:8000"), (b"host", b"127.0.0.1:8000")]
    lines = await refused("/ws/lobby/", headers, caplog)
    assert_one_line(lines, "/ws/lobby/", 4401, "no session", "sessionid")


@override_settings(GAME_SOCKETS_PER_SESSION=1)
async def test_a_socket_over_the_limit_is_logged_with_the_limit(alice, caplog):
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    first, _ = await alice.connect(game.id)
    lines = await refused(f"/ws/game/{game.id}/", alice.headers(), caplog)
    assert_one_line(lines, f"/ws/game/{game.id}/", 4429, "sockets_per_session limit 1", alice.cookie)
    assert alice.player_id not in lines[0]
    await first.disconnect()


async def test_an_accepted_socket_logs_no_refusal(caplog):
    bob = make_browser("bob")
    game = await database_sync_to_async(actions.create_game)(bob.player_id, "bob", "B")
    comm = WebsocketCommunicator(application, f"/ws/game/{game.id}/", headers=bob.headers())
    with caplog.at_level(logging.INFO, logger="checkers_site.handshakes"):
        assert (await comm.connect(timeout=5))[0]
        await comm.receive_json_from(timeout=5)
        await comm.disconnect()
    assert not [r for r in caplog.records if r.name == "checkers_site.handshakes"]


async def test_the_game_socket_sends_its_frames_past_the_session_middleware(monkeypatch):
    """Text frames go to the server's own ``send`` (``FRAME_SEND``), which HandshakeLog leaves in the
    scope; the accept and the close still pass through every middleware."""
    through_sessions = []
    original = InstanceSessionWrapper.send

    async def counted(self, message):
        through_sessions.append(message["type"])
        return await original(self, message)

    monkeypatch.setattr(InstanceSessionWrapper, "send", counted)
    bob = make_browser("bob")
    game = await database_sync_to_async(actions.create_game)(bob.player_id, "bob", "B")
    comm = WebsocketCommunicator(application, f"/ws/game/{game.id}/", headers=bob.headers())
    assert (await comm.connect(timeout=5))[0]
    snapshot = await comm.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot"
    await comm.send_json_to({"type": "ping"})
    assert (await comm.receive_json_from(timeout=5))["type"] == "pong"
    await comm.disconnect()
    assert through_sessions == ["websocket.accept"]
