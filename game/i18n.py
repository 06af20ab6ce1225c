"""Languages at the edges: the human texts of refusals, the language of a socket, and the scripts'
catalog.

A page request gets its language from Django's ``LocaleMiddleware`` (the language picker's
cookie, else the browser's ``Accept-Language``).  A websocket has no request: each socket reads
the same two from its handshake once (:func:`language_of_scope`) and renders every human text
it sends under that language (:func:`resolved`).

The actions that refuse (``ActionError``) run in the database threads, where no language is
active, so their messages are lazy (``gettext_lazy``, interpolated by :func:`lazy_text`): they
become words only when the socket or the view that sends them turns them into text.  Error codes
never change; only the human ``message`` is translated.

The scripts' texts come from Django's JavaScript catalog at ``jsi18n/<language>/<version>/``
(:class:`ScriptCatalog`): the page names its language and the version of the compiled catalogs
(:func:`catalog_version`), so a browser keeps it for a year and a release with other texts names
another address.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import django
from django.apps import apps
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_cache_control
from django.utils.functional import Promise, lazy
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.i18n import JavaScriptCatalog

from game import rules
from game.clock import TimeControl, TimeControlError
from game.players import computer_level
from game.rules import Color, Termination

if TYPE_CHECKING:
    from django_stubs_ext import StrPromise


def _interpolate(message: Any, params: dict[str, Any]) -> str:
    # A gettext_lazy text becomes words here; an ngettext_lazy one (its number named by a key of
    # params) also picks its plural form here.
    return str(message % params)


_lazy_interpolate = lazy(_interpolate, str)


def lazy_text(message: StrPromise | str, **params: Any) -> StrPromise:
    """``message % params``, computed when the text is needed, in the language active then:
    ``lazy_text(gettext_lazy("Version %(v)s is ahead."), v=3)``, or with a plural,
    ``lazy_text(ngettext_lazy("%(n)s move", "%(n)s moves", "n"), n=2)``."""
    return cast("StrPromise", _lazy_interpolate(message, params))


def resolved(message: dict[str, Any], language: str | None) -> dict[str, Any]:
    """``message`` with every lazy text turned into words of ``language`` (None: the active one)."""
    if not any(isinstance(value, Promise) for value in message.values()):
        return message
    with translation.override(language):
        return {key: str(value) if isinstance(value, Promise) else value for key, value in message.items()}


def _header(scope: Any, name: bytes) -> str:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value.decode("latin-1")
    return ""


def language_of_scope(scope: Any) -> str:
    """The language of a websocket, as ``LocaleMiddleware`` would choose it for a page of the
    same browser: the ``django_language`` cookie (the language picker), else the best of the
    ``Accept-Language`` header, else ``LANGUAGE_CODE``."""
    from django.utils.translation.trans_real import parse_accept_lang_header

    cookie = (scope.get("cookies") or {}).get(settings.LANGUAGE_COOKIE_NAME)
    candidates = [cookie] if cookie else []
    accept = _header(scope, b"accept-language")
    if accept and len(accept) <= 500:
        candidates += [lang for lang, _q in parse_accept_lang_header(accept) if lang != "*"]
    for candidate in candidates:
        try:
            return translation.get_supported_language_variant(candidate)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


def outcome_reason(outcome: rules.Outcome) -> str:
    """Why a game ended, in the active language (the rules' :attr:`~game.rules.Outcome.reason`
    is English, for logs and PDN)."""
    t = outcome.termination
    loser = outcome.winner.opponent if outcome.winner else None
    black = loser is Color.BLACK
    if t is Termination.NO_PIECES and loser:
        return _("Black has no pieces left") if black else _("White has no pieces left")
    if t is Termination.NO_MOVES and loser:
        return _("Black has no legal move") if black else _("White has no legal move")
    if t is Termination.REPETITION:
        return _("draw by threefold repetition")
    if t is Termination.FORTY_MOVES:
        return _("draw by the forty-move rule: 80 plies without a capture or a man move")
    if t is Termination.RESIGNATION and loser:
        return _("Black resigned") if black else _("White resigned")
    if t is Termination.AGREEMENT:
        return _("draw by agreement")
    if t is Termination.TIME_FORFEIT:
        if loser:
            return _("Black lost on time") if black else _("White lost on time")
        return _("time forfeit")
    if t is Termination.ABANDONED:
        if loser:
            return _("Black left the game") if black else _("White left the game")
        return _("draw: a player left the game")
    return _("game aborted")


def time_control_label(control: str) -> str:
    """A time control in words of the active language: ``"5+3"``, ``"3 days a move"``,
    ``"Untimed"`` (the clock's own :meth:`~game.clock.TimeControl.label` is English)."""
    try:
        parsed = TimeControl.parse(control)
    except TimeControlError:
        return str(control)
    if parsed.days:
        return ngettext("%(days)s day a move", "%(days)s days a move", parsed.days) % {"days": parsed.days}
    return str(parsed) if parsed.live else _("Untimed")


#: :func:`time_control_label`, computed when shown (for module-level choices).
time_control_label_lazy = lazy(time_control_label, str)


def pool_label(pool_id: str) -> str:
    """A "Play online" pool in words of the active language: ``"5+3 (5 min + 3 s a move)"``, and
    ``"5+3 (5 min + 3 s a move), 3-move ballot"`` for a pool whose games open with a ballot,
    ``"5+3 (5 min + 3 s a move), rated"`` for a rated pool."""
    if pool_id.endswith("-rated"):
        return _("%(pool)s, rated") % {"pool": pool_label(pool_id.removesuffix("-rated"))}
    if pool_id.endswith("-ballot"):
        return _("%(pool)s, 3-move ballot") % {"pool": pool_label(pool_id.removesuffix("-ballot"))}
    if "+" not in pool_id:
        return time_control_label(pool_id)
    minutes, increment = pool_id.split("+", 1)
    return _("%(control)s (%(minutes)s min + %(increment)s s a move)") % {
        "control": pool_id, "minutes": minutes, "increment": increment}


def seat_name(player: str | None, stored: str) -> str:
    """The name to show for a seat held by ``player`` (a player id): the computer's name in the active
    language ("Ordinateur (niveau 3)"), or ``stored`` (the name kept with the game) for a person."""

    level = computer_level(player)
    return stored if level is None else computer_name(level)


def computer_name(level: int) -> str:
    """The computer's display name at ``level`` in the active language ("Ordinateur (niveau 3)")."""
    return _("Computer (level %(level)s)") % {"level": level}


def level_name(number: int, english: str) -> str:
    """The name of the computer's level ``number`` in the active language (the engine's own
    names, :data:`game.engine.LEVELS`, are English)."""
    names = {1: _("Beginner"), 2: _("Novice"), 3: _("Casual"), 4: _("Club player"), 5: _("Strong club player"),
             6: _("Expert"), 7: _("Master"), 8: _("Grandmaster"), 9: _("Champion")}
    return names.get(number, english)


#: What ``makemessages`` leaves out (docs/playing.md, "Languages"): the tests, the benchmarks, the
#: collected static files and the checkout's own state; dot-folders (the virtualenv) are left
#: out by Django itself.
MAKEMESSAGES_IGNORE = ["-i", "tests", "-i", "bench", "-i", "scripts", "-i", "staticfiles", "-i", "var",
                       "--add-location", "file"]


# --- the scripts' catalog ----------------------------------------------------------------------

#: Seconds a browser keeps a catalog whose address names the current version: a year.
CATALOG_MAX_AGE_S = 365 * 86400


@functools.cache
def catalog_version() -> str:
    """12 hex digits that change whenever the scripts' catalog may: a hash of every compiled
    ``djangojs`` catalog the site reads (the game app's ``locale/`` and ``LOCALE_PATHS``) and of
    Django's version (the catalog's plural and format code).  Read once per process."""
    digest = hashlib.sha256(django.get_version().encode())
    folders = [Path(apps.get_app_config("game").path) / "locale", *(Path(p) for p in settings.LOCALE_PATHS)]
    for folder in folders:
        for compiled in sorted(folder.glob("*/LC_MESSAGES/djangojs.mo")):
            digest.update(str(compiled.relative_to(folder)).encode())
            digest.update(compiled.read_bytes())
    return digest.hexdigest()[:12]


class ScriptCatalog(JavaScriptCatalog):
    """Django's JavaScript catalog of the game app in the language its address names
    (``jsi18n/<language>/<version>/``; 404 for a language the site does not offer).  When the
    version is :func:`catalog_version` the answer is cached for a year, ``immutable``; any other
    version (a page of the release before, during a restart) gets today's catalog, revalidated
    each time (``no-cache``)."""

    packages = ["game"]

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        language, version = kwargs.pop("language"), kwargs.pop("version")
        if language not in dict(settings.LANGUAGES):
            raise Http404("no such language")
        with translation.override(language):
            response = super().get(request, *args, **kwargs)
        if version == catalog_version():
            patch_cache_control(response, public=True, max_age=CATALOG_MAX_AGE_S, immutable=True)
        else:
            patch_cache_control(response, no_cache=True)
        return response


def catalog_path(language: str | None = None) -> str:
    """The address of the scripts' catalog in ``language`` (None: the active one, or
    ``LANGUAGE_CODE``) at today's version."""
    chosen = language or translation.get_language() or settings.LANGUAGE_CODE
    try:
        chosen = translation.get_supported_language_variant(chosen)
    except LookupError:
        chosen = settings.LANGUAGE_CODE
    return reverse("javascript-catalog", kwargs={"language": chosen, "version": catalog_version()})
