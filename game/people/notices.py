"""Notifications (the header's bell): stored per player, listed newest first, read all at once.

A notification is stored here (:func:`add`) and sent live to every page of its player by the
people socket (:mod:`game.people.socket`, group message ``people.notify``: :func:`message`).
Kinds (:data:`KINDS`): your move in a correspondence game (one unread line per game, renewed at each
move of the opponent), a challenge received, your challenge accepted or declined, a rematch
proposed while you were away from the game's page, a tournament you joined starts in a few minutes,
and started.  A player keeps
at most :data:`KEPT` of them (older ones are deleted as new ones come); the bell lists the newest
:data:`LISTED`.  Texts are made in the page's language when sent (:func:`public`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from game.i18n import lazy_text
from game.people.models import Notification

#: Notifications one player keeps at most: the oldest beyond are deleted.
KEPT = 100
#: Notifications the bell lists (the newest).
LISTED = 30

#: The text of each kind of notification, with ``%(actor)s`` (a player's or a tournament's name)
#: and ``%(detail)s`` (a decline's reason, in words; the minutes before a tournament's start).
KINDS = {
    "turn": _("Your move against %(actor)s (correspondence game)."),
    "challenge": _("%(actor)s challenges you."),
    "challenge_accepted": _("%(actor)s accepted your challenge."),
    "challenge_declined": _("%(actor)s declined your challenge: %(detail)s"),
    "rematch": _("%(actor)s proposes a rematch."),
    "tournament": _("%(actor)s has started: your first game is coming."),
    "tournament_soon": _("%(actor)s starts in %(detail)s minutes."),
}

#: The kinds of which a player has at most one unread notification per game (renewed instead).
ONE_PER_GAME = frozenset({"turn", "rematch"})


def player_group(player_id: str) -> str:
    """The channel-layer group of every people socket of one player."""
    return f"people.{player_id}"


def add(player_id: str, kind: str, actor: str, url: str, game: str = "", detail: str = "",
        now: datetime | None = None) -> Notification:
    """Store a notification of ``kind`` (a key of :data:`KINDS`) for ``player_id`` and delete its
    oldest beyond :data:`KEPT`.  For a kind of :data:`ONE_PER_GAME`, an unread one about the same
    ``game`` is renewed (moved to the top) instead.  Returns it.  Raises ``ValueError`` for an
    unknown kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown notification kind {kind!r}")
    now = now or timezone.now()
    fields = {"actor": actor[:100], "url": url[:200], "detail": detail[:20], "at": now}
    if kind in ONE_PER_GAME and game:
        found, _created = Notification.objects.update_or_create(
            player=player_id, kind=kind, game=game, read=False, defaults=fields)
    else:
        found = Notification.objects.create(player=player_id, kind=kind, game=game, **fields)
    prune(player_id)
    return found


def add_counted(player_id: str, kind: str, actor: str, url: str, detail: str = "") -> tuple[Notification, int]:
    """:func:`add`, then the player's count of unread notifications (for one trip to a database
    thread).  Raises ``ValueError`` for an unknown kind."""
    return add(player_id, kind, actor, url, detail=detail), unread(player_id)


def listing(player_id: str) -> tuple[list[dict[str, Any]], int]:
    """``(items, unread)``: :func:`recent` as :func:`raw` values, and the count of unread ones."""
    return [raw(found) for found in recent(player_id)], unread(player_id)


def prune(player_id: str) -> int:
    """Delete ``player_id``'s notifications beyond its newest :data:`KEPT`; returns how many went."""
    keep = list(Notification.objects.filter(player=player_id).order_by("-at", "-id")
                .values_list("id", flat=True)[:KEPT])
    if len(keep) < KEPT:
        return 0
    deleted, _kinds = Notification.objects.filter(player=player_id).exclude(id__in=keep).delete()
    return deleted


def recent(player_id: str, limit: int = LISTED) -> list[Notification]:
    """``player_id``'s newest ``limit`` notifications, newest first."""
    return list(Notification.objects.filter(player=player_id).order_by("-at", "-id")[:limit])


def unread(player_id: str) -> int:
    """How many of ``player_id``'s notifications are unread."""
    return Notification.objects.filter(player=player_id, read=False).count()


def read_all(player_id: str) -> int:
    """Mark every notification of ``player_id`` read; returns how many were unread."""
    return Notification.objects.filter(player=player_id, read=False).update(read=True)


def read_game(player_id: str, kind: str, game: str) -> int:
    """Mark ``player_id``'s unread ``kind`` notification about ``game`` read (it no longer holds:
    the player has moved); returns how many were unread (0 or 1)."""
    return Notification.objects.filter(player=player_id, kind=kind, game=game, read=False).update(read=True)


def raw(found: Notification) -> dict[str, Any]:
    """A notification as the channel layer carries it (plain values, no text yet): ``{"id", "kind",
    "actor", "detail", "url", "read", "at_ms"}``."""
    return {"id": found.id, "kind": found.kind, "actor": found.actor, "detail": found.detail, "url": found.url,
            "read": found.read, "at_ms": int(found.at.timestamp() * 1000)}


def public(item: dict[str, Any], language: str | None, details: dict[str, Any]) -> dict[str, Any]:
    """What a page is sent of a notification (:func:`raw`): ``{"id", "kind", "text", "url", "read",
    "at_ms"}``, ``text`` in ``language`` (None: the active one); ``details`` gives the words of
    ``detail`` codes (the decline reasons)."""
    template = KINDS.get(item["kind"], KINDS["challenge"])
    with translation.override(language):
        text = str(lazy_text(template, actor=item["actor"], detail=details.get(item["detail"], item["detail"])))
    return {"id": item["id"], "kind": item["kind"], "text": text, "url": item["url"], "read": item["read"],
            "at_ms": item["at_ms"]}


def message(turns: int | None = None, notice: Notification | None = None, unread_count: int | None = None,
            ) -> dict[str, Any]:
    """The group message ``people.notify`` for every page of one player: the new count of games
    waiting for its move (``turns``), a new notification (``notice``) and the count of unread ones;
    each None when it did not change."""
    return {"type": "people.notify", "turns": turns, "notice": raw(notice) if notice is not None else None,
            "unread": unread_count}
