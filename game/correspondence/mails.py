"""Turn mails: an account whose move a correspondence game awaits is told by mail, batched.

``manage.py send_turn_mails`` (every 10 minutes or so, from cron or a systemd timer:
``docs/correspondence.md``) calls :func:`send_turn_mails`.  For every correspondence game in play
(time control ``1d``/``3d``/``7d``) whose side to move is within its time, the account holding
that seat is mailed when it has a confirmed email address (allauth's ``EmailAddress``, verified:
an address typed at sign-up is never mailed before its owner confirms it) and ``turn_emails`` on, and when it got no
mail about that game in the last ``TURN_MAIL_EVERY_H`` hours (6; :class:`~game.models.TurnNotice`
keeps when the last one went).  An account gets one mail per run, listing all its games that
are due.  With ``digest=True`` (``--digest``, once a day) every such account gets one mail listing
every correspondence game waiting for its move, however recently it was mailed.  Each mail links
to each game and carries an unsubscribe link (:func:`unsubscribe_token`).  Mail goes through
Django's email backend; nothing on the request or socket paths sends any.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from allauth.account.models import EmailAddress
from django.conf import settings
from django.core import signing
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from game.clock import CORRESPONDENCE
from game.locks import wait_for_locks_at_most
from game.models import Account, Game, TurnNotice
from game.round import outages

log = logging.getLogger(__name__)

#: The salt of the unsubscribe links' signatures (a token for one purpose only).
UNSUBSCRIBE_SALT = "game.correspondence.unsubscribe"


def every() -> timedelta:
    """The least time between two mails about one game to one account (``TURN_MAIL_EVERY_H``, 6 h)."""
    return timedelta(hours=float(getattr(settings, "TURN_MAIL_EVERY_H", 6)))


def site_url() -> str:
    """The site's address for the links in mails (``SITE_URL``, default ``http://127.0.0.1:8000``),
    without a trailing slash."""
    return str(getattr(settings, "SITE_URL", "http://127.0.0.1:8000")).rstrip("/")


def unsubscribe_token(account: Account) -> str:
    """The signed token of ``account``'s unsubscribe link (:mod:`django.core.signing`, never
    expires; it names the account's player id)."""
    return signing.dumps(account.player_id, salt=UNSUBSCRIBE_SALT)


def account_of_token(token: str) -> Account | None:
    """The account an unsubscribe token names, or None when the token is forged, damaged or its
    account is gone."""
    try:
        player_id = signing.loads(token, salt=UNSUBSCRIBE_SALT)
    except signing.BadSignature:
        return None
    if not isinstance(player_id, str):
        return None
    return Account.objects.filter(player_id=player_id).select_related("user").first()


def mail_language(account: Account) -> str:
    """The language of ``account``'s mails: the one it last logged in with or opened its
    notification settings in (:mod:`game.correspondence.languages`), else English."""
    known = {code for code, _ in settings.LANGUAGES}
    return account.language if account.language in known else "en"


@dataclass(frozen=True)
class Waiting:
    """One game waiting for an account's move: ``game``, the ``opponent``'s name, the time left for
    the move (``left_ms``) and the game's address ``url``."""

    game: Game
    opponent: str
    left_ms: int
    url: str

    @property
    def hours_left(self) -> int:
        """Whole hours left for the move."""
        return self.left_ms // 3_600_000


def waiting_games(now: datetime) -> dict[str, list[Waiting]]:
    """``{player id: [Waiting, ...]}``: the correspondence games in play as of ``now`` whose side
    to move is within its time, by the player id of the seat to move, oldest turn first."""
    games = (Game.objects.filter(status=Game.Status.ACTIVE, time_control__in=CORRESPONDENCE)
             .order_by("turn_started_at", "id"))
    waiting: dict[str, list[Waiting]] = {}
    for game in games:
        clock = outages.clock(game)
        if clock.expiry(now):
            continue
        side = game.turn
        player = game.player(side)
        if not player:
            continue
        state = clock.state(now)
        opponent = (game.white_name if side.value == "B" else game.black_name) or "?"
        waiting.setdefault(player, []).append(Waiting(
            game, opponent, int(state[side.value]) if state else 0,
            site_url() + reverse("game", args=[game.id])))
    return waiting


def send_turn_mails(now: datetime | None = None, digest: bool = False) -> int:
    """Send this run's turn mails as of ``now`` (default the current time); ``digest``: the daily
    digest (every game waiting, whenever the last mail went).  Returns the number of mails sent.

    Each account is mailed in a transaction of its own that locks its row, so two runs at once
    mail it once; a mail the backend fails to send records nothing and is tried again next run
    (the failure is logged, the run goes on).
    """
    now = now or timezone.now()
    waiting = waiting_games(now)
    accounts = (Account.objects.filter(player_id__in=list(waiting), turn_emails=True)
                .exclude(user__email="").filter(Exists(confirmed_address())).select_related("user").order_by("pk"))
    sent = 0
    for account in accounts:
        try:
            sent += _mail_account(account.pk, waiting[account.player_id], now, digest)
        except Exception:   # one account's failure does not stop the others' mails
            log.exception("could not send the turn mail of account %s", account.pk)
    return sent


def confirmed_address():
    """The verified ``EmailAddress`` rows of an account's user that are the user's email (a
    subquery on the account's ``user``)."""
    return EmailAddress.objects.filter(user=OuterRef("user"), email__iexact=OuterRef("user__email"), verified=True)


def _mail_account(account_pk: int, games: list[Waiting], now: datetime, digest: bool) -> int:
    with transaction.atomic():
        wait_for_locks_at_most()
        account = (Account.objects.select_for_update().select_related("user")
                   .filter(pk=account_pk, turn_emails=True).filter(Exists(confirmed_address())).first())
        if account is None or not account.user.email:
            return 0
        notices = dict(TurnNotice.objects.filter(player_id=account.player_id,
                                                 game_id__in=[w.game.id for w in games])
                       .values_list("game_id", "sent_at"))
        if not digest:
            since = now - every()
            games = [w for w in games if notices.get(w.game.id) is None or notices[w.game.id] <= since]
        if not games:
            return 0
        message = turn_mail(account, games, digest)
        message.send()
        for waiting in games:
            TurnNotice.objects.update_or_create(game=waiting.game, player_id=account.player_id,
                                                defaults={"sent_at": now})
    return 1


def turn_mail(account: Account, games: list[Waiting], digest: bool) -> EmailMessage:
    """The mail telling ``account`` that ``games`` wait for its move (plain text, in
    :func:`mail_language`), with a link to each game, to the settings and to unsubscribe."""
    with translation.override(mail_language(account)):
        context = {
            "name": account.user.username, "games": games, "digest": digest,
            "unsubscribe_url": site_url() + reverse("turn_mails_unsubscribe", args=[unsubscribe_token(account)]),
            "settings_url": site_url() + reverse("notification_settings"),
        }
        subject = render_to_string("correspondence/turn_mail_subject.txt", context).strip()
        body = render_to_string("correspondence/turn_mail.txt", context)
    message = EmailMessage(subject, body, to=[account.user.email])
    message.extra_headers["List-Unsubscribe"] = f"<{context['unsubscribe_url']}>"
    return message
