"""A transaction waiting for a game's row gives up after ``DATABASE_LOCK_TIMEOUT_MS`` with the
site's refusal ``busy`` (PostgreSQL's ``lock_timeout``, set per transaction by
``game/locks.py``), directly and through a private PgBouncer in transaction pooling started here,
where a connection start-up option is refused.  SQLite has no row locks: skipped there."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import connection, connections
from django.db.backends.postgresql.base import DatabaseWrapper

from game.errors import ActionError
from game.models import Game
from game.round import actions
from tests.system.processes import free_port, wait_for_port
from tests.web.conftest import row_held

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB = "a" * 32, "b" * 32
LOCK_TIMEOUT_MS = 300


@pytest.fixture(autouse=True)
def postgresql_only(settings):
    if connection.vendor != "postgresql":
        pytest.skip("row locks: run with DATABASE_URL=postgres://...")
    settings.DATABASE_LOCK_TIMEOUT_MS = LOCK_TIMEOUT_MS


def started_game() -> str:
    game = actions.create_game(ALICE, "alice", "B", time_control="5+3")
    actions.join_game(game.id, BOB, "bob")
    return game.id


def resign_while_held(game_id: str, through: dict | None = None) -> tuple[ActionError | None, float, str]:
    """Alice resigns in a thread of her own (through the database settings ``through``, default
    the site's) while another transaction holds the row for 30 s: ``(the refusal, seconds it
    took, lock_timeout of that connection afterwards)``."""
    out: dict = {}

    def resign() -> None:
        if through is not None:
            connections["default"] = DatabaseWrapper(through, alias="default")
        started = time.monotonic()
        try:
            actions.resign(game_id, ALICE)
        except ActionError as exc:
            out["error"] = exc
        out["took"] = time.monotonic() - started
        with connections["default"].cursor() as cursor:
            cursor.execute("SHOW lock_timeout")
            out["after"] = cursor.fetchone()[0]
        connections["default"].close()

    with row_held(game_id, for_s=30):
        waiter = threading.Thread(target=resign)
        waiter.start()
        waiter.join(timeout=20)
        assert not waiter.is_alive(), "still waiting for the row"
    return out.get("error"), out["took"], out["after"]


def test_a_transaction_waiting_for_a_held_game_row_gives_up_with_busy():
    game_id = started_game()
    error, took, after = resign_while_held(game_id)
    assert error is not None and error.code == "busy"
    assert took >= LOCK_TIMEOUT_MS / 1000      # it did wait, and gave up long before the 30 s hold
    assert after == "0"                        # set for the transaction only, not the connection
    assert Game.objects.get(pk=game_id).status == Game.Status.ACTIVE


@pytest.fixture
def pgbouncer() -> Iterator[int]:
    """A PgBouncer in transaction pooling in front of the test database; its port."""
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not os.path.exists(binary):
        pytest.skip("PgBouncer is not installed (Debian: apt-get install pgbouncer)")
    db = connection.settings_dict
    port = free_port()
    folder = tempfile.TemporaryDirectory(prefix="pgbouncer-")   # readable by the user it runs as
    tmp_path = Path(folder.name)
    tmp_path.chmod(0o777)
    (tmp_path / "pgbouncer.ini").write_text(
        f"[databases]\n{db['NAME']} = host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {tmp_path / 'users.txt'}\npool_mode = transaction\n"
        f"max_client_conn = 50\ndefault_pool_size = 5\nlogfile = {tmp_path / 'pgbouncer.log'}\n")
    (tmp_path / "users.txt").write_text(f'"{db["USER"]}" ""\n')
    command = [binary, str(tmp_path / "pgbouncer.ini")]
    if os.geteuid() == 0:
        command[1:1] = ["-u", "postgres"]    # PgBouncer refuses to run as root
    with open(tmp_path / "output.txt", "wb") as output:
        proc = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        try:
            wait_for_port(port, proc, timeout_s=10)
        except RuntimeError:
            raise RuntimeError((tmp_path / "output.txt").read_text()) from None
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        folder.cleanup()


def test_through_pgbouncer_in_transaction_pooling_the_wait_still_gives_up_with_busy(pgbouncer):
    db = connection.settings_dict
    # The start-up option the site used to send is refused by PgBouncer.
    with pytest.raises(psycopg.OperationalError, match="unsupported startup parameter"):
        psycopg.connect(host="127.0.0.1", port=pgbouncer, dbname=db["NAME"], user=db["USER"],
                        options="-c lock_timeout=300").close()
    game_id = started_game()
    options = {k: v for k, v in db["OPTIONS"].items() if k != "pool"}   # one plain connection
    through = {**db, "HOST": "127.0.0.1", "PORT": pgbouncer, "OPTIONS": options}
    error, took, after = resign_while_held(game_id, through)
    assert error is not None and error.code == "busy"
    assert took >= LOCK_TIMEOUT_MS / 1000
    assert after == "0"
    assert Game.objects.get(pk=game_id).status == Game.Status.ACTIVE
