// Game state and actions. The server is the truth: the controller applies its
// events in version order, offers only the moves in state.legal, and never
// shows a move before the server's `move` event. Beside it, each in its own
// module with the controller as its owner: the move being picked on the board
// (pick.js), the chat's lines (chat.js), the conditional moves of a
// correspondence game (forecast.js), the claims against an absent opponent
// (claims.js), and the positions after every ply, so any earlier one can be
// viewed while the game goes on (replay.js). What a seat may do now is read
// from the state by game.js, and status.js words what happened. The
// protocol's constants come from the server, in the page's config
// (config.protocol: docs/protocol.md, "The page's constants").

import { parseFen, opposite, BLACK, WHITE } from './fen.js';
import { MovePicker } from './pick.js';
import { Premoves } from './premove.js';
import { ChatCtrl } from './chat.js';
import { ForecastCtrl } from './forecast.js';
import { Claims } from './claims.js';
import { offerPlayedOn } from './game.js';
import { Replay } from './replay.js';
import { abortText, endText, playedOnText, takebackText, updateText } from './status.js';
import { clockNow, atZero } from './clock.js';
import { loadFlag, saveFlag } from './storage.js';
import { gettext, interpolate } from './i18n.js';

const FLASH_MS = 4000;
const SYNC_RETRY_MS = 5000;
const PENDING_LIMIT_MS = 8000; // no answer to a move this long: ask for a snapshot
const NUMBERS_KEY = 'checkers.showNumbers';
const ACTION_LIMIT_MS = 6000; // an action sent without an answer this long: allow it again
const CLOCK_CHECK_EVERY_MS = 2000; // a clock at zero asks the server again at most this often
/** The updates that end the game: the result banner says them, so the status line goes quiet. */
const ENDINGS = ['draw_accepted', 'resigned', 'aborted', 'flagged', 'claimed_win', 'claimed_draw'];

export class Ctrl {
  /**
   * @param {object} config  the page's game-config: {gameId, wsPath, you, fixedPlies,
   *   computerGrantsUpTo (the computer grants a takeback at once up to this level; the server's rule),
   *   protocol (the protocol's constants: game.round.protocol.page_constants)}
   * @param {function} redraw  called after every change
   */
  constructor(config, redraw) {
    this.config = config;
    this.protocol = config.protocol;
    this.redraw = redraw || (() => {});
    this.socket = null;

    // Server data (replaced by each snapshot).
    this.v = null; // version of the last applied event; null before the first snapshot
    this.state = null;
    this.moves = [];
    this.you = config.you || null;
    this.computerGrantsUpTo = Number(config.computerGrantsUpTo) || 0;
    this.position = { turn: BLACK, pieces: new Map() };
    this.audience = null; // {spectators, online: {B, W}} once the server tells

    // Local state.
    this.connection = 'connecting';
    this.connectionDetail = null;
    this.linkDownAt = null; // when the server said it lost its link to the game events (null: fine)
    this.linkBack = false; // it said the link is back: the snapshot that follows ends the pause
    this.syncing = false;
    this.syncTimer = null;
    this.pending = null; // move text sent, awaiting the server
    this.pendingTimer = null;
    this.picker = new MovePicker(this); // the move being picked on the board (pick.js)
    this.premoves = new Premoves(this); // a move queued while the opponent thinks (premove.js)
    this.flipped = false; // the viewer turned the board round (settings.js)
    this.flash = null; // {message, kind}
    this.flashTimer = null;
    this.showNumbers = loadFlag(NUMBERS_KEY);
    this.actionPending = null; // an action sent, awaiting the server's update or error
    this.actionTimer = null;
    this.rematchDeclinedBy = null; // the seat that declined our rematch proposal
    this.abortedBy = null; // {id, by} from the `aborted` update this page saw (by: a seat, or null: no first move in time)
    this.now = () => performance.now(); // replaced in tests
    this.stateAt = this.now(); // when the current state arrived: the clocks count down from there
    this.lastClockCheck = null; // when this page last sent clock_check
    this.navigate = (url) => window.location.assign(url); // replaced in tests

    this.chat = new ChatCtrl(this); // the chat's lines (chat.js)
    this.forecast = new ForecastCtrl(this); // this seat's conditional moves (forecast.js)
    this.claims = new Claims(this); // claims against an absent player to move (claims.js)
    this.replay = new Replay(this); // the positions after every ply, and the one shown (replay.js)
  }

