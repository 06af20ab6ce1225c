"""The tournaments' work off the socket path, as jobs on the RQ ``tournaments`` queue.

- :func:`on_game_ended` (the :data:`game.round.signals.game_ended` receiver) queues
  :func:`game_over` for a tournament game: its end scored (:func:`game.tournaments.arena.record`,
  or :func:`game.tournaments.swiss.record` in a round event) and the free players paired at once.
- :func:`tick`: one job per arena, on RQ's scheduler from its start to its end every
  :data:`TICK_S` seconds: the start, the pairing of whoever waits, the end (the standings frozen).
- :func:`starting_soon`: one job per tournament, on RQ's scheduler :data:`SOON_MINUTES` minutes
  before its start: its players are told (:data:`game.tournaments.signals.starting_soon`).
- :func:`pair_arena` takes a lock in Redis, so that ticks and game ends on several workers never
  pair a player twice; :func:`pair_round` does the same for a Swiss event's or round robin's
  next round (:mod:`game.tournaments.swiss`), started once every game of the last is scored.
- :func:`schedule_arenas`: the hourly arenas created ahead (:mod:`game.tournaments.schedule`).
"""

from __future__ import annotations

import logging
import random
from datetime import datetime, timedelta
from typing import Any

import django_rq
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from redis.exceptions import RedisError

from game.errors import ActionError
from game.models import Game
from game.ratings import games as ratings
from game.round import actions
from game.rules import ballots

from . import arena, live, pairing, seeding, signals, standings, swiss
from .models import Entry, Pairing, Tournament

log = logging.getLogger(__name__)

QUEUE = live.QUEUE
#: Seconds between two ticks of a running arena.
TICK_S = 5
#: Seconds after its last tick an arena's chain of ticks is taken for lost (:func:`revive_ticks`).
HEARTBEAT_S = 6 * TICK_S
#: Seconds a pairing may hold its tournament's lock in Redis (it takes well under one).
PAIRING_LOCK_S = 30
#: Minutes before its start that a tournament's players are told it starts soon (more than one: the
#: notice's words are plural).
SOON_MINUTES = 5


def _queue():
    return django_rq.get_queue(QUEUE)


def on_game_ended(sender: Any, game: Game, **kwargs: Any) -> None:
    """:data:`game.round.signals.game_ended` receiver: an arena game's end is queued for
    :func:`game_over`.  One indexed read; never raises (a failure is logged, and the arena's
    next tick scores the game)."""
    try:
        if Pairing.objects.filter(game_id=game.id, scored=False).exists():
            _queue().enqueue(game_over, game.id, result_ttl=0, failure_ttl=24 * 3600)
    except Exception:
        log.exception("tournaments: the end of game %s could not be queued", game.id)


def game_over(game_id: str) -> None:
    """The job of a tournament game's end: scored, the standings' message due, then an arena's
    free players paired, or a Swiss event's or round robin's next round started if it was the
    round's last game."""
    found = arena.of_game(game_id)
    if found is None:
        return
    rounds = found.tournament.system != Tournament.System.ARENA
    scored = swiss.record(game_id) if rounds else arena.record(game_id)
    if scored is not None:
        live.changed(scored.tournament_id)
        (pair_round if rounds else pair_arena)(scored.tournament_id)


def _locked(tournament_id: str):
    return django_rq.get_connection(QUEUE).lock(f"tournaments:pairing:{tournament_id}", timeout=PAIRING_LOCK_S,
                                                blocking_timeout=PAIRING_LOCK_S)


def pair_round(tournament_id: str) -> list[Game]:
    """Start the next round of a running Swiss event or round robin once every game of the round
    in play is scored (:func:`game.tournaments.swiss.next_round`; the bye's point given), or finish
    it after its last round, under the tournament's lock in Redis; in ballot pairs, first the
    return games due (:func:`return_games`).  Returns the games started."""
    with _locked(tournament_id):
        started = _round_locked(tournament_id)
    for game in started:
        live.paired(tournament_id, game)
    return started


