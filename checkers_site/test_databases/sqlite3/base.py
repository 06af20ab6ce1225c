"""SQLite for the test suite: a flush keeps the content types and the permissions
(:mod:`checkers_site.test_databases`)."""

from __future__ import annotations

from typing import Any

from django.db.backends.sqlite3 import base, operations

from checkers_site.test_databases import flushed


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style: Any, tables: Any, *, reset_sequences: bool = False,
                  allow_cascade: bool = False) -> list[str]:
        if reset_sequences or allow_cascade:
            return super().sql_flush(style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        return super().sql_flush(style, flushed(tables))


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