  /** The page shows another game now (TV, tv.js): nothing of this one redraws, navigates or retries. */
  stop() {
    this.redraw = this.navigate = () => {};
    for (const timer of [this.syncTimer, this.pendingTimer, this.actionTimer, this.flashTimer, this.claims.timer]) clearTimeout(timer);
  }

  // ---- derived state -------------------------------------------------------

  get status() {
    return this.state ? this.state.status : 'loading';
  }

  get isOver() {
    return this.status === 'finished' || this.status === 'aborted';
  }

  /** The colour shown at the bottom: the viewer's seat, White for spectators. */
  get orientation() {
    const own = this.you === BLACK ? BLACK : WHITE;
    return this.flipped ? opposite(own) : own;
  }

  /** The viewer's opponent's seat (null for a spectator). */
  get opponent() {
    return this.you ? opposite(this.you) : null;
  }

  get lastMove() {
    return this.moves.length ? this.moves[this.moves.length - 1] : null;
  }

  get isMyTurn() {
    return !!(this.state && this.state.status === 'active' && this.you && this.state.turn === this.you);
  }

  /** True when the viewer may pick a move right now (never while an earlier position is shown). */
  get canInput() {
    return (
      this.isMyTurn &&
      this.connection === 'open' &&
      !this.syncing &&
      !this.pending &&
      this.v !== null &&
      !this.replay.replaying
    );
  }

  get legal() {
    return this.canInput && this.state.legal ? this.state.legal : [];
  }

  // ---- the board's input and what it shows, as of the analysis board's controller ----------------
  // The move being picked is the picker's (pick.js), the position shown the replay's (replay.js).

  get input() {
    return this.picker.input;
  }

  get confirming() {
    return this.picker.confirming;
  }

  cancel() {
    this.picker.cancel();
  }

  select(n) {
    return this.picker.select(n);
  }

  clickSquare(n) {
    this.picker.click(n);
  }

  drop(from, to) {
    this.picker.drop(from, to);
  }

  get replaying() {
    return this.replay.replaying;
  }

  get shownPly() {
    return this.replay.shownPly;
  }

  fenAt(ply) {
    return this.replay.fenAt(ply);
  }

  get shownPosition() {
    return this.replay.shownPosition;
  }

  get shownLastMove() {
    return this.replay.shownLastMove;
  }

  // ---- server messages ---------------------------------------------------

  /**
   * The server lost its link to the game events ({up: false}) or has it back ({up: true}, a
   * snapshot follows). Meanwhile no clock is charged (docs/protocol.md, "Outages"), so the page
   * stops its countdown until that snapshot.
   */
  onLink(msg) {
    if (msg.up === false) {
      if (this.linkDownAt === null) this.linkDownAt = this.now();
      this.linkBack = false;
    } else if (this.linkDownAt !== null) {
      this.linkBack = true;
    }
    this.redraw();
  }

  onSnapshot(msg) {
    this.chat.merge(msg.chat);
    this.forecast.set(Array.isArray(msg.forecast) ? msg.forecast : null);
    if (this.linkBack) {
      this.linkDownAt = null;
      this.linkBack = false;
    }
    this.v = msg.v;
    this.you = msg.you === undefined ? this.you : msg.you;
    this.moves = Array.isArray(msg.moves) ? msg.moves.slice() : [];
    this.replay.reset(msg.start_fen, msg.fens, this.moves.length);
    this.setActionPending(null);
    this.setState(msg.state);
    this.syncing = false;
    clearTimeout(this.syncTimer);
    this.setPending(null);
    this.picker.reset();
    this.premoves.afterState();
    this.redraw();
  }

  /** Check an event's version; returns true when it is the next one and should be applied. */
  accept(msg) {
    if (this.v === null || this.syncing) return false; // the snapshot on its way covers it
    if (typeof msg.v !== 'number') return false;
    if (msg.v <= this.v) return false; // old news
    if (msg.v !== this.v + 1) {
      this.requestSync();
      return false;
    }
    return true;
  }

  onMove(msg) {
    if (!this.accept(msg)) return;
    if (typeof msg.ply === 'number' && msg.ply !== this.moves.length + 1) {
      // Our move list and the server's disagree: start over from a snapshot.
      this.requestSync();
      return;
    }
    this.v = msg.v;
    const before = this.state;
    this.moves.push(msg.move);
    this.replay.push(msg.state && msg.state.fen, this.moves.length);
    this.setState(msg.state);
    this.setPending(null);
    this.picker.reset();
    this.premoves.afterState(); // a queued premove goes now, or is dropped with the reason
    // A move makes an earlier notice ("... declined the draw offer") old news: the status line
    // goes back to what matters now, such as a compulsory capture.
    if (this.flash && this.flash.kind === 'info') this.clearFlash();
    const declined = offerPlayedOn(before, this.state, this.you);
    if (declined) this.showFlash(playedOnText(declined, this.seatName(opposite(this.you))), 'info');
    else this.redraw();
  }

