"""What the games tell the people socket: the "My games" badge and the game notifications follow
each game's own events.

:func:`on_events_published` receives :data:`game.round.signals.events_published` (connected in
:mod:`game.people.apps`), the one point every published game event passes, whatever made it.  It
looks at the events only (no query) and returns at once; when they change what the players' pages
show it hands :func:`plan` (the reads and writes, in a database thread) and the sending to a task:

- a move or a takeback in a correspondence game, a game started (its ``seats`` event), a
  game ended (a move or an update that ends it), a rematch started: each seated account's count of
  games waiting for its move (the badge) is read again and sent;
- a move in a correspondence game: the player now to move gets a ``turn`` notification (one unread
  per game, renewed at each move), and the mover's own unread one for that game is marked read;
- a rematch proposed: the other player gets a ``rematch`` notification when no page of theirs has
  the game open (:func:`game.round.presence.offline_s`).

:func:`on_tournament_started` receives :data:`game.tournaments.signals.started`: every account
entered (and not withdrawn) gets a ``tournament`` notification; :func:`on_tournament_soon`
receives :data:`game.tournaments.signals.starting_soon` a few minutes before: each of them gets a
``tournament_soon`` notification, once (a second run of the job tells nobody again).

Each seated account's pages get at most one group message per publication (``people.notify``:
:func:`game.people.notices.message`).  Moves of games played live (timed, or untimed) change nothing
here until the game ends: such a game changes the count every few seconds while its players are on
its page, and a count query for each of its moves doubled the Daphne CPU of a move (1.3-1.5 ms
against 2.8-3.2 ms a move, ``bench/load.py`` on untimed games, docs/performance/11-one-round.md); the people
socket reads the count again every :data:`game.people.socket.TURNS_EVERY_S` seconds for them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection, transaction
from django.urls import reverse

from game.clock import TimeControl, TimeControlError
from game.models import Account, Game
from game.people import notices
from game.people.models import Notification
from game.profiles import reads as profile_reads
from game.round import presence
from game.round.events import Event, GameEvent
from game.rules import Color
from game.sockets import in_background, in_db_thread
from game.tournaments.models import Entry, Tournament

log = logging.getLogger(__name__)

#: The ``update`` events after which the counts of games waiting for a move change.
ENDS = frozenset({"resigned", "aborted", "draw_accepted", "flagged", "claimed_win", "claimed_draw",
                  "rematch_started"})


@dataclass(frozen=True)
class Changes:
    """What a publication changes for the players' pages: the counts (``counts``), a correspondence
    move that makes it ``turn``'s move (``turn``: ``"B"``/``"W"``), a rematch proposed by seat
    ``rematch_by``."""

    counts: bool = False
    turn: str | None = None
    rematch_by: str | None = None


def _days(state: dict[str, Any]) -> int | None:
    clock = state.get("clock")
    if not clock:
        return None
    try:
        return TimeControl.parse(str(clock.get("control"))).days
    except TimeControlError:
        return None


def changes(events: Sequence[Event]) -> Changes | None:
    """What ``events`` change for the players' pages, or None (read from the events alone)."""
    counts, turn, rematch_by = False, None, None
    for event in events:
        if not isinstance(event, GameEvent):
            continue
        state, kind = event.state, event.type
        active = state["status"] == "active"
        if kind in ("move", "takeback"):
            days = _days(state)
            counts = counts or not active or days is not None
            if kind == "move" and active and days is not None:
                turn = state["turn"]
        elif kind == "seats":
            counts = counts or active
        elif kind == "update":
            what = getattr(event, "what", "")
            counts = counts or what in ENDS
            if what == "rematch_offered":
                rematch_by = getattr(event, "by", None)
    if not (counts or turn or rematch_by):
        return None
    return Changes(counts, turn, rematch_by)


def on_events_published(sender: Any, game_id: str, events: Sequence[Event], **kwargs: Any) -> None:
    """:data:`game.round.signals.events_published` receiver (see the module docstring).  On the
    event loop the work goes to a task; on a thread (``publish_sync``: a page, a job) it is done
    there.  Never raises: a failure is logged, and the pages read the counts when next opened."""
    found = changes(events)
    if found is None:
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no running event loop: a page's or a job's thread
        try:
            async_to_sync(send)(plan(game_id, found))
        except Exception:
            log.exception("people: the news of game %s could not be sent", game_id)
        return
    in_background(_carry_out(game_id, found))


async def _carry_out(game_id: str, found: Changes) -> None:
    try:
        await send(await in_db_thread(plan)(game_id, found))
    except Exception:
        log.exception("people: the news of game %s could not be sent", game_id)


