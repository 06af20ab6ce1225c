"""The people socket: challenges by name and notifications, live on every page of a signed-in
player (``/ws/people/``).

Every page of a signed-in player opens it (``static/js/people.js``).  It joins the player's group
(:func:`player_group`: every open page of that player, in any server process) and sends the open
challenges to and from the player (``challenges``).  The client sends ``challenge`` (to a username),
``accept``, ``decline`` (with a reason) and ``cancel``; each is decided by
:mod:`game.people.challenges`, and the news goes to the pages of both players: ``challenge`` (a new
one for you), ``challenge_gone`` (answered, cancelled; ``reason`` when declined) and ``go``
(accepted: the game's ``url``, which every page of both players opens).  ``follow`` and
``unfollow`` (a username) change whom the player follows; ``following`` lists them, online or not,
with their game in play (on connect and after each change), and ``turns`` counts the games waiting
for the player's move (on connect, whenever a game's events change it: :mod:`game.people.gamenews`,
and every :data:`TURNS_EVERY_S` seconds: the "My games" badge).  ``notifications`` lists the
newest notifications with the unread count (on connect); ``notification`` brings a new one and
``unread`` a new count; the client's ``read_notifications`` marks them all read (every page of the
player is told).  Refusals are ``error`` messages to the sender only.  A guest's socket is closed
with 4401; a message of a socket whose log-in has ended since it opened (logged out in another tab,
password changed) is refused ``session_ended`` and the socket closed with 4409.  The protocol is in
``docs/protocol.md`` ("People socket").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from game import sessions
from game.errors import ActionError
from game.i18n import language_of_scope, resolved
from game.models import Account
from game.people import challenges, follows, notices
from game.people.notices import player_group
from game.profiles import reads as profile_reads
from game.round import admission
from game.sockets import RATE_LIMITED, Guard, ProtocolError, decode_frame, in_db_thread, storable

log = logging.getLogger(__name__)

#: Close code sent to a socket of a guest (challenges are between accounts).
CLOSE_NOT_SIGNED_IN = 4401
#: Close code sent when the session or the client address holds its most people sockets
#: (``PEOPLE_SOCKETS_PER_SESSION``, ``PEOPLE_SOCKETS_PER_ADDRESS``, counted across processes).
CLOSE_TOO_MANY_SOCKETS = 4429
#: Close code sent after a message of a socket whose log-in no longer holds (logged out, password
#: changed, account deleted: :func:`game.sessions.log_in_holds`), as the game socket's.
CLOSE_SESSION_ENDED = 4409
#: Messages one people socket may send.
RATE_LIMIT = "10/second;120/minute"
#: Seconds between two counts of the games waiting for the player's move sent unasked (the count
#: follows the games' events but for the moves of live timed games: :mod:`game.people.gamenews`).
TURNS_EVERY_S = 60.0


def signed_in(session) -> Account | None:
    """The account signed in on ``session`` whose log-in still holds, else None.  Reads the database."""
    if session is None:
        return None
    user = sessions.user_of(session)
    if not user.is_authenticated or not sessions.log_in_ended_not_recorded(session):
        return None
    return Account.objects.filter(user_id=user.pk).select_related("user").first()


def _text(data: dict, field: str, longest: int = 64) -> str:
    value = data.get(field)
    if not isinstance(value, str) or not 0 < len(value) <= longest or not storable(value):
        raise ProtocolError("bad_message", _("A field is missing or malformed."))
    return value


def _flag(data: dict, field: str) -> bool:
    """An optional true/false field (absent: false); anything but a JSON boolean raises
    :class:`ProtocolError` ``bad_message`` instead of being read as false."""
    value = data.get(field, False)
    if not isinstance(value, bool):
        raise ProtocolError("bad_message", _("A field is missing or malformed."))
    return value


class PeopleConsumer(AsyncJsonWebsocketConsumer):
    """The people socket of one page of a signed-in player."""

    account: Account | None = None
    joined: str | None = None
    ticker: asyncio.Task | None = None
    ticket: admission.Ticket | None = None

    async def connect(self):
        self.guard = Guard(RATE_LIMIT)
        self.language = language_of_scope(self.scope)
        await self.accept()
        self.account = await in_db_thread(signed_in)(self.scope.get("session"))
        if self.account is None:
            await self.close(code=CLOSE_NOT_SIGNED_IN)
            return
        client = self.scope.get("client")
        self.ticket, over = await admission.admit(self.channel_name, self.account.player_id,
                                                  client[0] if client else None, kind="people")
        if over is not None:
            await self.close(code=CLOSE_TOO_MANY_SOCKETS)
            return
        self.joined = player_group(self.account.player_id)
        await self.channel_layer.group_add(self.joined, self.channel_name)
        me = self.account.player_id
        incoming, outgoing = await in_db_thread(challenges.incoming)(me), await in_db_thread(challenges.outgoing)(me)
        await self.send_json({"type": "challenges", "incoming": [challenges.public(c) for c in incoming],
                              "outgoing": [challenges.public(c) for c in outgoing]})
        await follows.mark_online(me)
        await in_db_thread(follows.seen)(me)
        await self.send_following()
        await self.send_turns()
        items, unread = await in_db_thread(notices.listing)(me)
        await self.send_json({"type": "notifications", "unread": unread,
                              "items": [notices.public(item, self.language, challenges.REASONS) for item in items]})
        self.ticker = asyncio.create_task(self.tick())

    async def tick(self) -> None:
        """Every :data:`game.people.follows.ONLINE_RENEW_S`: still online; every :data:`TURNS_EVERY_S`,
        the games waiting for your move (the moves of live timed games are not pushed:
        :mod:`game.people.gamenews`)."""
        assert self.account is not None
        ticks = 0
        while True:
            await asyncio.sleep(follows.ONLINE_RENEW_S)
            ticks += 1
            try:
                if self.ticket is not None:
                    await admission.refresh(self.ticket)  # still counts against the socket limits
                await follows.mark_online(self.account.player_id)
                if ticks % round(TURNS_EVERY_S / follows.ONLINE_RENEW_S) == 0:
                    await self.send_turns()
            except Exception:  # the next tick tries again
                log.exception("people: tick failed")

    async def send_turns(self) -> None:
        """``turns``: how many games wait for this player's move (the "My games" badge)."""
        assert self.account is not None
        count = await in_db_thread(profile_reads.waiting_count)(self.account.player_id)
        await self.send_json({"type": "turns", "count": count})

    async def send_following(self) -> None:
        """``following``: the players this one follows, each online or not, and their game in play."""
        assert self.account is not None
        rows = await in_db_thread(follows.followed)(self.account.player_id)
        ids = [pid for pid, _name in rows]
        games = await in_db_thread(follows.games_of)(ids)
        online = await follows.online_among(ids)
        await self.send_json({"type": "following", "players": [
            {"name": name, "online": pid in online,
             "url": reverse("game", args=[games[pid]]) if pid in games else None} for pid, name in rows]})

    async def disconnect(self, code):
        if self.ticker is not None:
            self.ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.ticker
        if self.joined is not None:
            await self.channel_layer.group_discard(self.joined, self.channel_name)
            with contextlib.suppress(Exception):  # "last seen" is not worth failing a disconnect
                await in_db_thread(follows.seen)(self.joined.split(".", 1)[1])
        if self.ticket is not None:
            ticket, self.ticket = self.ticket, None
            await admission.release(ticket)

    async def send_json(self, content, close=False):
        """Send ``content`` with its human texts in this socket's language."""
        await super().send_json(resolved(content, self.language), close=close)

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        allowed = await self.guard.admit(lambda code, reason: self.close(code=code, reason=reason),
                                         lambda: self.send_json(RATE_LIMITED))
        if not allowed or self.account is None:
            return
        try:
            await self.handle(decode_frame(text_data, bytes_data))
        except ProtocolError as exc:
            await self.send_json({"type": "error", "code": exc.code, "message": exc.message})
        except ActionError as exc:
            await self.send_json(exc.as_event())

    async def handle(self, data: dict) -> None:
        """Carry out one client message.  Raises ProtocolError or ActionError."""
        assert self.account is not None
        me, kind = self.account.player_id, data.get("type")
        if kind != "ping" and not await in_db_thread(sessions.log_in_holds)(self.scope.get("session")):
            self.account = None
            await self.send_json({"type": "error", "code": "session_ended", "message": sessions.SESSION_ENDED_MESSAGE})
            await self.close(code=CLOSE_SESSION_ENDED)
            return
        if kind == "challenge":
            sent = await in_db_thread(challenges.send)(
                self.account, _text(data, "to", 150), _text(data, "control", 12), _text(data, "color", 6),
                _flag(data, "rated"), _flag(data, "ballot"))
            await self.send_json({"type": "challenge_sent", **challenges.public(sent)})
            await self.tell(sent.challenged, {"type": "people.news", "news": {"type": "challenge",
                                                                               **challenges.public(sent)}})
            await self.notify(sent.challenged, "challenge", sent.challenger_name, reverse("my_games"))
        elif kind == "accept":
            challenge, game = await in_db_thread(challenges.accept)(_text(data, "id"), me)
            go = {"type": "people.news", "news": {"type": "go", "id": challenge.id,
                                                  "url": reverse("game", args=[game.id])}}
            for player in (challenge.challenger, challenge.challenged):
                await self.tell(player, go)
            await self.notify(challenge.challenger, "challenge_accepted", challenge.challenged_name,
                              reverse("game", args=[game.id]))
        elif kind == "decline":
            challenge = await in_db_thread(challenges.decline)(_text(data, "id"), me, _text(data, "reason", 16))
            await self.gone(challenge, challenge.reason)
            await self.notify(challenge.challenger, "challenge_declined", challenge.challenged_name,
                              reverse("profile", kwargs={"username": challenge.challenged_name}), challenge.reason)
        elif kind == "cancel":
            await self.gone(await in_db_thread(challenges.cancel)(_text(data, "id"), me), "")
        elif kind in ("follow", "unfollow"):
            act = follows.follow if kind == "follow" else follows.unfollow
            await in_db_thread(act)(self.account, data.get("name"))
            await self.send_following()
        elif kind == "read_notifications":
            await in_db_thread(notices.read_all)(me)
            await self.tell(me, notices.message(unread_count=0))
        elif kind == "ping":
            await self.send_json({"type": "pong"})
        else:
            raise ProtocolError("unknown_type", _("Unknown message type."))

    async def gone(self, challenge, reason: str) -> None:
        """Tell both players' pages that ``challenge`` is answered or withdrawn."""
        news = {"type": "challenge_gone", "id": challenge.id, "status": challenge.status, "reason": reason,
                "by": challenge.challenged_name if reason else challenge.challenger_name}
        for player in (challenge.challenger, challenge.challenged):
            await self.tell(player, {"type": "people.news", "news": news})

    async def tell(self, player_id: str, message: dict) -> None:
        """Send ``message`` to every people socket of ``player_id`` (a failure is logged: the page
        sees the state when it next connects)."""
        try:
            await self.channel_layer.group_send(player_group(player_id), message)
        except Exception as exc:  # noqa: BLE001 - see the docstring
            log.warning("people: could not tell %s: %s", player_id, exc)

    async def notify(self, player_id: str, kind: str, actor: str, url: str, detail: str = "") -> None:
        """Store a notification for ``player_id`` (:func:`game.people.notices.add`) and send it to
        every page of theirs (a failure is logged: the bell shows it when a page next opens)."""
        try:
            notice, unread = await in_db_thread(notices.add_counted)(player_id, kind, actor, url, detail)
        except Exception:
            log.exception("people: could not store a notification for %s", player_id)
            return
        await self.tell(player_id, notices.message(notice=notice, unread_count=unread))

    async def people_news(self, message):
        """Group message ``people.news``: forward its ``news`` to the page."""
        await self.send_json(message["news"])

    async def people_notify(self, message):
        """Group message ``people.notify`` (:func:`game.people.notices.message`): ``turns`` (the
        badge), ``notification`` (a new one, with the unread count) or ``unread`` (the count alone)."""
        if message.get("turns") is not None:
            await self.send_json({"type": "turns", "count": message["turns"]})
        if message.get("notice") is not None:
            await self.send_json({"type": "notification", "unread": message.get("unread") or 0,
                                  "item": notices.public(message["notice"], self.language, challenges.REASONS)})
        elif message.get("unread") is not None:
            await self.send_json({"type": "unread", "count": message["unread"]})
