"""Reports: a signed-in player reports another account to the moderators (docs/people.md, "Reports").

A report names a reason of :class:`game.people.models.Report.Reason` (cheating, rude chat,
sandbagging, something else), optionally a game (its id, or its address on the site) and a short
text.  It is stored open and listed in the admin, where moderators filter and close them.  Limits:
:data:`DAILY_REPORTS` reports a day per reporter, and one open report per reporter and reported
player.  Every refusal is an :class:`ActionError` with a code, and stores nothing.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Account, Game, is_game_id
from game.people.follows import account_named
from game.people.models import Report
from game.sockets import storable

#: Reports one player may make in any 24 hours.
DAILY_REPORTS = 5
#: The longest text of a report, in characters.
MAX_TEXT = 500
#: The last part of a game's address (``https://site/g/<id>/``) or the id alone.
_LAST_PART = re.compile(r"([^/]+)/?$")


def game_of(text: str) -> str:
    """The game id named by ``text`` (an id, or an address whose last part is one), ``""`` for
    empty ``text``.  Raises :class:`ActionError` ``no_such_game`` when no game has that id."""
    text = text.strip()
    if not text:
        return ""
    match = _LAST_PART.search(text.split("?")[0].split("#")[0])
    if match is None or not is_game_id(match.group(1)) or not Game.objects.filter(pk=match.group(1)).exists():
        raise ActionError("no_such_game", _("There is no such game: give its address or its id, or leave it empty."))
    return match.group(1)


def game_named(text: object) -> str:
    """``text`` when it is shaped as a game id (a link from a game page to the report form), else ``""``."""
    return text if isinstance(text, str) and is_game_id(text) else ""


def report(reporter: Account, username: object, reason: str, game: str = "", text: str = "",
           now: datetime | None = None) -> Report:
    """``reporter`` reports the account named ``username`` for ``reason`` (a value of
    :class:`Report.Reason`), about ``game`` (see :func:`game_of`; may be empty) with ``text`` (at
    most :data:`MAX_TEXT` characters; may be empty).  Returns the stored report.  Raises
    :class:`ActionError` ``no_such_player``, ``self_report``, ``bad_reason``, ``bad_text``,
    ``no_such_game``, ``already_reported`` (an open report of this player by this reporter),
    ``too_many_reports`` (:data:`DAILY_REPORTS` in the last 24 hours)."""
    now = now or timezone.now()
    target = account_named(username)
    if target.player_id == reporter.player_id:
        raise ActionError("self_report", _("You cannot report yourself."))
    if reason not in Report.Reason.values:
        raise ActionError("bad_reason", _("Choose one of the reasons offered."))
    text = text.strip() if isinstance(text, str) else ""
    if len(text) > MAX_TEXT or not storable(text):
        raise ActionError("bad_text", lazy_text(_("Write at most %(max)s characters, without control characters."),
                                                max=MAX_TEXT))
    game_id = game_of(game if isinstance(game, str) else "")
    with transaction.atomic():
        # The reporter's account row locked: two reports sent at once are counted one after the other.
        Account.objects.select_for_update().filter(pk=reporter.pk).first()
        mine = Report.objects.filter(reporter=reporter.player_id)
        if mine.filter(reported=target.player_id, status=Report.Status.OPEN).exists():
            raise ActionError("already_reported", _("You have reported this player already; the moderators "
                                                    "will look at it."))
        if mine.filter(created_at__gt=now - timedelta(days=1)).count() >= DAILY_REPORTS:
            raise ActionError("too_many_reports", lazy_text(_("You have made %(max)s reports today: "
                                                              "wait a day to make another."), max=DAILY_REPORTS))
        return Report.objects.create(reporter=reporter.player_id, reporter_name=reporter.user.username,
                                     reported=target.player_id, reported_name=target.user.username,
                                     reason=reason, game=game_id, text=text)