  /**
   * A takeback: the last `plies` plies are gone and the state is the position before them, so the
   * move list, the replay's positions and the board go back to it (a gap or a disagreement about
   * the move list: start over from a snapshot).
   */
  onTakeback(msg) {
    if (!this.accept(msg)) return;
    const keep = msg.state && typeof msg.state.ply === 'number' ? msg.state.ply : -1;
    if (keep < 0 || keep > this.moves.length || (typeof msg.plies === 'number' && this.moves.length - msg.plies !== keep)) {
      this.requestSync();
      return;
    }
    this.v = msg.v;
    this.moves = this.moves.slice(0, keep);
    this.replay.cut(keep);
    this.premoves.clear(); // queued for a position that is gone
    this.setActionPending(null);
    this.setState(msg.state);
    this.setPending(null);
    this.picker.reset();
    this.showFlash(takebackText(msg.by, msg.plies, this.you, (seat) => this.seatName(seat)), 'info');
  }

  onSeats(msg) {
    if (!this.accept(msg)) return;
    this.v = msg.v;
    this.setState(msg.state);
    this.picker.reset();
    this.redraw();
  }

  /** A draw offer or answer, resignation, abort or rematch step (versioned, carries the new state). */
  onUpdate(msg) {
    if (!this.accept(msg)) return;
    this.v = msg.v;
    this.setActionPending(null);
    if (msg.what === 'rematch_declined') this.rematchDeclinedBy = msg.by !== this.you ? msg.by : null;
    else if (msg.what === 'rematch_offered' || msg.what === 'rematch_started') this.rematchDeclinedBy = null;
    if (msg.what === 'aborted' && msg.state) this.abortedBy = { id: msg.state.id, by: msg.by || null };
    this.setState(msg.state);
    if (this.isOver || msg.what === 'aborted' || msg.what === 'resigned') this.picker.reset();
    this.premoves.afterState();
    if (ENDINGS.includes(msg.what)) this.clearFlash(); // the result banner says it
    const text = updateText(msg.what, msg.by, this.you, (seat) => this.seatName(seat));
    if (text) this.showFlash(text, 'info');
    else this.redraw();
  }

  /** Who is watching: {spectators, online: {B, W}} (unversioned: applied as it comes), and
   *  game_v, the game's version when it was sent: behind it, an event was missed. */
  onAudience(msg) {
    if (typeof msg.game_v === 'number' && this.v !== null && msg.game_v > this.v) this.requestSync();
    this.audience = {
      spectators: Number(msg.spectators) || 0,
      online: msg.online && typeof msg.online === 'object' ? msg.online : {},
    };
    this.claims.onPresence(this.audience.online);
    this.redraw();
  }

  /** A refusal: the forecast's or the chat's go to their panels, any other ends what was in flight. */
  onError(msg) {
    if (this.forecast.onError(msg) || this.chat.onError(msg)) return;
    this.setPending(null);
    this.setActionPending(null);
    this.picker.reset();
    this.showFlash(msg.message || msg.code || gettext('Refused'), 'error');
  }

  onConnection(state, detail) {
    this.connection = state;
    this.connectionDetail = detail;
    this.linkDownAt = null; // a new socket says again if its server has no link
    this.linkBack = false;
    if (state !== 'open') {
      // Whatever was in flight is unknown now; the next snapshot tells.
      this.setPending(null);
      this.setActionPending(null);
      this.syncing = false;
      clearTimeout(this.syncTimer);
      this.picker.reset();
    }
    this.redraw();
  }

  setState(state) {
    const before = this.state;
    this.state = state;
    this.stateAt = this.now();
    this.claims.onState(before, state);
    const over = (st) => st.status === 'finished' || st.status === 'aborted';
    if (before && before.id === state.id && this.you && !over(before) && over(state) && !this.chat.reads('spectators')) {
      // The game is over: the players may now read the spectators' room; a snapshot brings it.
      setTimeout(() => this.requestSync(), 0);
    }
    if (before && before.id === state.id && !before.next_game && state.next_game && this.you) {
      // The rematch was agreed while this page was open: the players go to it.
      const url = `/g/${encodeURIComponent(state.next_game)}/`;
      setTimeout(() => this.navigate(url), 0);
    }
    try {
      this.position = parseFen(state.fen);
    } catch (err) {
      console.error('checkers: bad FEN from the server', state.fen, err);
      this.position = { turn: state.turn, pieces: new Map() };
    }
  }