def _round_locked(tournament_id: str) -> list[Game]:
    tournament = Tournament.objects.get(pk=tournament_id)
    if tournament.status != Tournament.Status.STARTED:
        return []
    returns = return_games(tournament) if tournament.ballot_pairs else []
    if returns:
        live.changed(tournament_id)     # the board shows the return games
    if returns or Pairing.objects.filter(tournament=tournament, scored=False).exists():
        return returns
    with transaction.atomic():
        # Under the row lock a late entry takes too: an entrant is in this round's pairing, or
        # enters after it (their byes counting it).
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        try:
            seatings = swiss.next_round(tournament) if tournament.round < tournament.rounds else None
        except ValueError:
            log.warning("tournaments: no legal pairing for round %s of %s", tournament.round + 1, tournament_id)
            seatings = None
        if seatings:
            tournament.round += 1
            Tournament.objects.filter(pk=tournament_id).update(round=tournament.round)
    if not seatings:
        finish(tournament_id)
        return []
    # One ballot a round, drawn from the approved ones: every board plays it.
    ballot = ballots.random_ballot().number if tournament.ballot else None
    started = []
    for seating in seatings:
        if seating.white is None:
            swiss.give_bye(seating.black, tournament.round, swiss.bye_points(tournament))
            continue
        game = _start(tournament, seating.black, seating.white, tournament.round, ballot)
        if game is not None:
            started.append(game)
    live.changed(tournament_id)
    return started


def pair_arena(tournament_id: str) -> list[Game]:
    """Pair the free players of a running arena (:func:`game.tournaments.pairing.pair`) and start
    their games (:func:`game.round.actions.start_game`, colours drawn, rated as the arena is),
    under the arena's lock in Redis.  Returns the games started."""
    with _locked(tournament_id):
        started = _pair_locked(tournament_id)
    for game in started:
        live.paired(tournament_id, game)
    if started:
        live.changed(tournament_id)
    return started


def _pair_locked(tournament_id: str) -> list[Game]:
    tournament = Tournament.objects.get(pk=tournament_id)
    if tournament.status != Tournament.Status.STARTED or timezone.now() >= tournament.ends_at:
        return []
    ranks = {entry.player_id: index for index, entry in enumerate(standings.ranked(tournament_id))}
    free = {e.player_id: e for e in Entry.objects.filter(tournament=tournament, withdrawn=False,
                                                         free_since__isnull=False)}
    for player in seated_elsewhere(list(free)):
        del free[player]
    now = timezone.now()
    pairs = pairing.pair([pairing.Waiting(e.player_id, ranks[e.player_id], e.last_opponent,
                                          (now - e.free_since).total_seconds()) for e in free.values()
                          if e.free_since is not None])
    started = []
    for pair in pairs:
        game = _start(tournament, free[pair[0]], free[pair[1]], ballot="random" if tournament.ballot else None)
        if game is not None:
            started.append(game)
    return started


def seated_elsewhere(player_ids: list[str]) -> set[str]:
    """Which of ``player_ids`` hold a seat in an arena game not scored yet (of any arena): one who
    joined another arena while playing there waits for that game's end before being paired."""
    busy = Pairing.objects.filter(scored=False).filter(Q(black__in=player_ids) | Q(white__in=player_ids))
    return {p for pair in busy.values_list("black", "white") for p in pair} & set(player_ids)


def return_games(tournament: Tournament) -> list[Game]:
    """Start the return game of each ballot pair of the round in play whose first game is scored
    and whose return game is not started yet: the same ballot, the colours reversed (the
    first game's White is Black).  It is played even when a player withdrew after the first game
    (a withdrawal counts from the next round).  Returns the games started; a game the site refuses
    (an account deleted, a playban) is not played, and logged."""
    legs = Pairing.objects.filter(tournament=tournament, round=tournament.round)
    returned = set(legs.filter(leg=2).values_list("white", "black"))
    names = dict(Entry.objects.filter(tournament=tournament).values_list("player_id", "name"))
    started = []
    for first in legs.filter(leg=1, scored=True).select_related("game").order_by("created_at"):
        if (first.black, first.white) in returned:
            continue
        try:
            with transaction.atomic():
                Entry.objects.filter(tournament=tournament, player_id__in=(first.black, first.white)).update(
                    free_since=None)
                game = actions.start_game(black=(first.white, names[first.white]),
                                          white=(first.black, names[first.black]),
                                          time_control=tournament.time_control, rated=tournament.rated,
                                          ballot=first.game.ballot)
                Pairing.objects.create(game=game, tournament=tournament, black=first.white, white=first.black,
                                       round=first.round, leg=2)
        except ActionError as exc:
            log.warning("tournaments: the return game of %s refused in %s (%s)", first.game_id, tournament.id,
                        exc.code)
            continue
        started.append(game)
    return started


