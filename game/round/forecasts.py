"""Conditional moves (lichess's forecasts) in correspondence games.

While the opponent is to move, a player may store lines "if they play X, I reply Y, if they then
play Z, I reply W ...": each line is a list of move texts starting with the opponent's next move,
``[["22-18", "15x22"], ["23-19", "9-14", "27-23", "5-9"]]``.  :func:`save` checks every line
against the rules from the current position and stores them (one :class:`~game.models.Forecast`
per player and game, replacing the last; no lines clears it).  After each move of the opponent
(:func:`reply`, run by the socket that carried the move once that move's events are published),
the lines whose first move is the move just played give the reply: it is played at once as an
ordinary move of the forecaster's seat, through :func:`game.round.actions.play_move` (clocks,
events and versions as for any move), and the forecast keeps the tails of those lines; when no
line matches, the forecast is cleared.  Both run under the game's row lock, so two server
processes cannot both play a reply.  Only the owner sees a forecast: in their snapshot
(:func:`game.round.reads.lines_for`) and in ``forecast`` events to their seat's sockets.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from game import rules
from game.clock import CORRESPONDENCE
from game.errors import ActionError
from game.i18n import lazy_text
from game.models import Forecast, Game
from game.round import actions, events, outages, store
from game.round.progress import Progress, expiry_change, seat_in_play, store_update

#: Most lines one forecast may hold.
MAX_LINES = 10
#: Most plies (the opponent's moves and one's replies together) one line may hold.
MAX_PLIES = 12


def check_lines(record: rules.Game, lines: list[list[str]]) -> list[list[str]]:
    """``lines`` checked from ``record``'s position (the opponent to move) and written in full
    notation (``["22-18", "15x22"]``), duplicates dropped, order kept.

    Every line holds the opponent's move and at least one reply, each move legal after the
    ones before it, and goes no further than the end of the game; two lines that agree up to a
    move of the opponent reply the same.  Raises :class:`ActionError` ``forecast_too_long``
    (more than :data:`MAX_LINES` lines or :data:`MAX_PLIES` plies in a line) or
    ``forecast_illegal`` (the message names the line and the move).
    """
    if len(lines) > MAX_LINES:
        raise ActionError("forecast_too_long", lazy_text(
            _("A forecast holds at most %(lines)s lines."), lines=MAX_LINES))
    clean: list[list[str]] = []
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_PLIES:
            raise ActionError("forecast_too_long", lazy_text(
                _("Line %(line)s is longer than %(plies)s moves."), line=number, plies=MAX_PLIES))
        if len(line) < 2:
            raise ActionError("forecast_illegal", lazy_text(
                _("Line %(line)s needs your opponent's move and your reply."), line=number))
        played = copy.deepcopy(record)
        moves: list[str] = []
        for text in line:
            if played.is_over:
                raise ActionError("forecast_illegal", lazy_text(
                    _("Line %(line)s goes on after the game is over (%(move)s)."),
                    line=number, move=text.strip()[:20]))
            try:
                move = played.position.parse_move(text)
            except rules.RulesError:
                raise ActionError("forecast_illegal", lazy_text(
                    _("Line %(line)s: %(move)s cannot be played there."),
                    line=number, move=text.strip()[:20])) from None
            played.play(move)
            moves.append(str(move))
        if moves not in clean:
            clean.append(moves)
    for i, first in enumerate(clean):
        for second in clean[i + 1:]:
            shared = 0
            while shared < min(len(first), len(second)) and first[shared] == second[shared]:
                shared += 1
            if shared % 2 == 1 and shared < min(len(first), len(second)):
                raise ActionError("forecast_illegal", lazy_text(
                    _("Two lines answer %(move)s differently: keep one reply."), move=first[shared - 1]))
    return clean


def may_answer(state: dict[str, Any]) -> bool:
    """Whether a game in ``state`` (an event's or snapshot's ``state``) may have a forecast reply
    to play: a correspondence game in play past its first move."""
    clock = state.get("clock")
    return (state.get("status") == "active" and state.get("ply", 0) > 0 and isinstance(clock, dict)
            and clock.get("control") in CORRESPONDENCE)


def save(game_id: str, player_id: str | None, lines: list[list[str]],
         now: datetime | None = None) -> Progress:
    """Store ``player_id``'s forecast in game ``game_id``: ``lines`` (move texts, each line starting
    with the opponent's next move; see :func:`check_lines`) replace any forecast held; no lines
    clears it.  Returns the ``forecast`` event for the player's seat.  A game whose side to move is
    out of time (as of ``now``, default the current time) ends on time instead (``flagged``).

    Raises :class:`ActionError` ``no_such_game``, ``not_seated``, ``not_started``, ``game_over``,
    ``forecast_not_correspondence``, ``forecast_your_turn``, ``forecast_too_long``,
    ``forecast_illegal``; nothing is stored then.
    """
    with transaction.atomic():
        game = store.load_for_update(game_id)
        seat = seat_in_play(game, player_id)
        if not game.control.days:
            raise ActionError("forecast_not_correspondence",
                              _("Conditional moves are for correspondence games only."))
        expiry = outages.clock(game).expiry(now or timezone.now())
        if expiry:
            return store_update(game, None, expiry_change(expiry))
        if game.turn is seat:
            raise ActionError("forecast_your_turn",
                              _("It is your turn: play your move; conditional moves wait for your opponent's."))
        clean = check_lines(store.current_record(game), lines)
        if clean:
            Forecast.objects.update_or_create(game=game, player_id=player_id,
                                              defaults={"ply": game.ply, "fen": game.fen, "lines": clean})
        else:
            Forecast.objects.filter(game=game, player_id=player_id).delete()
        return Progress(game, [events.ForecastEvent(lines=clean, ply=game.ply, to=seat)])


def reply(game_id: str, now: datetime | None = None) -> Progress:
    """After a move in game ``game_id``: play the forecast reply of the player now to move, if a
    line of their forecast begins with the move just played.

    The reply is played by :func:`game.round.actions.play_move` for that seat at the current
    version (as of ``now``, default the current time), in the same transaction as the forecast's
    update: it keeps the tails of the lines that matched (from the position after the reply), or
    goes when nothing of them is left, the game is over or no line matched.  Returns the reply's
    ``move`` event (and whatever else the move brings) and then the ``forecast`` event for the
    forecaster's seat; no events when that player holds no forecast.  A forecast stored for
    another position (a takeback since, or a move from elsewhere) is dropped silently.  Raises :class:`ActionError`
    ``no_such_game``.
    """
    with transaction.atomic():
        game = store.load_for_update(game_id)
        if game.status != Game.Status.ACTIVE or not game.control.days:
            return Progress(game)
        side = game.turn
        owner = game.player(side)
        forecast = Forecast.objects.filter(game=game, player_id=owner).first()
        if forecast is None:
            return Progress(game)
        last, before = _last_move(game)
        if forecast.ply != game.ply - 1 or forecast.fen != before:
            forecast.delete()
            return Progress(game)
        matching = [list(line) for line in forecast.lines if line and line[0] == last and len(line) >= 2]
        if not matching:
            forecast.delete()
            return Progress(game, [events.ForecastEvent(lines=[], ply=game.ply, to=side)])
        answer = matching[0][1]
        try:
            played = actions.play_move(game_id, owner, answer, game.version, now=now)
        except ActionError:
            Forecast.objects.filter(game=game, player_id=owner).delete()
            return Progress(game, [events.ForecastEvent(lines=[], ply=game.ply, to=side)])
        game = played.game
        tails = [line[2:] for line in matching if line[1] == answer and len(line) > 2]
        if tails and game.status == Game.Status.ACTIVE and game.turn is not side:
            # The reply, the forecaster's own move, cleared the forecast: its tails are stored anew.
            Forecast.objects.update_or_create(game=game, player_id=owner,
                                              defaults={"ply": game.ply, "fen": game.fen, "lines": tails})
        else:
            Forecast.objects.filter(game=game, player_id=owner).delete()
            tails = []
        return Progress(game, [*played.events, events.ForecastEvent(lines=tails, ply=game.ply, to=side)])


def _last_move(game: Game) -> tuple[str | None, str]:
    """The notation of ``game``'s last ply and the position (PDN FEN) it was played from."""
    rows = {ply: (notation, fen) for ply, notation, fen in
            game.move_set.filter(ply__gte=game.ply - 1, ply__lte=game.ply).values_list("ply", "notation", "fen_after")}
    last = rows.get(game.ply)
    before = rows[game.ply - 1][1] if game.ply - 1 in rows else game.start_fen
    return (last[0] if last else None), before
