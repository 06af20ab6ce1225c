"""The actions of one game: create, join, play a move, check the clock, resign, abort, and the
housekeeping that ends a game nobody joined.

Views and sockets call these functions (and those of the collaborators beside
them: :mod:`~game.round.drawer` for draw offers, :mod:`~game.round.rematcher`
for rematches, :mod:`~game.round.claims` for claims against a player who
left) and nothing else decides anything.  Each action is one database
transaction: it checks (seat, turn, version, legality), changes the stored
game under its row lock with a conditional update, and returns
:class:`~game.round.progress.Progress`: the game and the events to publish
once the transaction has committed.  A refused action raises
:class:`~game.errors.ActionError` with a code and changes nothing.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any, NamedTuple

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from checkers_site.ops import metrics
from game import rules
from game.clock import Expiry, TimeControl, TimeControlError
from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Forecast, Game, Move
from game.names import clean_name
from game.ratings import games as ratings
from game.round import drawer, events, finisher, outages, presence, store, takebacks
from game.round.progress import (
    Change,
    Progress,
    act,
    clock_fields,
    expiry_change,
    finished,
    seat_in_play,
    store_update,
)
from game.round.records import Kept, kept_after
from game.rules import Color, ballots

#: A game may be aborted while the players have played fewer plies than this (a side has not moved
#: yet); a 3-move ballot's plies are the site's, not theirs.
ABORT_BEFORE_PLY = 2


def _control(text: str) -> TimeControl:
    try:
        return TimeControl.parse(text)
    except TimeControlError as exc:
        raise ActionError("bad_time_control", str(exc)) from None


def create_game(player_id: str, name: str, color: str, start_fen: str | None = None,
                time_control: str = "untimed", ballot: int | str | None = None, rated: bool = False) -> Game:
    """Create a game with the creator seated as ``color``: ``'B'``, ``'W'`` or ``'random'``.

    ``start_fen`` (PDN FEN) starts the game from another position;
    ``time_control`` is ``untimed``, ``M+S`` or ``1d``/``3d``/``7d``
    (:class:`game.clock.TimeControl`); ``ballot`` is None for the free start, ``"random"``
    for an approved 3-move ballot drawn at random, or a ballot's number (1-174, an int or its
    digits): the site plays its three plies at once, stored as the game's plies 1 to 3, and the
    game waits for its opponent with White to move (docs/rules.md, "3-move ballots").  A
    ``rated`` game (``docs/ratings.md``) needs the creator's account and a timed or
    correspondence control, and from the start position; only an account may join it.  Raises
    :class:`ActionError`: ``bad_name``, ``no_session``, ``bad_color``, ``bad_fen``,
    ``bad_time_control``, ``bad_ballot``, ``barred_ballot``, ``unrated_control``,
    ``sign_in_required``, ``rated_setup``; nothing is stored then.
    """
    name = clean_name(name)
    control = _control(time_control)
    if not player_id:
        raise ActionError("no_session", _("Your browser session has no player id."))
    if rated:
        ratings.check_rated(control, player_id)
        if start_fen:
            raise ActionError("rated_setup", _("A rated game starts from the start position, not from a set-up one."))
    if color == "random":
        color = random.choice("BW")
    if color not in ("B", "W"):
        raise ActionError("bad_color", _("Choose Black, White or random."))
    opening = choose_ballot(ballot)
    if opening is not None and start_fen:
        raise ActionError("bad_ballot", _("A 3-move ballot starts from the start position, not from a set-up one."))
    try:
        position = rules.Position.from_fen(start_fen) if start_fen else rules.Position.initial()
    except rules.RulesError as exc:
        raise ActionError("bad_fen", str(exc)) from None
    game = Game(start_fen=position.fen(), fen=position.fen(), time_control=str(control),
                black_ms=control.start_ms(), white_ms=control.start_ms(), rated=bool(rated))
    player_field, name_field = Game.seat_fields(Color(color))
    setattr(game, player_field, player_id)
    setattr(game, name_field, name)
    with transaction.atomic():
        _open_with(game, opening)
    return game


def start_game(black: tuple[str, str], white: tuple[str, str], time_control: str = "untimed",
               now: datetime | None = None, ballot: int | str | None = None, rated: bool = False) -> Game:
    """Create a game with both seats taken, ready to play: matchmaking pairs, rematches and games
    against the computer.

    ``black`` and ``white`` are ``(player_id, display name)``; ``time_control`` and ``ballot``
    as for :func:`create_game` (with a ballot, the first turn is White's, ply 4); ``now`` the
    start of the first turn (default: the current time).  A ``rated`` game keeps both players'
    ratings of its category (``docs/ratings.md``).  Raises :class:`ActionError`
    ``bad_time_control``, ``no_session``, ``bad_name``, ``bad_ballot``, ``barred_ballot``, and
    for a rated game ``unrated_control``, ``sign_in_required`` (both seats must be accounts');
    nothing is stored then.
    """
    control = _control(time_control)
    (black_id, black_name), (white_id, white_name) = black, white
    if not black_id or not white_id:
        raise ActionError("no_session", _("Both players need a player id."))
    if rated:
        ratings.check_rated(control, black_id, white_id)
    opening = choose_ballot(ballot)
    position = rules.Position.initial()
    game = Game(
        start_fen=position.fen(), fen=position.fen(), status=Game.Status.ACTIVE,
        time_control=str(control), black_ms=control.start_ms(), white_ms=control.start_ms(),
        turn_started_at=now or timezone.now(),
        black_player=black_id, black_name=clean_name(black_name),
        white_player=white_id, white_name=clean_name(white_name), rated=bool(rated),
        **(ratings.start_fields(black_id, white_id, str(control)) if rated else {}),
    )
    with transaction.atomic():
        _open_with(game, opening)
    return game


def choose_ballot(choice: int | str | None) -> ballots.Ballot | None:
    """The 3-move ballot a new game opens with (:func:`game.rules.ballots.choose`: None or
    ``"free"`` for the free start, ``"random"``, or a number).  Raises :class:`ActionError`
    ``bad_ballot`` (no such number, or not a number) or ``barred_ballot``."""
    try:
        return ballots.choose(choice)
    except ballots.BallotError as exc:
        if exc.code == "barred":
            chosen = ballots.ballot(int(str(choice).strip()))
            raise ActionError("barred_ballot", lazy_text(
                _("Ballot %(number)s (%(moves)s) is barred: it is not played. Choose another number "
                  "or a random ballot."), number=chosen.number, moves=chosen.text)) from None
        if exc.code == "unknown":
            raise ActionError("bad_ballot", lazy_text(
                _("There is no ballot %(number)s: the 3-move ballots are numbered 1 to %(count)s."),
                number=str(choice).strip()[:8], count=len(ballots.BALLOTS))) from None
        raise ActionError("bad_ballot", lazy_text(_("Give the ballot's number, from 1 to %(count)s."),
                                                  count=len(ballots.BALLOTS))) from None


def _open_with(game: Game, opening: ballots.Ballot | None) -> None:
    """Save the new ``game`` (inside the caller's transaction) and, for a ballot, its three plies
    as moves 1 to 3: the position after them, ``ply`` 3 and the ballot's number."""
    if opening is None:
        game.save()
        return
    record = rules.Game()
    rows = []
    for ply, text in enumerate(opening.moves, start=1):
        move = record.play(text)
        rows.append(Move(game=game, ply=ply, notation=str(move), fen_after=record.position.fen()))
    game.fen = record.position.fen()
    game.ply = record.ply
    game.no_progress = record.no_progress_plies
    game.ballot = opening.number
    game.save()
    Move.objects.bulk_create(rows)


def join_game(game_id: str, player_id: str, name: str) -> Progress:
    """Seat ``player_id`` in the free seat of a waiting game; the game then starts.

    Joining a game one already sits in changes nothing (no events).  Only an account may join
    a rated game.  Raises :class:`ActionError`: ``bad_name``, ``no_session``, ``no_such_game``,
    ``seats_taken``, ``sign_in_required``.
    """
    name = clean_name(name)
    if not player_id:
        raise ActionError("no_session", _("Your browser session has no player id."))
    with transaction.atomic():
        game = store.load_for_update(game_id)
        if game.seat_of(player_id):
            return Progress(game)
        if game.status != Game.Status.WAITING:
            raise ActionError("seats_taken", _("Both seats are taken; you are watching this game."))
        if game.rated:
            ratings.check_rated(game.control, player_id)
        free = Color.BLACK if not game.black_player else Color.WHITE
        player_field, name_field = Game.seat_fields(free)
        store.bump(game, **finisher.complete(game, {"status": Game.Status.ACTIVE, "turn_started_at": timezone.now(),
                                                    player_field: player_id, name_field: name}))
        return Progress(game, [events.seats_event(game, store.current_record(game))])


def play_move(game_id: str, player_id: str | None, text: str, v: int, now: datetime | None = None,
              arrived_at: datetime | None = None, kept: Kept | None = None) -> Progress:
    """Play ``text`` (full or unambiguous short form, ``docs/rules.md`` "Notation in") for the
    seat ``player_id`` holds.

    ``v`` is the version the client last applied: it must be at least the
    version that set the current position and at most the current version.
    The move is stored as ply ``game.ply + 1`` (unique per game) and the game
    row is updated conditionally on its version, so two racing submissions
    never both land.  Returns the ``move`` event (with the game's end when the
    move decided it).  In a timed game the mover is charged the time from the
    start of the turn to ``arrived_at``, when the move reached the server
    (default ``now``), and gets the increment; the opponent's turn starts at
    ``now``, when the move is played (default the current time), so the time
    the server took is charged to nobody.  A move that arrived after the side
    to move ran out of time is not played: the game ends on time instead and
    the ``update`` event ``flagged`` (or ``aborted``, for a live game's first
    move not made in time) is returned.  A pending draw offer of the opponent
    is declined, and so is a pending takeback proposal of the opponent (one's
    own is withdrawn: :func:`game.round.takebacks.after_move`); in a correspondence game the
    mover's own conditional moves go (:mod:`game.round.forecasts` stores a reply's tails again).

    ``kept``: the row and record this process kept after the game's last move
    (:class:`~game.round.records.Kept`, the caller's to give up: they may be played on).  With
    them the move is decided on that row and stored in one conditional write, without reading
    or locking the row first (:func:`game.round.store.move_if_unchanged`); anything that write
    cannot settle (the stored version moved, a refusal, a clock run out, a rated game's end, a
    caller's transaction already open) is decided again on the row locked and read.  The
    returned :class:`Progress` carries what to keep for the next move once this one commits.

    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``,
    ``not_started``, ``game_over``, ``bad_version``, ``stale``,
    ``not_your_turn``, ``malformed_move``, ``illegal_move``, ``ambiguous_move``.
    """
    if kept is not None and store.writes_unlocked():
        try:
            played = _move(kept.game, kept.record, player_id, text, v, now, arrived_at)
        except ActionError:
            played = None
        if played is not None:
            return played
        kept = None
    try:
        with transaction.atomic():
            game = store.load_for_update(game_id)
            record = kept.record_for(game) if kept is not None else None
            played = _move(game, record, player_id, text, v, now, arrived_at, locked=True)
            assert played is not None
            return played
    except IntegrityError:
        raise ActionError("stale", _("Another move was played first; your board has been refreshed.")) from None


class _Decided(NamedTuple):
    """A move checked and played on the rules' record, not stored yet."""

    record: rules.Game
    move: rules.Move
    played: tuple[int, str, str]     # ply, notation, FEN after it
    changes: dict[str, Any]          # the game's fields the move changes


def _move(game: Game, record: rules.Game | None, player_id: str | None, text: str, v: int,
          now: datetime | None, arrived_at: datetime | None, locked: bool = False) -> Progress | None:
    """:func:`play_move` on ``game``: the row locked in the current transaction when ``locked``
    (``record`` None: rebuilt from the database), else a row kept after the last move with its
    ``record``.  For a kept row, None when the move must be decided on the locked row instead (a
    clock ran out, the move ends a rated game, or the stored version moved)."""
    decided = _decide(game, record, player_id, text, v, now, arrived_at)
    if isinstance(decided, Expiry):
        return store_update(game, None, expiry_change(decided)) if locked else None
    if locked:
        store.insert_move_and_bump(game, decided.played, finisher.complete(game, decided.changes))
        transaction.on_commit(metrics.moves_on_locked_row.inc)
    else:
        if finisher.ends_rated_game(game, decided.changes):
            return None     # its ratings are settled under the row lock
        if not _stored_on_kept_row(game, decided):
            return None
        metrics.moves_on_kept_row.inc()
    if game.control.days:
        # The mover's conditional moves were written for the opponent's turn: they go.
        Forecast.objects.filter(game_id=game.pk, player_id=player_id).delete()
    progress = Progress(game, [events.move_event(game, decided.record, decided.move)])
    progress.keep_on_commit(kept_after(game, decided.record))
    return progress


class _NotStored(Exception):
    """The kept row's version moved: the move was not stored."""


def _stored_on_kept_row(game: Game, decided: _Decided) -> bool:
    """Store ``decided`` on the kept ``game`` (:func:`store.move_if_unchanged`); whether it was.  A
    move that ends the game is written in a transaction of its own, rolled back when nothing was
    stored, so the end is announced (:func:`finisher.complete`, on commit) only once it is stored."""
    try:
        if not finisher.ends(game, decided.changes):
            return store.move_if_unchanged(game, decided.played, finisher.complete(game, decided.changes))
        with transaction.atomic():
            if not store.move_if_unchanged(game, decided.played, finisher.complete(game, decided.changes)):
                raise _NotStored
        return True
    except (IntegrityError, _NotStored):
        return False


def _decide(game: Game, record: rules.Game | None, player_id: str | None, text: str, v: int,
            now: datetime | None, arrived_at: datetime | None) -> _Decided | Expiry:
    """Check a move of :func:`play_move` on ``game`` (with ``record``, or the record
    :func:`game.round.store.current_record` rebuilds) and play it on the record: the move decided, or
    the clock's expiry (:meth:`game.clock.Clock.expiry`) when the side to move ran out of
    time before it arrived.  Raises :class:`ActionError` as :func:`play_move` does."""
    seat = game.seat_of(player_id)
    if seat is None:
        raise ActionError("not_seated", _("Only the seated players can move; you are watching."))
    if game.status == Game.Status.WAITING:
        raise ActionError("not_started", _("The game starts when your opponent joins."))
    if game.is_over:
        raise ActionError("game_over", _("The game is over."))
    if v > game.version:
        raise ActionError("bad_version", lazy_text(_("Version %(v)s is ahead of the game (%(version)s)."),
                                                   v=v, version=game.version))
    if v < game.position_version:
        raise ActionError("stale", _("Your board was out of date; it has been refreshed."))
    now = now or timezone.now()
    arrived_at = min(arrived_at or now, now)
    clock = outages.clock(game)
    expiry = clock.expiry(arrived_at)
    if expiry:
        return expiry
    if game.turn is not seat:
        raise ActionError("not_your_turn", _("It is your opponent's turn."))
    if record is None:
        record = store.current_record(game)
    move = parse_move(record.position, text)
    record.play(move)
    ply = game.ply + 1
    fen = record.position.fen()
    changes = {"fen": fen, "ply": ply, "no_progress": record.no_progress_plies,
               "position_version": game.version + 1, "turn_started_at": now,
               **clock_fields(clock.after_move(arrived_at))}
    if game.draw_offer_by not in (None, seat):
        changes.update(drawer.declined(game, ply))
    changes.update(takebacks.after_move(game, seat, ply))
    if record.outcome is not None:
        changes.update(finished(record.outcome))
    return _Decided(record, move, (ply, str(move), fen), changes)


def parse_move(position: rules.Position, text: str) -> rules.Move:
    """The legal move of ``position`` that ``text`` names.  Raises :class:`ActionError`
    ``ambiguous_move`` (with ``candidates``), ``malformed_move``, ``illegal_move``."""
    try:
        return position.parse_move(text)
    except rules.AmbiguousMoveError as exc:
        candidates = [str(m) for m in exc.candidates]
        raise ActionError("ambiguous_move", lazy_text(_("%(move)s is ambiguous here: it could be %(moves)s."),
                                                      move=text.strip(), moves=", ".join(candidates)),
                          candidates=candidates) from None
    except rules.MalformedMoveError:
        raise ActionError("malformed_move", lazy_text(_("%(move)s is not move notation (e.g. 11-15 or 22x15)."),
                                                      move=repr(text)[:40])) from None
    except rules.IllegalMoveError:
        legal = ", ".join(str(m) for m in position.legal_moves())
        raise ActionError("illegal_move", lazy_text(_("%(move)s is not a legal move here; the legal moves are: "
                                                      "%(moves)s."), move=text.strip(), moves=legal)
                          if legal else lazy_text(_("%(move)s is not a legal move here."), move=text.strip())) from None


def check_clock(game_id: str, now: datetime | None = None) -> Progress:
    """End the game if the side to move is out of time (``now``: default the current time).

    Called when a viewer's clock reaches zero, on incoming messages past the
    deadline, and by the server's own timers; whoever calls, the decision is
    the server's, from its stored clocks, and a game is ended once.  Returns
    the ``flagged``/``aborted`` event, or no events when time remains.
    Raises :class:`ActionError` ``no_such_game``.
    """
    with transaction.atomic():
        game = store.load_for_update(game_id)
        expiry = outages.clock(game).expiry(now or timezone.now())
        if not expiry:
            return Progress(game)
        return store_update(game, None, expiry_change(expiry))


def resign(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """Resign: the opponent wins by resignation.

    ``now`` (default the current time): see :func:`game.round.progress.act` for the clocks.
    Raises :class:`ActionError`: ``no_such_game``, ``not_seated``, ``not_started``, ``game_over``.
    """
    def decide(game: Game, seat: Color | None) -> Change:
        side = seat_in_play(game, player_id)
        return Change("resigned", finished(rules.Outcome(rules.Termination.RESIGNATION, side.opponent)))

    return act(game_id, player_id, decide, now)


def abort(game_id: str, player_id: str | None, now: datetime | None = None) -> Progress:
    """Abort a game in which a side has not yet made its first move (or nobody has joined yet);
    the plies of a 3-move ballot are not the players' moves.

    The game is marked aborted, neither won nor lost.  ``now`` (default the current time): see
    :func:`game.round.progress.act` for the clocks.  Raises :class:`ActionError`:
    ``no_such_game``, ``not_seated``, ``game_over``, ``too_late`` (both sides have moved).
    """
    def decide(game: Game, seat: Color | None) -> Change:
        if seat is None:
            raise ActionError("not_seated", _("Only the seated players can abort; you are watching."))
        if game.is_over:
            raise ActionError("game_over", _("The game is over."))
        if game.ply - ballots.opening_plies(game.ballot) >= ABORT_BEFORE_PLY:
            raise ActionError("too_late", _("Both sides have moved; the game can no longer be aborted."))
        return Change("aborted", finished(rules.Outcome(rules.Termination.ABORTED, None)))

    return act(game_id, player_id, decide, now)


def abort_unjoined(game_id: str, created_before: datetime) -> Progress:
    """Abort a game still waiting for an opponent that was created before ``created_before``
    (``manage.py housekeeping``): marked aborted with its version bumped, and an ``update``
    ``aborted`` event (by nobody) for the creator's open page.  Raises :class:`ActionError`
    ``no_such_game``, or ``not_waiting`` when the game was joined (or ended) meanwhile or is
    younger than that.
    """
    def decide(game: Game, seat: Color | None) -> Change:
        if game.status != Game.Status.WAITING or game.created_at >= created_before:
            raise ActionError("not_waiting", "The game is no longer waiting for an opponent.")
        return Change("aborted", finished(rules.Outcome(rules.Termination.ABORTED, None)))

    return act(game_id, None, decide)


def abandon_deserted(game_id: str, idle_before: datetime) -> Progress:
    """End an untimed game in play that nothing has happened in since ``idle_before`` and that neither
    player has open (``manage.py housekeeping``): finished as abandoned with no winner (a draw, "a
    player left the game", on both players' record; untimed games are never rated), its version
    bumped and a ``claimed_draw`` update event for any page still open.  Raises :class:`ActionError`
    ``no_such_game``, or ``not_deserted`` when the game is timed, not in play, changed since
    ``idle_before``, a player has it open, or who has it open cannot be known (presence's Redis down).
    """
    def decide(game: Game, seat: Color | None) -> Change:
        control = TimeControl.parse(game.time_control)
        if game.status != Game.Status.ACTIVE or control.timed or game.updated_at >= idle_before:
            raise ActionError("not_deserted", "The game is timed, over, or played lately.")
        since = idle_before.timestamp()
        try:
            away = [presence.offline_s(game.id, side, since) for side in ("B", "W")]
        except presence.PresenceUnavailable:
            raise ActionError("not_deserted", "Who has the game open cannot be known now.") from None
        if min(away) <= 0:
            raise ActionError("not_deserted", "A player has the game open.")
        return Change("claimed_draw", finished(rules.Outcome(rules.Termination.ABANDONED, None)))

    return act(game_id, None, decide)