def _start(tournament: Tournament, first: Entry, second: Entry, round_number: int | None = None,
           ballot: int | str | None = None) -> Game | None:
    """A game between two free entries: colours drawn in an arena, ``first`` Black in a round;
    ``ballot`` as :func:`game.round.actions.start_game` takes it (None: the free start)."""
    black, white = random.sample([first, second], 2) if round_number is None else (first, second)
    try:
        with transaction.atomic():
            # Both still free (nobody paused meanwhile): taken first, under their rows' locks.
            if Entry.objects.filter(pk__in=(first.pk, second.pk), withdrawn=False,
                                    free_since__isnull=False).update(free_since=None) != 2:
                transaction.set_rollback(True)
                return None
            game = actions.start_game(black=(black.player_id, black.name), white=(white.player_id, white.name),
                                      time_control=tournament.time_control, rated=tournament.rated,
                                      ballot=ballot)
            Pairing.objects.create(game=game, tournament=tournament, black=black.player_id, white=white.player_id,
                                   round=round_number)
    except ActionError as exc:
        # A seat the game refuses now (an account deleted, a playban): that player is withdrawn.
        log.warning("tournaments: %s vs %s refused in %s (%s)", black.player_id, white.player_id,
                    tournament.id, exc.code)
        for entry in (first, second):
            if tournament.rated and not _may_play_rated(tournament, entry.player_id):
                Entry.objects.filter(pk=entry.pk).update(withdrawn=True, free_since=None)
        return None
    return game


def _may_play_rated(tournament: Tournament, player_id: str) -> bool:
    try:
        ratings.check_rated(arena.live_control(tournament.time_control), player_id)
    except ActionError:
        return False
    return True


def tick_job_id(tournament_id: str, due: datetime) -> str:
    """The RQ job id of an arena's tick due at ``due``: one job per arena and second, so that the
    same tick put on the scheduler twice runs once (and a tick that queues the next one never
    queues it under its own id, which RQ deletes once it has run)."""
    return f"arena-tick-{tournament_id}-{int(due.timestamp())}"


def soon_job_id(tournament_id: str, starts_at: datetime) -> str:
    """The RQ job id of a tournament's :func:`starting_soon` for a start at ``starts_at``: put on
    the scheduler twice, it runs once."""
    return f"tournament-soon-{tournament_id}-{int(starts_at.timestamp())}"


def schedule_tick(tournament: Tournament) -> bool:
    """Put the tournament's first tick on RQ's scheduler at its start, and :func:`starting_soon`
    :data:`SOON_MINUTES` minutes before it when that is still to come (a tournament made closer to
    its start has none).  Returns False, logged, when Redis refused them: the tournament stands,
    and :func:`revive_ticks` puts them there later."""
    soon = tournament.starts_at - timedelta(minutes=SOON_MINUTES)
    try:
        _queue().enqueue_at(tournament.starts_at, tick, tournament.id,
                            job_id=tick_job_id(tournament.id, tournament.starts_at), result_ttl=0)
        if soon > timezone.now():
            _queue().enqueue_at(soon, starting_soon, tournament.id,
                                job_id=soon_job_id(tournament.id, tournament.starts_at), result_ttl=0)
    except RedisError as exc:
        log.warning("tournaments: the first tick of %s could not be scheduled: %s", tournament.id, exc)
        return False
    return True


def starting_soon(tournament_id: str) -> None:
    """The job run :data:`SOON_MINUTES` minutes before a tournament's start: if it is still to
    start, :data:`game.tournaments.signals.starting_soon` tells its players (the bell, in
    :mod:`game.people.gamenews`, which tells each player once however often this runs)."""
    tournament = Tournament.objects.filter(pk=tournament_id, status=Tournament.Status.CREATED).first()
    if tournament is None or tournament.starts_at <= timezone.now():
        return
    for receiver, result in signals.starting_soon.send_robust(sender=Tournament, tournament=tournament,
                                                              minutes=SOON_MINUTES):
        if isinstance(result, Exception):
            log.error("tournaments: a receiver of the coming start of %s failed: %r (%s)", tournament_id, result,
                      receiver)