  requestSync() {
    if (this.syncing) return;
    this.syncing = true;
    this.picker.reset();
    this.sendSync();
    this.redraw();
  }

  sendSync() {
    if (this.socket) this.socket.send({ type: 'sync' });
    clearTimeout(this.syncTimer);
    this.syncTimer = setTimeout(() => {
      if (this.syncing) this.sendSync();
    }, SYNC_RETRY_MS);
  }

  // ---- moves and actions ------------------------------------------------------

  play(move) {
    if (!this.canInput || !this.legal.includes(move)) return;
    const sent = this.socket && this.socket.send({ type: 'move', move, v: this.v });
    this.picker.reset();
    if (sent) this.setPending(move);
    else this.showFlash(gettext('Not connected: the move was not sent.'), 'error');
    this.redraw();
  }

  setPending(move) {
    this.pending = move;
    clearTimeout(this.pendingTimer);
    if (move) {
      this.pendingTimer = setTimeout(() => {
        if (this.pending === move) {
          this.setPending(null);
          this.requestSync();
        }
      }, PENDING_LIMIT_MS);
    }
  }

  /**
   * Send a game action (draw_offer, resign, ...: config.protocol.actions). The server answers with an
   * `update` event to everyone, or an `error` to us; nothing changes here before that.
   */
  act(type) {
    if (!this.protocol.actions.includes(type) || !this.you) return false;
    if (this.actionPending) return false;
    const sent = this.socket && this.socket.send({ type });
    if (!sent) {
      this.showFlash(gettext('Not connected: try again in a moment.'), 'error');
      return false;
    }
    this.setActionPending(type);
    this.redraw();
    return true;
  }

  setActionPending(type) {
    this.actionPending = type;
    clearTimeout(this.actionTimer);
    if (type) {
      this.actionTimer = setTimeout(() => {
        this.actionPending = null;
        this.redraw();
      }, ACTION_LIMIT_MS);
    }
  }

  // ---- settings and the status line -------------------------------------------

  toggleNumbers(on = !this.showNumbers) {
    this.showNumbers = !!on;
    saveFlag(NUMBERS_KEY, this.showNumbers);
    this.redraw();
  }

  clearFlash() {
    clearTimeout(this.flashTimer);
    this.flash = null;
  }

  showFlash(message, kind = 'info') {
    this.flash = { message, kind };
    clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => {
      this.flash = null;
      this.redraw();
    }, FLASH_MS);
    this.redraw();
  }

  // ---- clocks ------------------------------------------------------------------

  /** The clocks as the page counts them now (see clock.js clockNow), or null when untimed. */
  clockNow() {
    const at = this.linkDownAt === null ? this.now() : this.linkDownAt; // stopped during an outage
    return clockNow(this.state, Math.max(0, at - this.stateAt));
  }

  /**
   * The page's countdown of the side to move reached zero: ask the server to check its own
   * clock (once, then at most every 2 s while nothing changes). The server decides.
   */
  clockExpired() {
    if (!this.state || this.state.status !== 'active' || !atZero(this.clockNow())) return false;
    const t = this.now();
    if (this.lastClockCheck !== null && t - this.lastClockCheck < CLOCK_CHECK_EVERY_MS) return false;
    if (!this.socket || !this.socket.send({ type: 'clock_check' })) return false;
    this.lastClockCheck = t;
    return true;
  }

  // ---- presentation helpers ---------------------------------------------

  /**
   * Why the game ended, in words. An abort this page saw happen says who aborted (or that a first
   * move was not made in time); otherwise (a page opened afterwards) the server's state.reason.
   */
  get endReason() {
    const s = this.state;
    if (!s) return '';
    const seen = this.abortedBy;
    if (s.status === 'aborted' && seen && seen.id === s.id) {
      return abortText(seen.by, this.you, (seat) => this.seatName(seat), this.protocol.firstMoveS);
    }
    return endText(s.termination, s.winner, s.reason);
  }

  seatName(color) {
    const seat = this.state && this.state.seats ? this.state.seats[color] : null;
    // The computer's name is the site's, so it is worded in the page's language.
    if (seat && seat.computer) return interpolate(gettext('Computer (level %(level)s)'), { level: seat.computer }, true);
    return seat && seat.name ? seat.name : null;
  }
}
