"""Faults on the game socket: the database refusing connections."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.db import connection, connections

from game import sockets
from tests.web.conftest import recv
from tests.web.test_game_consumer import start_game, stored

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


def refuse_database() -> dict:
    """Point the default database at nowhere (a closed port, or a folder that does not exist)
    and drop the open connection, so the next query fails to connect; return the old settings."""
    config = connections.settings["default"]
    saved = dict(config)
    close_everything()
    if config["ENGINE"].endswith("sqlite3"):
        config["NAME"] = "/nonexistent-folder/checkers.sqlite3"
    else:
        config["HOST"], config["PORT"] = "127.0.0.1", "1"
    return saved


def close_everything() -> None:
    """Close this thread's connection, the game sockets' database threads' and the connection
    pool (PostgreSQL), so that the next query connects with the settings as they are then."""
    connection.close()
    sockets.close_db_connections()
    if hasattr(connection, "close_pool"):
        connection.close_pool()


def restore_database(saved: dict) -> None:
    close_everything()
    connections.settings["default"].clear()
    connections.settings["default"].update(saved)


async def test_database_refusing_connections_gives_mover_clear_error_and_changes_nothing(alice, bob):
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    before = await database_sync_to_async(stored)(game_id)
    saved = await database_sync_to_async(refuse_database)()
    try:
        await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
        error = await recv(a)
        assert error["type"] == "error" and error["code"] == "unavailable"
        assert "database" in error["message"]
        await a.send_json_to({"type": "resign"})
        assert (await recv(a))["code"] == "unavailable"
    finally:
        await database_sync_to_async(restore_database)(saved)
    assert await database_sync_to_async(stored)(game_id) == before
    await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"]})
    assert (await recv(a))["move"] == "11-15"
    assert (await recv(b))["move"] == "11-15"
    for comm in (a, b):
        await comm.disconnect()
