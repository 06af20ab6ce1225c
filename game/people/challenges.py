"""Challenges by name, decided here: send, accept, decline (with a reason), cancel; each one call.

A signed-in player challenges another account by username to a game of a time control, a colour
(``B``, ``W`` or ``random``), rated or casual, from the free start or a 3-move ballot.  A challenge
stays open :data:`CHALLENGE_TTL_S` seconds (10 minutes) at most; a player has at most
:data:`MAX_OPEN` open challenges at once, and one to a given player.  Accepting makes the game
through the one path games are made by (:func:`game.round.actions.create_game` for the challenger,
then :func:`game.round.actions.join_game` for the challenged), under the challenge's row lock, so a
challenge makes one game at most, and an accept racing a cancel or a decline loses cleanly.
Every refusal is an :class:`ActionError` with a code, and stores nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game.clock import TimeControl, TimeControlError
from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Account, Block, Game
from game.people.models import Challenge
from game.ratings import games as ratings
from game.round import actions
from game.round.fanout import publish_sync

#: Seconds a challenge stays open without an answer.
CHALLENGE_TTL_S = 10 * 60
#: Open challenges one player may have sent at once.
MAX_OPEN = 3
#: Challenges one player may send to one other within :data:`CHALLENGE_TTL_S` seconds, whatever
#: became of them (sent and cancelled again and again, each one a notice on every page of theirs).
MAX_TO_ONE_PLAYER = 3
#: The reasons a challenge may be declined with, by code.
REASONS = {"not_now": _("Not now"), "too_fast": _("Too fast"), "too_slow": _("Too slow"),
           "casual_only": _("Casual games only"), "rated_only": _("Rated games only")}

GONE = _("That challenge is no longer open: it was answered, cancelled or it expired.")


def _open(now: datetime):
    return Challenge.objects.filter(status=Challenge.Status.OPEN, expires_at__gt=now)


def send(challenger: Account, username: str, time_control: str, color: str, rated: bool, ballot: bool,
         now: datetime | None = None) -> Challenge:
    """Challenge the account named ``username`` (any case) from ``challenger``.  Returns the open
    challenge.  Raises :class:`ActionError`: ``no_such_player``, ``self_challenge``,
    ``blocked`` (either player blocks the other: docs/people.md, "Blocks"), ``bad_time_control``,
    ``bad_color``, ``unrated_control`` (rated and untimed), ``playban`` (rated,
    and the challenger closed out of rated play: :func:`game.ratings.games.check_rated`),
    ``already_challenged`` (an open one to that player), ``challenged_lately``
    (:data:`MAX_TO_ONE_PLAYER` to that player within :data:`CHALLENGE_TTL_S`), ``too_many_challenges``
    (:data:`MAX_OPEN`).
    """
    now = now or timezone.now()
    target = Account.objects.select_related("user").filter(user__username__iexact=username).first()
    if target is None:
        raise ActionError("no_such_player", _("There is no player of that name."))
    if target.player_id == challenger.player_id:
        raise ActionError("self_challenge", _("You cannot challenge yourself."))
    refuse_blocked(challenger.player_id, target.player_id)
    try:
        control = TimeControl.parse(time_control)
    except TimeControlError:
        raise ActionError("bad_time_control", _("Choose a time control such as 5+3, 1d or untimed.")) from None
    if color not in ("B", "W", "random"):
        raise ActionError("bad_color", _("Choose Black, White or a random colour."))
    if rated:
        # the challenger's own part of the checks the accept makes: refused here, to the challenger
        ratings.check_rated(control, challenger.player_id)
    with transaction.atomic():
        mine = list(_open(now).select_for_update().filter(challenger=challenger.player_id))
        if any(c.challenged == target.player_id for c in mine):
            raise ActionError("already_challenged", _("You have already challenged this player."))
        if Challenge.objects.filter(challenger=challenger.player_id, challenged=target.player_id,
                                    created_at__gt=now - timedelta(seconds=CHALLENGE_TTL_S)).count() \
                >= MAX_TO_ONE_PLAYER:
            raise ActionError("challenged_lately", lazy_text(_("You have challenged this player %(max)s times "
                                                               "in the last minutes: wait a while."),
                                                             max=MAX_TO_ONE_PLAYER))
        if len(mine) >= MAX_OPEN:
            raise ActionError("too_many_challenges", lazy_text(_("You have %(max)s open challenges: wait for an "
                                                                 "answer or cancel one."), max=MAX_OPEN))
        return Challenge.objects.create(
            challenger=challenger.player_id, challenger_name=challenger.user.username,
            challenged=target.player_id, challenged_name=target.user.username, time_control=str(control),
            color=color, rated=rated, ballot=ballot, expires_at=now + timedelta(seconds=CHALLENGE_TTL_S))


def refuse_blocked(me: str, them: str) -> None:
    """Raise :class:`ActionError` ``blocked`` when ``me`` blocks ``them`` or ``them`` blocks ``me``
    (one query); the message tells the blocker why, and the blocked player no more than "cannot"."""
    found = set(Block.objects.filter(blocker__in=(me, them), blocked__in=(me, them))
                .values_list("blocker", flat=True))
    if me in found:
        raise ActionError("blocked", _("You block this player: unblock them first."))
    if them in found:
        raise ActionError("blocked", _("You cannot challenge this player."))


def incoming(player_id: str, now: datetime | None = None) -> list[Challenge]:
    """The open challenges to ``player_id``, oldest first."""
    return list(_open(now or timezone.now()).filter(challenged=player_id).order_by("created_at"))


def outgoing(player_id: str, now: datetime | None = None) -> list[Challenge]:
    """The open challenges ``player_id`` sent, oldest first."""
    return list(_open(now or timezone.now()).filter(challenger=player_id).order_by("created_at"))


def _locked(challenge_id: str, now: datetime) -> Challenge:
    challenge = _open(now).select_for_update().filter(pk=challenge_id).first()
    if challenge is None:
        raise ActionError("challenge_gone", GONE)
    return challenge


def decline(challenge_id: str, player_id: str, reason: str, now: datetime | None = None) -> Challenge:
    """The challenged player declines with ``reason`` (a key of :data:`REASONS`).  Raises
    :class:`ActionError` ``bad_reason``, ``challenge_gone``, ``not_yours``."""
    if reason not in REASONS:
        raise ActionError("bad_reason", _("Choose one of the reasons offered."))
    with transaction.atomic():
        challenge = _locked(challenge_id, now or timezone.now())
        if challenge.challenged != player_id:
            raise ActionError("not_yours", _("That challenge is not for you."))
        challenge.status, challenge.reason = Challenge.Status.DECLINED, reason
        challenge.save(update_fields=["status", "reason"])
    return challenge


def cancel(challenge_id: str, player_id: str, now: datetime | None = None) -> Challenge:
    """The challenger withdraws the challenge.  Raises :class:`ActionError` ``challenge_gone``, ``not_yours``."""
    with transaction.atomic():
        challenge = _locked(challenge_id, now or timezone.now())
        if challenge.challenger != player_id:
            raise ActionError("not_yours", _("That challenge is not yours."))
        challenge.status = Challenge.Status.CANCELLED
        challenge.save(update_fields=["status"])
    return challenge


def accept(challenge_id: str, player_id: str, now: datetime | None = None) -> tuple[Challenge, Game]:
    """The challenged player accepts: the challenger's game is created and the challenged joins it
    (the existing create and join actions), the challenge closed with the game's id, the join's
    events published.  Returns the challenge and the game.  Raises :class:`ActionError`
    ``challenge_gone``, ``not_yours``, and those of create and join (e.g. a rated game with an
    account deleted meanwhile: the challenge then stays open and nothing is stored)."""
    with transaction.atomic():
        challenge = _locked(challenge_id, now or timezone.now())
        if challenge.challenged != player_id:
            raise ActionError("not_yours", _("That challenge is not for you."))
        game = actions.create_game(challenge.challenger, challenge.challenger_name, challenge.color,
                                   time_control=challenge.time_control,
                                   ballot="random" if challenge.ballot else None, rated=challenge.rated)
        progress = actions.join_game(game.id, player_id, challenge.challenged_name)
        challenge.status, challenge.game = Challenge.Status.ACCEPTED, game.id
        challenge.save(update_fields=["status", "game"])
    publish_sync(game.id, progress.events)
    return challenge, Game.objects.get(pk=game.id)


def public(challenge: Challenge) -> dict:
    """A challenge as its two players' pages see it: ``{"id", "from", "to", "control", "color",
    "rated", "ballot", "expires_ms"}`` (expiry in ms since the epoch)."""
    return {"id": challenge.id, "from": challenge.challenger_name, "to": challenge.challenged_name,
            "control": challenge.time_control, "color": challenge.color, "rated": challenge.rated,
            "ballot": challenge.ballot, "expires_ms": int(challenge.expires_at.timestamp() * 1000)}
