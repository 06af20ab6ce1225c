"""The test suite's databases (``checkers_site/settings_test.py``): Django's PostgreSQL and SQLite
backends, except for the flush that ends each test that commits.

A test whose rows the game sockets' database threads must see commits them (pytest-django's
``transactional_db``), and every table is flushed after it; Django then sends ``post_migrate``,
which makes the content types and the permissions again.  Making them again cost more than the
test itself (0.4 s a test, most of it inserting every permission anew).  Here the flush keeps those
two tables, whose rows only migrations and ``post_migrate`` write, so ``post_migrate`` finds them
all and writes nothing; and on PostgreSQL it deletes the rows instead of ``TRUNCATE``, which gives
every table, index and sequence new files for the few rows a test leaves.  Django makes every
foreign key ``DEFERRABLE INITIALLY DEFERRED`` there, so the order of the deletes does not matter
within the flush's transaction.
"""

from __future__ import annotations

from typing import Any

#: The tables that the flush leaves as they are: migrations and ``post_migrate`` fill them.
KEPT = frozenset({"django_content_type", "auth_permission"})


def flushed(tables: Any) -> list[str]:
    """The tables that a flush of ``tables`` empties: all but :data:`KEPT`."""
    return [table for table in tables if table not in KEPT]
