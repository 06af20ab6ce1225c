"""The arena's actions: create, cancel, join, withdraw, berserk, and a game's end scored.

Each is one transaction that checks, decides and writes, and raises
:class:`~game.errors.ActionError` with a code (and changes nothing) when refused.  Pairing is
:mod:`game.tournaments.pairing` (who) and :mod:`game.tournaments.jobs` (when, off the socket path).
"""

from __future__ import annotations

import functools
import hmac
from datetime import datetime, timedelta

from django.contrib.auth.hashers import check_password, make_password
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game.clock import FIRST_MOVE_S, TimeControl, TimeControlError
from game.errors import ActionError
from game.models import Account, Game
from game.names import clean_name
from game.ratings import games as ratings
from game.ratings import links
from game.ratings.categories import category_of
from game.round import berserk as round_berserk
from game.round import finisher
from game.round.progress import Progress
from game.rules import Color, Termination, ballots

from . import live, presence, scoring, seeding
from .models import Entry, Pairing, Tournament, new_invite_token

#: A player-made arena lasts this many minutes at least and at most.
MIN_MINUTES, MAX_MINUTES = 10, 240
#: A player-made arena starts at most this far ahead.
MAX_AHEAD = timedelta(days=7)
#: A Swiss event's rounds at least and at most; a round robin's players at most.
MIN_ROUNDS, MAX_ROUNDS, ROUND_ROBIN_MAX = 3, 11, 10
#: Unfinished events one account may have created at once.
MAX_OPEN_PER_CREATOR = 3


def no_such_tournament() -> ActionError:
    """The refusal for a tournament id that names none."""
    return ActionError("no_such_tournament", _("There is no such tournament."))


def live_control(text: str) -> TimeControl:
    """The live control ``text`` names (``M+S``).  Raises :class:`ActionError` ``bad_time_control``
    (not a control, or untimed or correspondence: an arena needs a live clock)."""
    try:
        control = TimeControl.parse(text)
    except TimeControlError as exc:
        raise ActionError("bad_time_control", str(exc)) from None
    if not control.live:
        raise ActionError("bad_time_control", _("An arena is played with a live clock, e.g. 3+0."))
    return control


def create(player_id: str, name: str, time_control: str, minutes: int, starts_at: datetime,
           rated: bool = True, password: str = "", schedule_key: str | None = None,
           system: str = Tournament.System.ARENA, rounds: int = 0, ballot: bool = False,
           ballot_pairs: bool = False) -> Tournament:
    """Create an arena, a Swiss event or a round robin (``system``).  ``player_id`` is the
    creator's (an account's), or empty with a ``schedule_key`` for a scheduled event; ``minutes``
    an arena's duration; ``rounds`` a Swiss event's (a round robin's come from its players);
    ``password`` (optional) stored hashed; a player-made event gets its invite token
    (:func:`reset_invite`); ``ballot``: its games open with a 3-move ballot;
    ``ballot_pairs`` (a round event's, with the ballot): two games a pairing and round, the ballot's
    colours reversed.  Raises :class:`ActionError` ``bad_time_control``, ``bad_duration``,
    ``bad_rounds``, ``bad_system``, ``bad_ballot_pairs``, ``bad_start``, ``sign_in_required``,
    ``too_many_tournaments``, ``bad_name``."""
    control = live_control(time_control)
    name = clean_name(name)
    if system not in Tournament.System.values:
        raise ActionError("bad_system", _("A tournament is an arena, a Swiss event or a round robin."))
    if ballot_pairs and (system == Tournament.System.ARENA or not ballot):
        raise ActionError("bad_ballot_pairs", _("Ballot pairs are played in a Swiss event or a round robin "
                                                "with the 3-move ballot."))
    if system == Tournament.System.SWISS and not MIN_ROUNDS <= rounds <= MAX_ROUNDS:
        raise ActionError("bad_rounds", _("A Swiss event plays from 3 to 11 rounds."))
    if system != Tournament.System.ARENA:
        rounds = rounds if system == Tournament.System.SWISS else 0
        minutes = round_minutes(control, rounds or ROUND_ROBIN_MAX - 1) * (2 if ballot_pairs else 1)
    elif not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise ActionError("bad_duration", _("An arena lasts from 10 to 240 minutes."))
    with transaction.atomic():
        if schedule_key is None:
            now = timezone.now()
            if not now - timedelta(minutes=1) <= starts_at <= now + MAX_AHEAD:
                raise ActionError("bad_start", _("An arena starts within the next seven days."))
            # The creator's account row locked: two creates of one player (two tabs) count in turn.
            if not Account.objects.select_for_update().filter(player_id=player_id or "").exists():
                raise ActionError("sign_in_required", _("Sign in to create a tournament."))
            if Tournament.objects.filter(created_by=player_id, status__in=(
                    Tournament.Status.CREATED, Tournament.Status.STARTED)).count() >= MAX_OPEN_PER_CREATOR:
                raise ActionError("too_many_tournaments", _("You have three tournaments to come already."))
        return Tournament.objects.create(
            name=name, time_control=str(control), minutes=minutes, starts_at=starts_at, rated=bool(rated),
            created_by=player_id, schedule_key=schedule_key, password=make_password(password) if password else "",
            invite=new_invite_token() if schedule_key is None else "", system=system, rounds=rounds,
            ballot=bool(ballot), ballot_pairs=bool(ballot_pairs))