def _away(game_id: str, seat: Color) -> bool:
    try:
        return presence.offline_s(game_id, seat.value, 0.0) > 0
    except presence.PresenceUnavailable:
        return True


def _seats(game_id: str) -> tuple[dict[Color, tuple[str, str]], set[str]] | None:
    """The seats of ``game_id`` (``{colour: (player id, name)}``) and which of their players are
    accounts, read in one written-out statement, or None for no such game.  The ORM's form of the
    same query (two ``Exists`` annotations) cost 3 ms of CPU to build at every game's end, where
    this costs a plain read (docs/performance/11-one-round.md, "A game's end")."""
    game_table, account_table = Game._meta.db_table, Account._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT g.black_player, g.black_name, g.white_player, g.white_name,"
            f" EXISTS (SELECT 1 FROM {account_table} a WHERE a.player_id = g.black_player),"
            f" EXISTS (SELECT 1 FROM {account_table} a WHERE a.player_id = g.white_player)"
            f" FROM {game_table} g WHERE g.id = %s", [game_id])
        row = cursor.fetchone()
    if row is None:
        return None
    black, black_name, white, white_name, black_account, white_account = row
    accounts = {player for player, account in ((black, black_account), (white, white_account)) if account}
    return {Color.BLACK: (black, black_name), Color.WHITE: (white, white_name)}, accounts


def plan(game_id: str, found: Changes) -> list[tuple[str, dict[str, Any]]]:
    """Read and store what ``found`` calls for in ``game_id``; return ``[(player id, group
    message)]``, one for each seated account whose pages have news (see the module docstring).
    The game and whether each seat is an account's come in one statement (:func:`_seats`): a game
    of guests or the computer costs no more (most live games' ends)."""
    read = _seats(game_id)
    if read is None or not read[1]:
        return []
    seats, accounts = read
    url = reverse("game", args=[game_id])
    out = []
    for side, (player, _name) in seats.items():
        if player not in accounts:
            continue
        opponent = seats[side.opponent][1] or ""
        turns = profile_reads.waiting_count(player) if found.counts else None
        notice, unread = None, None
        if found.turn == side.value:
            notice = notices.add(player, "turn", opponent, url, game=game_id)
        elif found.turn is not None and notices.read_game(player, "turn", game_id):
            unread = notices.unread(player)
        if found.rematch_by == side.opponent.value and _away(game_id, side):
            notice = notices.add(player, "rematch", opponent, url, game=game_id)
        if notice is not None:
            unread = notices.unread(player)
        if turns is not None or notice is not None or unread is not None:
            out.append((player, notices.message(turns, notice, unread)))
    return out


async def send(messages: list[tuple[str, dict[str, Any]]]) -> None:
    """Send each ``(player id, message)`` to every people socket of that player."""
    layer = get_channel_layer()
    assert layer is not None, "the site has a channel layer"
    for player, message in messages:
        await layer.group_send(notices.player_group(player), message)


def _tell_entrants(tournament: Tournament, kind: str, detail: str = "", once: bool = False) -> None:
    """A ``kind`` notification about ``tournament`` to every account entered and not withdrawn,
    sent to their pages; with ``once``, not to those who have one of that kind about it already,
    under the tournament's row lock (so two runs at once tell each player once)."""
    url = reverse("tournament", kwargs={"tournament_id": tournament.id})
    messages = []
    with transaction.atomic():
        if once:
            Tournament.objects.select_for_update().filter(pk=tournament.id).first()
        players = list(Entry.objects.filter(tournament_id=tournament.id, withdrawn=False)
                       .values_list("player_id", flat=True))
        accounts = Account.objects.filter(player_id__in=players).values_list("player_id", flat=True)
        if once:
            accounts = accounts.exclude(player_id__in=Notification.objects.filter(
                player__in=players, kind=kind, url=url).values("player"))
        for player in accounts:
            notice, unread = notices.add_counted(player, kind, tournament.name, url, detail=detail)
            messages.append((player, notices.message(notice=notice, unread_count=unread)))
    async_to_sync(send)(messages)


def on_tournament_started(sender: Any, tournament: Tournament, **kwargs: Any) -> None:
    """:data:`game.tournaments.signals.started` receiver (in the job that started it): a
    ``tournament`` notification to every account entered and not withdrawn, sent to their pages."""
    _tell_entrants(tournament, "tournament")


def on_tournament_soon(sender: Any, tournament: Tournament, minutes: int, **kwargs: Any) -> None:
    """:data:`game.tournaments.signals.starting_soon` receiver (in the job that runs ``minutes``
    before the start): a ``tournament_soon`` notification to every account entered and not
    withdrawn that has none about this tournament yet, sent to their pages."""
    _tell_entrants(tournament, "tournament_soon", detail=str(minutes), once=True)
