"""A tournament's chat: its entrants write, every viewer of its page reads.

The game chat's rules, reused (:mod:`game.round.chat`): the same text checks
(:func:`game.round.chat.clean_text`: length, control characters, piled-up marks, blank lines) and
the same rates (:data:`game.round.chat.RATE_LINES` lines per :data:`game.round.chat.RATE_WINDOW_S`
seconds per socket and per writer, :data:`game.round.chat.RATE_ADDRESS_LINES` per client address,
counted in Redis across the server processes under the tournament's own key).  A line goes to
every socket of the tournament's page (:mod:`game.tournaments.socket`) through the channel layer,
but for a signed-in viewer who blocks its writer (:class:`game.models.Block`, as the game chat
hides a blocked player's lines: ``docs/people.md``, "Blocks").
"""

from __future__ import annotations

import time
from typing import Any

from django.utils.translation import gettext_lazy as _

from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Block
from game.round import chat as game_chat

from .arena import no_such_tournament
from .models import ChatLine, Entry, Tournament

#: Lines a page is sent when it opens (the most recent ones).
HISTORY_LINES = 50


def line_payload(line: ChatLine) -> dict[str, Any]:
    """A stored line as sent: ``{"id": int, "name": str, "text": str}`` (never the player id)."""
    return {"id": line.id, "name": line.name, "text": line.text}


def history(tournament_id: str, hidden: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The last :data:`HISTORY_LINES` lines of the tournament's chat, oldest first
    (:func:`line_payload`), but those written by the player ids in ``hidden``."""
    rows = list(ChatLine.objects.filter(tournament_id=tournament_id).exclude(player_id__in=hidden)
                .order_by("-id")[:HISTORY_LINES])
    return [line_payload(line) for line in reversed(rows)]


def blocked(player_id: str | None) -> frozenset[str]:
    """The player ids ``player_id`` blocks (none for a guest or no player id): whose lines it does
    not receive.  One query; synchronous."""
    if not player_id:
        return frozenset()
    return frozenset(Block.objects.filter(blocker=player_id).values_list("blocked", flat=True)[:1000])


def say(tournament_id: str, speaker: game_chat.Speaker, text: str, now: float | None = None) -> dict[str, Any]:
    """Write ``text`` in the chat of ``tournament_id`` for ``speaker`` (its entry's name), as of
    ``now`` (monotonic seconds, for the socket's rate; default the current time).  Returns the
    stored line (:func:`line_payload`).  Synchronous (the database; Redis for the rates).

    Raises :class:`ActionError`: ``chat_invalid``, ``chat_empty``, ``chat_too_long`` (the text),
    ``no_such_tournament``, ``no_session``, ``chat_not_allowed`` (not an entrant), ``chat_too_fast``;
    nothing is stored then."""
    clean = game_chat.clean_text(text)
    if not Tournament.objects.filter(pk=str(tournament_id)[:16]).exists():
        raise no_such_tournament()
    if not speaker.player_id:
        raise ActionError("no_session", _("Your browser session has no player id."))
    entry = Entry.objects.filter(tournament_id=tournament_id, player_id=speaker.player_id).first()
    if entry is None:
        raise ActionError("chat_not_allowed", _("Only the tournament's players write in its chat."))
    now = time.monotonic() if now is None else now
    if not speaker.rate.allows(now) or not game_chat.writer_allows(
            f"tournament:{tournament_id}", speaker.player_id, speaker.address):
        raise ActionError("chat_too_fast", lazy_text(
            _("Slow down: at most %(lines)s chat lines every %(seconds)s seconds."),
            lines=game_chat.RATE_LINES, seconds=game_chat.RATE_WINDOW_S))
    speaker.rate.count(now)
    line = ChatLine.objects.create(tournament_id=tournament_id, player_id=speaker.player_id, name=entry.name,
                                   text=clean)
    return line_payload(line)
