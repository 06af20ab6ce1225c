"""Structured logs: one JSON object a line in production, readable text in development.

Every line carries the context of what was being served, taken from a
context variable (:func:`bind`): for a page request its ``method`` and
``path`` (never the query string, a header or a cookie), for a socket its
``game_id``, ``seat`` (``B``, ``W`` or ``S``) and, once it closes,
``close_code``.  Each socket and each request runs in an asyncio task of its
own, so the context of one never reaches another's lines; tasks and threads
started while serving one inherit it.

``LOG_FORMAT`` picks the formatter: ``json`` (default without
``DJANGO_DEBUG``) or ``text`` (default with it).  Daphne's access log takes
the same format (``checkers_site.serve``, :func:`access_record`).

A request naming a host the site does not serve (``DJANGO_ALLOWED_HOSTS``) is
the client's doing: Django logs it as an error with a traceback, which error
reports (Sentry) would count as the site's; here it is one warning line
(:class:`ClientHostWarning`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import re
from collections.abc import Iterator
from typing import Any

from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

#: The fields :func:`bind` may set, in the order the text format shows them.
CONTEXT_FIELDS = ("method", "path", "game_id", "seat", "close_code")

_context: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("log_context", default={})  # noqa: B039 - never mutated, replaced


def bind(**fields: Any) -> None:
    """Add ``fields`` (of :data:`CONTEXT_FIELDS`) to the context of every line logged from here on
    in this task (and the tasks and threads it starts afterwards)."""
    _context.set({**_context.get(), **fields})


@contextlib.contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """:func:`bind` for the duration of a ``with`` block (a request served in a reused thread)."""
    token = _context.set({**_context.get(), **fields})
    try:
        yield
    finally:
        _context.reset(token)


def context() -> dict[str, Any]:
    """The fields bound now."""
    return dict(_context.get())


class RequestContext:
    """ASGI middleware around the HTTP application: binds each request's ``method`` and ``path``
    for the whole request, so Django's own lines about it (``django.request``: a 404, a 500,
    written after the middleware have run) carry them too."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.application(scope, receive, send)
        with bound(method=scope.get("method"), path=scope.get("path")):
            return await self.application(scope, receive, send)


#: The most characters of a request's path (or of any text Django's request lines quote) a log line
#: shows; the rest is cut, ending with ``…``.  A client's 16 KiB path is not written out in full.
MAX_PATH_LOGGED = 200


#: Characters a client's text must not bring into a log line as they are: control characters (a
#: newline would start a forged line of its own, a NUL corrupts the file) and the line separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def cut(text: str, limit: int = MAX_PATH_LOGGED) -> str:
    """``text`` with its control characters written as escapes (``\\n``, ``\\x00``), then cut to
    ``limit`` characters, ``…`` marking the cut."""
    text = _UNSAFE.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)
    return text if len(text) <= limit else text[:limit] + "…"


class ContextFilter(logging.Filter):
    """Handler filter: copies the bound context onto each record (a field the call gave in ``extra``
    wins), the ``path`` cut (:func:`cut`); and cuts the long texts Django's ``django.request`` lines
    quote (the path again, in "Not Found: <path>")."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in _context.get().items():
            if not hasattr(record, key):
                setattr(record, key, cut(value) if key == "path" and isinstance(value, str) else value)
        if record.name.startswith("django.") and isinstance(record.args, tuple):
            record.args = tuple(cut(a) if isinstance(a, str) else a for a in record.args)
        return True


class ClientHostWarning(logging.Filter):
    """Filter of the ``django.security.DisallowedHost`` logger: the line about a ``Host`` header
    the site does not serve (a scanner, an address typed by hand, a forged header) becomes a
    ``WARNING`` without a traceback.  It runs before any handler, so an error report (Sentry's
    handler takes ``ERROR`` lines) never sees it as an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        record.exc_info = record.exc_text = None
        return True


#: The logger name of Daphne's access lines in the JSON format.
ACCESS_LOGGER = "checkers_site.access"


def access_record(message: str, **fields: Any) -> logging.LogRecord:
    """An ``INFO`` line of :data:`ACCESS_LOGGER` saying ``message`` with ``fields`` (the request's
    ``path`` cut as :func:`cut` cuts it), for a formatter to write."""
    record = logging.LogRecord(ACCESS_LOGGER, logging.INFO, __file__, 0, message, None, None)
    if isinstance(fields.get("path"), str):
        fields["path"] = cut(fields["path"])
    record.__dict__.update(fields)
    return record


class JsonFormatter(_JsonFormatter):
    """One JSON object a line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``, the
    context and any ``extra`` fields, and ``exc_info`` for a traceback.  Django's ``request``
    object (``django.request`` lines) is left out: its status and path are in the line already."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("fmt", "{levelname}{name}{message}")
        kwargs.setdefault("style", "{")
        kwargs.setdefault("timestamp", "time")
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        kwargs.setdefault("reserved_attrs", [*RESERVED_ATTRS, "request"])
        super().__init__(*args, **kwargs)


class TextFormatter(logging.Formatter):
    """``time level logger: message [game_id=… seat=…]`` for development consoles."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        shown = [f"{key}={getattr(record, key)}" for key in CONTEXT_FIELDS if hasattr(record, key)]
        if not shown:
            return text
        first, newline, rest = text.partition("\n")
        return f"{first} [{' '.join(shown)}]{newline}{rest}"


def logging_config(fmt: str, level: str) -> dict[str, Any]:
    """The ``LOGGING`` setting: one console handler with the context filter and the ``json`` or
    ``text`` formatter; a disallowed ``Host`` logged as a warning (:class:`ClientHostWarning`)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "checkers_site.ops.logs.ContextFilter"},
                    "client_host": {"()": "checkers_site.ops.logs.ClientHostWarning"}},
        "formatters": {
            "json": {"()": "checkers_site.ops.logs.JsonFormatter"},
            "text": {"()": "checkers_site.ops.logs.TextFormatter"},
        },
        "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["context"],
                                 "formatter": "json" if fmt == "json" else "text"}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {"django": {"level": "WARNING"}, "daphne": {"level": "WARNING"},
                    "django.security.DisallowedHost": {"filters": ["client_host"]}},
    }