def round_minutes(control: TimeControl, rounds: int) -> int:
    """The time a round event is given at most, in minutes: per round both clocks over 40 moves
    each (base plus increments) and two minutes between rounds."""
    game_s = 2 * ((control.base_s or 0) + 40 * control.increment_s)
    return rounds * (int(game_s // 60) + 3)


def finished_or_none(tournament_id: str) -> Tournament | None:
    """The finished arena ``tournament_id``, or None (no such arena, or not finished)."""
    return Tournament.objects.filter(pk=str(tournament_id)[:16], status=Tournament.Status.FINISHED).first()


def load_locked(tournament_id: str) -> Tournament:
    """The tournament under its row lock (in the caller's transaction).  Raises
    :class:`ActionError` ``no_such_tournament``."""
    found = Tournament.objects.select_for_update().filter(pk=str(tournament_id)[:16]).first()
    if found is None:
        raise no_such_tournament()
    return found


def cancel(tournament_id: str, player_id: str) -> Tournament:
    """Cancel an arena before its start: its creator only.  Raises :class:`ActionError`
    ``no_such_tournament``, ``not_creator``, ``already_started``."""
    with transaction.atomic():
        tournament = load_locked(tournament_id)
        if not player_id or tournament.created_by != player_id:
            raise ActionError("not_creator", _("Only the tournament's creator may cancel it."))
        if tournament.status != Tournament.Status.CREATED:
            raise ActionError("already_started", _("The tournament has started: it can no longer be cancelled."))
        tournament.status = Tournament.Status.CANCELLED
        tournament.save(update_fields=["status"])
        return tournament


def join(tournament_id: str, player_id: str, name: str, password: str = "", invite: str = "") -> Entry:
    """Join a tournament (or come back to it after a withdrawal or an absence: the score is kept);
    a player is in one event at a time, paused in any other.  A rated event takes signed-in players
    only.  A passworded event asks for its password the first time, unless ``invite`` is its
    invite token (:func:`reset_invite`); an ``invite`` given is checked either way.  A Swiss event
    under way takes a late entrant (:func:`game.tournaments.seeding.enter_late`) until its last two
    rounds.  Raises :class:`ActionError` ``no_such_tournament``, ``no_session``, ``bad_name``,
    ``tournament_over``, ``already_started``, ``late_entry_closed``, ``tournament_full``,
    ``bad_invite``, ``bad_password``, ``sign_in_required``, ``playban``."""
    if not player_id:
        raise ActionError("no_session", _("Your browser session has no player id."))
    name = clean_name(name)
    with transaction.atomic():
        tournament = load_locked(tournament_id)
        if tournament.status not in (Tournament.Status.CREATED, Tournament.Status.STARTED) \
                or timezone.now() >= tournament.ends_at:
            raise ActionError("tournament_over", _("This tournament is over."))
        late = tournament.system != Tournament.System.ARENA and _check_round_join(tournament, player_id)
        entry = Entry.objects.select_for_update().filter(tournament=tournament, player_id=player_id).first()
        _check_admission(tournament, entry, password, invite)
        control = TimeControl.parse(tournament.time_control)
        if tournament.rated:
            ratings.check_rated(control, player_id)
        _leave_others(tournament, player_id)
        if entry is None:
            category = category_of(control)
            rating = round(ratings.current(player_id, category).rating) if category else 1500
            entry = Entry.objects.create(tournament=tournament, player_id=player_id, name=name, rating=rating,
                                         free_since=timezone.now())
        elif entry.withdrawn or entry.away:
            playing = Pairing.objects.filter(tournament=tournament, scored=False).filter(
                _seated(player_id)).exists()
            entry.withdrawn = entry.away = False
            entry.free_since = None if playing else timezone.now()
            entry.save(update_fields=["withdrawn", "away", "free_since"])
        return seeding.enter_late(tournament, entry) if late else entry


def check_invite(tournament: Tournament, token: str) -> None:
    """Whether ``token`` is ``tournament``'s current invite token (compared in constant time).
    Raises :class:`ActionError` ``bad_invite`` (a wrong link, or one its creator replaced)."""
    if not (token and tournament.invite and hmac.compare_digest(token.encode(), tournament.invite.encode())):
        raise ActionError("bad_invite", _("This invite link is not valid (any more): ask the tournament's "
                                          "creator for the new one."))


def _check_admission(tournament: Tournament, entry: Entry | None, password: str, invite: str) -> None:
    """An invite given must be the tournament's current one (:func:`check_invite`); without it, a
    newcomer to a passworded event gives the password (``bad_password``)."""
    if invite:
        check_invite(tournament, invite)
    if entry is None and not invite and tournament.password and not check_password(password, tournament.password):
        raise ActionError("bad_password", _("That is not the tournament's password."))


def reset_invite(tournament_id: str, player_id: str) -> Tournament:
    """Give a player-made tournament a new invite token (its creator only, before its end): the old
    link admits nobody any more.  Raises :class:`ActionError` ``no_such_tournament``,
    ``not_creator``, ``tournament_over``."""
    with transaction.atomic():
        tournament = load_locked(tournament_id)
        if not player_id or tournament.created_by != player_id:
            raise ActionError("not_creator", _("Only the tournament's creator may change its invite link."))
        if tournament.status not in (Tournament.Status.CREATED, Tournament.Status.STARTED):
            raise ActionError("tournament_over", _("This tournament is over."))
        tournament.invite = new_invite_token()
        tournament.save(update_fields=["invite"])
        return tournament


def _check_round_join(tournament: Tournament, player_id: str) -> bool:
    """A Swiss event or round robin is joined before its start, or (a Swiss event) as a late entry
    while :func:`game.tournaments.seeding.late_entry_open`; a player numbered in it who withdrew
    may come back, to the next round; a round robin takes :data:`ROUND_ROBIN_MAX` players.
    Returns whether the join is a late entry."""
    known = Entry.objects.filter(tournament=tournament, player_id=player_id).filter(
        Q(number__isnull=False) | Q(tournament__status=Tournament.Status.CREATED)).exists()
    if tournament.status != Tournament.Status.CREATED and not known:
        if seeding.late_entry_open(tournament):
            return True
        if tournament.system == Tournament.System.SWISS:
            raise ActionError("late_entry_closed", _("Late entries close before the last two rounds."))
        raise ActionError("already_started", _("The tournament has started: it can no longer be joined."))
    if tournament.system == Tournament.System.ROUND_ROBIN and not known \
            and Entry.objects.filter(tournament=tournament).count() >= ROUND_ROBIN_MAX:
        raise ActionError("tournament_full", _("This round robin is full."))
    return False


def _leave_others(tournament: Tournament, player_id: str) -> None:
    """A player is in one arena at a time: joining one pauses them in any other to come or under
    way (a game in play there goes on); those arenas' viewers hear of it once this commits."""
    others = list(Entry.objects.select_for_update().filter(
        player_id=player_id, withdrawn=False,
        tournament__status__in=(Tournament.Status.CREATED, Tournament.Status.STARTED)).exclude(
        tournament=tournament).values_list("pk", "tournament_id"))
    if others:
        Entry.objects.filter(pk__in=[pk for pk, _ in others]).update(withdrawn=True, free_since=None)
        for _, other in others:
            transaction.on_commit(functools.partial(live.changed, other))


def _seated(player_id: str) -> Q:
    return Q(black=player_id) | Q(white=player_id)


def withdraw(tournament_id: str, player_id: str) -> Entry:
    """Withdraw from an arena (pause): not paired any more until one joins again; the score and
    a game in play stay.  Raises :class:`ActionError` ``no_such_tournament``, ``not_joined``."""
    with transaction.atomic():
        tournament = load_locked(tournament_id)
        entry = Entry.objects.select_for_update().filter(tournament=tournament, player_id=player_id).first()
        if entry is None or entry.withdrawn:
            raise ActionError("not_joined", _("You are not in this tournament."))
        entry.withdrawn = True
        entry.free_since = None
        entry.save(update_fields=["withdrawn", "free_since"])
        return entry


def current_pairing(tournament_id: str, player_id: str) -> Pairing | None:
    """``player_id``'s game in play in the tournament, or None."""
    return Pairing.objects.filter(tournament_id=tournament_id, scored=False).filter(
        _seated(player_id)).order_by("-created_at").first()


def of_game(game_id: str) -> Pairing | None:
    """The arena pairing of ``game_id`` (with its tournament), or None for a game of no arena."""
    return Pairing.objects.filter(game_id=game_id).select_related("tournament").first()


def berserk(tournament_id: str, player_id: str) -> Progress:
    """Go berserk in one's arena game in play before one's first move: half the time
    (:func:`game.round.berserk.berserk`) and the bonus of a long enough win.  Returns the game's
    :class:`Progress` (its event to publish).  Raises :class:`ActionError` ``not_in_game`` and
    what :func:`game.round.berserk.berserk` raises (``berserk_too_late``, ``berserk_twice``,
    ``berserk_no_clock``, ``game_over`` ...)."""
    pairing = current_pairing(tournament_id, player_id)
    if pairing is None:
        raise ActionError("not_in_game", _("You have no game in play in this tournament."))
    with transaction.atomic():
        progress = round_berserk.berserk(pairing.game_id, player_id)
        field = "black_berserk" if pairing.black == player_id else "white_berserk"
        Pairing.objects.filter(pk=pairing.pk).update(**{field: True})
    return progress


def _result(game: Game, side: Color) -> scoring.Result:
    winner = {"1-0": Color.BLACK, "0-1": Color.WHITE}.get(game.result)
    if game.result == "1/2-1/2":
        return scoring.Result.DRAW
    return scoring.Result.WIN if winner is side else scoring.Result.LOSS


def never_moved(game: Game, side: Color) -> bool:
    """Whether ``side`` lost ``game`` on time, or let the clock abort it (its first move not made
    within :data:`game.clock.FIRST_MOVE_S`), without a move of its own: such a player is withdrawn
    from the arena."""
    if game.termination == Termination.TIME_FORFEIT.value:
        lost = _result(game, side) is scoring.Result.LOSS
    elif game.termination == Termination.ABORTED.value and game.turn_started_at is not None:
        # aborted by the clock: the side to move let its first move's time run out
        waited = (game.finished_at or game.updated_at) - game.turn_started_at
        lost = game.turn is side and waited >= timedelta(seconds=FIRST_MOVE_S)
    else:
        return False
    return lost and not round_berserk.has_moved(game, side)


def record(game_id: str) -> Pairing | None:
    """Score the end of an arena game (once: a second call changes nothing): each player's points,
    streak, games and performance, and both free to pair again, but a player who never moved
    (:func:`never_moved`: withdrawn) or who is gone (:func:`game.tournaments.presence.gone`: paused
    as ``away`` until a page of the arena opens again, :func:`back`); a game that ended after the
    arena's end, was aborted, or was not played for (:func:`played_for`) scores nothing.  Returns
    the pairing, or None for a game of no arena or one not over."""
    with transaction.atomic():
        pairing = Pairing.objects.select_for_update().filter(game_id=game_id).first()
        if pairing is None or pairing.scored:
            return pairing
        game = Game.objects.get(pk=game_id)
        if not game.is_over:
            return None
        tournament = Tournament.objects.get(pk=pairing.tournament_id)
        counts = game.status == Game.Status.FINISHED and tournament.status == Tournament.Status.STARTED \
            and (game.finished_at or timezone.now()) <= tournament.ends_at and played_for(game)
        moves = (game.ply - ballots.opening_plies(game.ballot)) // 2
        now = timezone.now()
        entries = {e.player_id: e for e in Entry.objects.select_for_update().filter(
            tournament=tournament, player_id__in=(pairing.black, pairing.white))}
        for side, player, opponent in ((Color.BLACK, pairing.black, pairing.white),
                                       (Color.WHITE, pairing.white, pairing.black)):
            entry = entries[player]
            points = _score_entry(entry, game, side, entries[opponent], pairing, moves) if counts else 0
            setattr(pairing, f"{side.name.lower()}_points", points if counts else None)
            entry.last_opponent = opponent
            entry.withdrawn = entry.withdrawn or never_moved(game, side)
            # Checked under the entry's row lock, which a page coming back takes too (back()).
            entry.away = entry.away or (not entry.withdrawn and tournament.status == Tournament.Status.STARTED
                                        and presence.gone(tournament.id, player, game.id, side,
                                                          game.created_at.timestamp()))
            entry.free_since = None if entry.withdrawn or entry.away else now
            entry.save()
        pairing.scored = True
        pairing.save()
        return pairing


def back(tournament_id: str, player_id: str) -> bool:
    """A page of the tournament opened by ``player_id`` (its socket counted present first,
    :func:`game.tournaments.presence.enter`): an arena player paused as away is paired again
    from now on (free at once unless a game of theirs is in play).  Returns whether they were
    away."""
    with transaction.atomic():
        entry = Entry.objects.select_for_update().filter(tournament_id=tournament_id, player_id=player_id,
                                                         away=True).first()
        if entry is None:
            return False
        entry.away = False
        playing = Pairing.objects.filter(tournament_id=tournament_id, scored=False).filter(
            _seated(player_id)).exists()
        entry.free_since = None if entry.withdrawn or playing else timezone.now()
        entry.save(update_fields=["away", "free_since"])
        return True


def played_for(game: Game) -> bool:
    """Whether the finished ``game``'s result may earn arena points: each side made its first
    moves (:func:`game.round.finisher.earned`: a game given up at once scores nothing, casual or
    rated) and its players are not one person's accounts (:func:`game.ratings.links.link`), so
    that no points are farmed between one's own accounts."""
    return finisher.earned(game) and links.link(game.black_player or "", game.white_player or "") is None


def _score_entry(entry: Entry, game: Game, side: Color, opponent: Entry, pairing: Pairing, moves: int) -> int:
    result = _result(game, side)
    berserked = pairing.black_berserk if side is Color.BLACK else pairing.white_berserk
    scored = scoring.score(result, entry.streak, berserked, moves)
    entry.score += scored.points
    entry.streak = scored.streak
    entry.games += 1
    entry.wins += result is scoring.Result.WIN
    entry.draws += result is scoring.Result.DRAW
    rating = getattr(game, f"{side.opponent.name.lower()}_rating") or opponent.rating
    entry.opponents_rating += rating
    return scored.points