def tick(tournament_id: str) -> None:
    """The job that runs a tournament: starts it when due, scores any end its receiver missed,
    pairs an arena's waiting players (or starts a Swiss event's or round robin's next round once
    the last is over), finishes an arena at its end (a round event after its last round); and
    comes back in :data:`TICK_S` seconds until then."""
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    if tournament is None or tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
        return
    now = timezone.now()
    if tournament.status == Tournament.Status.CREATED and now >= tournament.starts_at:
        _begin(tournament, now)
    rounds = tournament.system != Tournament.System.ARENA
    for game_id in Pairing.objects.filter(tournament_id=tournament_id, scored=False,
                                          game__status__in=(Game.Status.FINISHED, Game.Status.ABORTED)
                                          ).values_list("game_id", flat=True):
        (swiss.record if rounds else arena.record)(game_id)
    if not rounds and now >= tournament.ends_at:
        finish(tournament_id)
        return
    (pair_round if rounds else pair_arena)(tournament_id)
    if Tournament.objects.filter(pk=tournament_id, status=Tournament.Status.FINISHED).exists():
        return
    due = now + timedelta(seconds=TICK_S) if rounds else min(now + timedelta(seconds=TICK_S), tournament.ends_at)
    if tournament.status == Tournament.Status.CREATED:
        due = tournament.starts_at
    _queue().enqueue_at(due, tick, tournament_id, job_id=tick_job_id(tournament_id, due), result_ttl=0)
    django_rq.get_connection(QUEUE).set(_heartbeat_key(tournament_id), "1", ex=HEARTBEAT_S)


def _begin(tournament: Tournament, now: datetime) -> None:
    """Start a tournament: everyone present free to pair; a round event's players numbered (and a
    round robin's rounds counted from them)."""
    begun = Tournament.objects.filter(pk=tournament.id, status=Tournament.Status.CREATED).update(
        status=Tournament.Status.STARTED)
    tournament.status = Tournament.Status.STARTED
    Entry.objects.filter(tournament_id=tournament.id, withdrawn=False).update(free_since=now)
    if tournament.system != Tournament.System.ARENA:
        players = seeding.number_players(tournament)
        if tournament.system == Tournament.System.ROUND_ROBIN:
            tournament.rounds = swiss.round_robin_rounds(len(players))
            Tournament.objects.filter(pk=tournament.id).update(rounds=tournament.rounds)
    live.changed(tournament.id)
    if begun:  # its players are told once (game.people: the bell)
        for receiver, result in signals.started.send_robust(sender=Tournament, tournament=tournament):
            if isinstance(result, Exception):
                log.error("tournaments: a receiver of the start of %s failed: %r (%s)", tournament.id, result,
                          receiver)


def _heartbeat_key(tournament_id: str) -> str:
    return f"tournaments:tick:{tournament_id}"


def revive_ticks() -> list[str]:
    """Put back the ticks Redis lost (a flushed or replaced Redis): an arena to come whose first
    tick is not on the scheduler gets it again; a running one, or one past its start, whose tick
    has not run for :data:`HEARTBEAT_S` seconds ticks now.  Returns the ids of the arenas revived;
    safe to run at any time (``manage.py schedule_arenas`` does, hourly)."""
    queue, connection, revived = _queue(), django_rq.get_connection(QUEUE), []
    now = timezone.now()
    for tournament in Tournament.objects.filter(status__in=(Tournament.Status.CREATED, Tournament.Status.STARTED)):
        if tournament.status == Tournament.Status.CREATED and tournament.starts_at > now:
            if queue.fetch_job(tick_job_id(tournament.id, tournament.starts_at)) is None:
                schedule_tick(tournament)
                revived.append(tournament.id)
        elif not connection.exists(_heartbeat_key(tournament.id)):
            queue.enqueue(tick, tournament.id, job_id=tick_job_id(tournament.id, now), result_ttl=0)
            revived.append(tournament.id)
    return revived


def finish(tournament_id: str) -> None:
    """End a running arena: its standings frozen (games that end later score nothing)."""
    Tournament.objects.filter(pk=tournament_id, status=Tournament.Status.STARTED).update(
        status=Tournament.Status.FINISHED)
    Entry.objects.filter(tournament_id=tournament_id).update(free_since=None)
    live.changed(tournament_id)
