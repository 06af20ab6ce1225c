"""What each client message of a game socket does: one handler per message class (:data:`HANDLERS`).

A handler gets the socket (:class:`Socket`: its game's Round, its seat, its session), the parsed
message (:mod:`game.round.protocol`) and the moment the frame arrived (the mover is charged up to
it).  It runs one action in the game's turn (:meth:`game.round.round.Round.run`; a move through
:meth:`~game.round.round.Round.move`) and publishes what it committed; a refusal is raised
(:class:`~game.errors.ActionError`) for the socket to send to its page only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Protocol

from django.db import DatabaseError
from django.utils.translation import gettext_lazy as _

from game import http_limits
from game.errors import ActionError
from game.i18n import lazy_text
from game.round import actions, chat, claims, drawer, events, forecasts, rematcher, takebacks
from game.round.flag import Flag
from game.round.progress import Progress
from game.round.protocol import Action, Chat, ClientMessage, ClockCheck, ForecastLines, Ping, PlayMove, Sync
from game.round.round import Round
from game.sockets import in_db_thread

log = logging.getLogger(__name__)

#: The action carrying out each field-less client message (``docs/protocol.md``): one row per
#: action, each ``(game_id, player_id, now) -> Progress``, ``now`` the frame's arrival.
ACTIONS: dict[str, Callable[[str, str | None, datetime | None], Progress]] = {
    "draw_offer": drawer.offer_draw,
    "draw_accept": drawer.accept_draw,
    "draw_decline": drawer.decline_draw,
    "resign": actions.resign,
    "abort": actions.abort,
    "rematch_offer": rematcher.offer_rematch,
    "rematch_accept": rematcher.offer_rematch,
    "rematch_decline": rematcher.decline_rematch,
    "claim_win": claims.claim_win,
    "claim_draw": claims.claim_draw,
    "takeback_propose": takebacks.propose,
    "takeback_accept": takebacks.accept,
    "takeback_decline": takebacks.decline,
}

#: The actions that may start a new game: counted against the new-game limits.
NEW_GAME_ACTIONS = frozenset({"rematch_offer", "rematch_accept"})

#: The answer to a ``ping``, encoded once.
PONG = events.encode({"type": "pong"})


class Socket(Protocol):
    """What the handlers need of a game socket (:class:`game.round.socket.GameConsumer`)."""

    game_id: str
    player_id: str | None
    address: str | None
    round: Round
    flag: Flag

    def speaker(self) -> chat.Speaker:
        """The socket's voice in the game's chat."""

    async def publish(self, progress: Progress) -> None:
        """Publish the committed events of ``progress``."""

    async def send_text(self, text: str) -> None:
        """Send one text frame to the page."""

    async def send_message(self, message: dict[str, Any]) -> None:
        """Send one message to this socket only."""

    async def send_snapshot(self) -> None:
        """Send the page a fresh snapshot."""

    async def check_clock(self) -> None:
        """Ask the server's clock whether the side to move has run out."""


async def ping(socket: Socket, message: Ping, arrived: datetime) -> None:
    """``pong``.  The page was heard (the socket noted it); its presence and admission entries are
    renewed by its process with all the others' (presence.Keeper, admission.Keeper), not by each
    ping.  Behind the site's transport most pings never come here (checkers_site.keepalive)."""
    try:
        await socket.send_text(PONG)
    except Exception as exc:  # noqa: BLE001 - the socket closed meanwhile: nothing to answer
        log.debug("could not answer a ping on a closing socket: %s", exc)


async def sync(socket: Socket, message: Sync, arrived: datetime) -> None:
    """``synced`` when the page already has the game's version ``v``, else a snapshot; both from
    this process's snapshots of the game while fresh (:mod:`game.round.snapshots`: a sync that
    finds nothing changed reads nothing)."""
    if message.v is not None and await socket.round.snapshots.current_version() == message.v:
        await socket.send_message({"type": "synced", "v": message.v})
        return
    await socket.send_snapshot()


async def move(socket: Socket, message: PlayMove, arrived: datetime) -> None:
    """Play the move in the game's turn (:meth:`game.round.round.Round.move`) and publish it; in a
    correspondence game, then the opponent's forecast reply, if one answers this move."""
    progress = await socket.round.move(socket.player_id, message.move, message.v, arrived_at=arrived)
    await socket.publish(progress)
    if progress.events and progress.game.control.days:
        # Its reply is an ordinary move, played and published after this one (game.round.forecasts).
        await answer_forecast(socket)


async def forecast(socket: Socket, message: ForecastLines, arrived: datetime) -> None:
    """Store the seat's conditional moves (:func:`game.round.forecasts.save`)."""
    await socket.publish(await socket.round.run(forecasts.save, socket.player_id, message.lines, arrived))


async def clock_check(socket: Socket, message: ClockCheck, arrived: datetime) -> None:
    """The page's countdown reached zero: ask the server's clock, if it is near its end."""
    if socket.flag.near(time.monotonic()):
        await socket.check_clock()


async def action(socket: Socket, message: Action, arrived: datetime) -> None:
    """One field-less action (a row of :data:`ACTIONS`); a rematch counts as a new game."""
    if message.name in NEW_GAME_ACTIONS:
        await count_new_game(socket)
    await socket.publish(await socket.round.run(ACTIONS[message.name], socket.player_id, arrived))


async def chat_line(socket: Socket, message: Chat, arrived: datetime) -> None:
    """A chat line: no turn of the game's actions and no row lock (it does not change the game)."""
    progress = await in_db_thread(chat.say)(socket.game_id, socket.speaker(), message.room, message.text)
    await socket.publish(progress)


async def count_new_game(socket: Socket) -> None:
    """Count a message that may start a new game (a rematch) against the new-game limits of the
    session and the client address, as ``POST /`` and ``POST /computer`` are
    (:data:`game.http_limits.GAME_CREATE`): the computer accepts a rematch at once, so a loop of
    resignations and rematches would otherwise make games without end.  Raises
    :class:`ActionError` ``rate_limited`` over the limits (its message says when to try again)."""
    wait = await in_db_thread(http_limits.retry_after)(http_limits.GAME_CREATE, socket.player_id, socket.address)
    if wait is not None:
        raise ActionError("rate_limited", lazy_text(_("Too many new games; try again in %(seconds)s s."),
                                                    seconds=wait))


async def answer_forecast(socket: Socket) -> None:
    """Play the forecast reply the last move calls for, if one is pending
    (:func:`game.round.forecasts.reply`), and publish it."""
    try:
        await socket.publish(await socket.round.run(forecasts.reply))
    except (ActionError, DatabaseError) as exc:
        log.warning("could not play the forecast reply in %s: %s", socket.game_id, exc)


#: The handler of each client message (:mod:`game.round.protocol`), by its class.
HANDLERS: dict[type[ClientMessage], Callable[[Any, Any, datetime], Awaitable[None]]] = {
    Ping: ping,
    Sync: sync,
    PlayMove: move,
    ForecastLines: forecast,
    ClockCheck: clock_check,
    Action: action,
    Chat: chat_line,
}
