"""How long a transaction of the site waits for a row lock: PostgreSQL's ``lock_timeout``, set in
the transaction itself.

The limit is ``DATABASE_LOCK_TIMEOUT_MS`` (settings), set with ``SET LOCAL`` at the start of every
transaction that may wait for a row lock (the game's, a rating's, a puzzle solver's, a review's,
an account's).  A ``SET LOCAL`` lives and dies with its transaction, so it holds behind PgBouncer in
transaction pooling, which hands each transaction whichever server connection is free: a
connection start-up option would be refused there, or ignored when PgBouncer is told to ignore it,
and a session's ``SET`` would stay on a server connection that other clients then use.
"""

from __future__ import annotations

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.transaction import TransactionManagementError


def wait_for_locks_at_most(using: str = DEFAULT_DB_ALIAS) -> None:
    """Make the current transaction of the connection ``using`` wait at most
    ``DATABASE_LOCK_TIMEOUT_MS`` (ms) for any lock; past it the waiting statement fails with
    PostgreSQL's ``lock_not_available`` (SQLSTATE 55P03, an ``OperationalError``).  One ``SET
    LOCAL`` on PostgreSQL; nothing elsewhere (SQLite's writers wait for the database's lock as
    their connection's ``timeout`` says).  Raises ``TransactionManagementError`` outside a
    transaction (``transaction.atomic()``), where the setting would end with the statement."""
    conn = connections[using]
    if conn.vendor != "postgresql":
        return
    if not conn.in_atomic_block:
        raise TransactionManagementError("lock_timeout is set per transaction: open one first.")
    with conn.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = {int(settings.DATABASE_LOCK_TIMEOUT_MS)}")
