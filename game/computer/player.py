"""The computer's turn: it moves, answers draw offers and accepts rematches through the game's actions.

:func:`wake` is the one entry point: "look at this game and do what the
computer should do now". The game socket calls it when a socket opens and
after every message, so a game in which the computer is to move resumes by
itself after a server restart or a reconnect. It returns at once; the work
runs in a task of the event loop, at most one per game and process:

1. read the game (off the loop);
2. if the opponent's draw offer is pending, score the position in the engine
   pool and accept (the computer stands worse, or the ending is level and
   nearly bare) or decline it;
3. if the computer is to move, search in the engine pool (never on the
   loop) and play the move with :func:`game.round.actions.play_move`, passing the
   version read in step 1: if anything changed the position meanwhile, the
   action refuses the move as ``stale`` and the computer looks again, so a
   stale move is never played;
4. after a finished game, say "Good game" in the players' chat room, once
   (:func:`game.round.chat.farewell`); then accept the opponent's rematch proposal;
5. publish the events like any other, and look again until nothing is left
   to do.

Two server processes may each run a search for the same game (two sockets on
two processes); the version check lets only one move land.

Settings: ``ENGINE_WORKERS`` (2), ``ENGINE_POOL`` (``process`` or
``thread``), ``ENGINE_MAX_WAITING`` (8) for the computer's own pool (the
analysis board's is apart: ``ANALYSIS_WORKERS``, ``ANALYSIS_MAX_WAITING``),
``COMPUTER_MIN_THINK_MS`` (400: the
least time the computer takes over a move, so that its reply does not land
before the player's own move has been drawn).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import logging
import random
import time

from django.conf import settings

from checkers_site.ops import logs, metrics
from game import rules
from game.engine import EngineBusy, EnginePool, levels
from game.errors import ActionError
from game.models import Game
from game.players import computer_level
from game.round import chat, drawer, fanout, rematcher, store
from game.round.events import Event
from game.round.round import Round
from game.rules import Color
from game.sockets import in_db_thread

log = logging.getLogger(__name__)

#: Seconds before the computer tries again when every engine worker was busy.
BUSY_RETRY_S = 1.0
#: The computer accepts a draw when its score is at most this (hundredths of a man: it stands worse) ...
DRAW_ACCEPT_BELOW = -40
#: ... or when at most this many pieces are left and the score is within DRAW_LEVEL of even.
DRAW_BARE_PIECES = 8
DRAW_LEVEL = 40
#: Milliseconds the computer thinks about a draw offer.
DRAW_THINK_MS = 300
#: Steps one task takes at most before it stops (a safety net; a game needs one or two per wake).
MAX_STEPS = 400
#: Refusals in a row after which a task stops (the next message or reconnect wakes the computer again).
MAX_REFUSALS = 3

_pool: EnginePool | None = None
_analysis_pool: EnginePool | None = None


def engine_pool() -> EnginePool:
    """The computer's engine pool (one per process), built from the settings on first use.

    Only the computer's own searches (its moves, its answers to draw offers) run here: the
    analysis board has a pool of its own (:func:`analysis_pool`), so however many searches it
    is asked for, the computer's moves never wait behind them.
    """
    global _pool
    if _pool is None:
        _pool = EnginePool(workers=getattr(settings, "ENGINE_WORKERS", 2),
                           kind=getattr(settings, "ENGINE_POOL", "process"),
                           max_waiting=getattr(settings, "ENGINE_MAX_WAITING", 8),
                           observer=metrics.EngineObserver("computer"))
    return _pool


def analysis_pool() -> EnginePool:
    """The analysis board's engine pool (one per process): ``ANALYSIS_WORKERS`` workers and a
    waiting line of ``ANALYSIS_MAX_WAITING``, beyond which the board answers ``busy``."""
    global _analysis_pool
    if _analysis_pool is None:
        _analysis_pool = EnginePool(workers=getattr(settings, "ANALYSIS_WORKERS", 1),
                                    kind=getattr(settings, "ENGINE_POOL", "process"),
                                    max_waiting=getattr(settings, "ANALYSIS_MAX_WAITING", 2),
                                    observer=metrics.EngineObserver("analysis"))
    return _analysis_pool


@dataclasses.dataclass(frozen=True)
class Job:
    """One thing the computer should do in a game now.

    ``kind``: ``"move"``, ``"draw"`` (answer the opponent's offer),
    ``"farewell"`` (say "Good game" after a finished game) or
    ``"rematch"`` (accept the opponent's proposal); ``bot``: the computer's
    player id; ``level``: its level; ``seat``: its seat; ``fen``: the current
    position; ``history``: FENs of the positions since the last capture or
    man move, oldest first; ``no_progress``: plies since then; ``v``: the
    game's version when read.
    """

    kind: str
    bot: str
    level: int
    seat: Color
    fen: str = ""
    history: tuple[str, ...] = ()
    no_progress: int = 0
    v: int = 0


def next_job(game_id: str) -> Job | None:
    """What the computer should do in ``game_id`` now, or None (synchronous: reads the database)."""
    game = Game.objects.filter(pk=game_id).first()
    if game is None:
        return None
    bots = {side: computer_level(game.player(side)) for side in Color}
    levels_ = {side: number for side, number in bots.items() if number}
    if not levels_:
        return None
    if game.status == Game.Status.ACTIVE:
        record = store.current_record(game)
        if record.is_over:
            return None
        position = record.position
        kept = record.no_progress_plies
        history = tuple(p.fen() for p in record.positions[-1 - kept:-1]) if kept else ()
        offerer = game.draw_offer_by
        turn = position.turn
        kind, side = (("draw", offerer.opponent) if offerer is not None and offerer.opponent in levels_
                      else ("move", turn) if turn in levels_ else (None, turn))
        if kind is not None:
            return Job(kind, game.player(side), levels_[side], side, fen=position.fen(), history=history,
                       no_progress=kept, v=game.version)
        return None
    if game.status == Game.Status.FINISHED:
        for side, number in levels_.items():
            if not chat.said_farewell(game.id, side):
                return Job("farewell", game.player(side), number, side, v=game.version)
    proposer = game.rematch_offer_by
    if game.is_over and proposer is not None and not game.next_game_id:
        side = proposer.opponent
        if side in levels_ and game.black_player and game.white_player:
            return Job("rematch", game.player(side), levels_[side], side, v=game.version)
    return None

def on_computer_seat_touched(sender: object, game_id: str, **kwargs: object) -> None:
    """:data:`game.round.signals.computer_seat_touched`: :func:`wake`."""
    wake(game_id)


def wake(game_id: str) -> asyncio.Task:
    """Make the computer act in ``game_id`` if it has something to do; returns at once.

    Must be called from the event loop. While this process already works on
    the game (its :class:`~game.round.round.Round` holds the task), the running
    task looks again when it is done instead of starting a second one.
    Returns the task (tests await it).
    """
    round_ = fanout.hub().round(game_id)
    task = round_.computer
    if task is not None and not task.done():
        round_.computer_again = True
        return task
    # A context of its own: its log lines name the game, not the seat of the socket that woke it.
    task = round_.computer = asyncio.get_running_loop().create_task(
        _work(round_), name=f"computer:{game_id}", context=contextvars.Context())
    task.add_done_callback(lambda _: round_.released())
    return task


async def _work(round_: Round) -> None:
    game_id = round_.game_id
    logs.bind(game_id=game_id, seat="computer")
    refused = 0
    try:
        for _ in range(MAX_STEPS):
            round_.computer_again = False
            job = await in_db_thread(next_job)(game_id)
            if job is None:
                if round_.computer_again:
                    continue
                return
            try:
                events = await _carry_out(round_, job)
            except ActionError as exc:
                # The game changed under us (a move, a resignation): look again, a few times.
                log.info("computer in %s: %s refused (%s)", game_id, job.kind, exc.code)
                refused += 1
                if refused >= MAX_REFUSALS:
                    log.warning("computer in %s: refused %d times in a row; giving up until the next wake",
                                game_id, refused)
                    return
                continue
            refused = 0
            await fanout.publish(game_id, events)
    except EngineBusy:
        # Every worker is taken (analysis requests, other games): try again shortly, whether or
        # not anyone sends a message meanwhile.
        log.warning("computer in %s: the engine is busy; retrying in %s s", game_id, BUSY_RETRY_S)
        asyncio.get_running_loop().call_later(BUSY_RETRY_S, wake, game_id)
    except Exception:
        log.exception("computer in %s failed", game_id)
    finally:
        round_.computer_again = False


async def _carry_out(round_: Round, job: Job) -> list[Event]:
    """Do ``job``; return the events to publish. Raises :class:`ActionError` when refused."""
    if job.kind == "farewell":
        return (await round_.run(chat.farewell, job.bot)).events
    pool = engine_pool()
    if job.kind == "rematch":
        progress = await round_.run(rematcher.offer_rematch, job.bot)
        return progress.events
    if job.kind == "draw":
        score = await pool.run(levels.draw_score, job.fen, DRAW_THINK_MS, list(job.history), job.no_progress)
        turn = rules.Position.from_fen(job.fen).turn
        mine = score if turn is job.seat else -score
        progress = await round_.run(drawer.answer_draw, job.bot, accept=accepts_draw(job.fen, mine))
        return progress.events
    started = time.monotonic()
    choice = await pool.run(levels.play, job.fen, job.level, list(job.history), job.no_progress,
                            random.randrange(2**32))
    wait = getattr(settings, "COMPUTER_MIN_THINK_MS", 400) / 1000 - (time.monotonic() - started)
    if wait > 0:
        await asyncio.sleep(wait)
    progress = await round_.move(job.bot, choice["move"], job.v)
    return progress.events


def accepts_draw(fen: str, score: int) -> bool:
    """Whether the computer accepts a draw in ``fen`` when its own score there is ``score`` (hundredths of a man).

    It accepts when it stands clearly worse, or when few pieces are left and
    the position is about level.
    """
    pieces = rules.Position.from_fen(fen)
    count = pieces.pieces(Color.BLACK) + pieces.pieces(Color.WHITE)
    return score <= DRAW_ACCEPT_BELOW or (count <= DRAW_BARE_PIECES and abs(score) <= DRAW_LEVEL)
