// Game state and actions. The server is the truth: the controller applies its
// events in version order, offers only the moves in state.legal, and never
// shows a move before the server's `move` event. It also keeps the position
// after every ply, so any earlier position can be viewed (replay) while the
// game goes on.

import { parseFen, opposite, colorName, BLACK, WHITE } from './fen.js';
import { RouteInput } from './input.js';
import { Premoves } from './premove.js';
import { clockNow, atZero } from './clock.js';
import { loadFlag, saveFlag } from './storage.js';
import { gettext, interpolate } from './i18n.js';

const FLASH_MS = 4000;
const SYNC_RETRY_MS = 5000;
const PENDING_LIMIT_MS = 8000; // no answer to a move this long: ask for a snapshot
const NUMBERS_KEY = 'checkers.showNumbers';
const CHAT_KEEP = 200; // chat lines kept per room on the page
const ACTION_LIMIT_MS = 6000; // an action sent without an answer this long: allow it again
const CLOCK_CHECK_EVERY_MS = 2000; // a clock at zero asks the server again at most this often
/** Plies without a capture or man move that draw the game (the forty-move rule). */
export const NO_PROGRESS_LIMIT = 80;
/** Seconds a live timed game waits for each side's first move before it is aborted (docs/protocol.md). */
export const FIRST_MOVE_S = 30;
/** From this many plies on, the page warns that the forty-move rule is near. */
export const NO_PROGRESS_WARN = 60;

/** Game actions a seated player may send (docs/protocol.md, client to server). */
export const ACTIONS = [
  'draw_offer',
  'draw_accept',
  'draw_decline',
  'resign',
  'abort',
  'rematch_offer',
  'rematch_accept',
  'rematch_decline',
  'claim_win',
  'claim_draw',
  'takeback_propose',
  'takeback_accept',
  'takeback_decline',
];

/**
 * Why a game ended, in the page's language, from the state's `termination` and `winner` (the
 * server's `reason` is English: it is shown only for a termination this page does not know).
 */
export function endText(termination, winner, fallback = '') {
  const black = winner === WHITE; // the side that lost
  const lost = winner === BLACK || winner === WHITE;
  switch (termination) {
    case 'no_pieces':
      if (lost) return black ? gettext('Black has no pieces left') : gettext('White has no pieces left');
      break;
    case 'no_moves':
      if (lost) return black ? gettext('Black has no legal move') : gettext('White has no legal move');
      break;
    case 'repetition':
      return gettext('draw by threefold repetition');
    case 'forty_moves':
      return gettext('draw by the forty-move rule: 80 plies without a capture or a man move');
    case 'resignation':
      if (lost) return black ? gettext('Black resigned') : gettext('White resigned');
      break;
    case 'agreement':
      return gettext('draw by agreement');
    case 'time_forfeit':
      if (lost) return black ? gettext('Black lost on time') : gettext('White lost on time');
      return gettext('time forfeit');
    case 'abandoned':
      if (lost) return black ? gettext('Black left the game') : gettext('White left the game');
      return gettext('draw: a player left the game');
    case 'aborted':
      return gettext('game aborted');
    default:
      break;
  }
  return fallback || '';
}

export class Ctrl {
  /**
   * @param {object} config  the page's game-config: {gameId, wsPath, you, fixedPlies,
   *   computerGrantsUpTo (the computer grants a takeback at once up to this level; the server's rule)}
   * @param {function} redraw  called after every change
   */
  constructor(config, redraw) {
    this.config = config;
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
    this.chat = {}; // room -> its lines, by id, for the rooms this viewer reads (docs/protocol.md, "Chat")
    this.chatRevision = 0; // counts changes to this.chat, for the chat view
    this.chatError = null; // the last refusal of a chat line ({code, message}), for the chat view
    this.chatNotice = null; // what the chat view says under the lines (view/chat.js)
    this.forecast = null; // this seat's conditional moves (lines of moves) in a correspondence game; null: none offered
    this.forecastRevision = 0; // counts changes to this.forecast, for the forecast view
    this.forecastError = null; // the last refusal of a forecast ({code, message}), for the forecast view
    this.startFen = null; // the position before ply 1
    this.fens = []; // the position after each ply (fens[i] after ply i + 1)

    // Local state.
    this.connection = 'connecting';
    this.connectionDetail = null;
    this.linkDownAt = null; // when the server said it lost its link to the game events (null: fine)
    this.linkBack = false; // it said the link is back: the snapshot that follows ends the pause
    this.syncing = false;
    this.syncTimer = null;
    this.pending = null; // move text sent, awaiting the server
    this.pendingTimer = null;
    this.input = new RouteInput(() => this.legal); // the move being picked on the board
    this.premoves = new Premoves(this); // a move queued while the opponent thinks (premove.js)
    this.flipped = false; // the viewer turned the board round (settings.js)
    this.confirmMoves = false; // a picked move waits for "Confirm" before it is sent (settings.js)
    this.confirming = null; // the move waiting for confirmation
    this.flash = null; // {message, kind}
    this.flashTimer = null;
    this.showNumbers = loadFlag(NUMBERS_KEY);
    this.viewPly = null; // null: the current position; else the ply whose position is shown
    this.positionCache = new Map(); // ply -> parsed position, for replay
    this.actionPending = null; // an action sent, awaiting the server's update or error
    this.actionTimer = null;
    this.rematchDeclinedBy = null; // the seat that declined our rematch proposal
    this.abortedBy = null; // {id, by} from the `aborted` update this page saw (by: a seat, or null: no first move in time)
    this.now = () => performance.now(); // replaced in tests
    this.stateAt = this.now(); // when the current state arrived: the clocks count down from there
    this.turnAt = this.now(); // when this page saw the current turn begin
    this.lastClockCheck = null; // when this page last sent clock_check
    this.offlineSince = { B: null, W: null }; // when this page saw each player leave (null: on the page)
    this.claimTimer = null;
    this.navigate = (url) => window.location.assign(url); // replaced in tests
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
      this.viewPly === null
    );
  }

  // ---- replay ----------------------------------------------------------------

  /** True while an earlier position than the current one is shown. */
  get replaying() {
    return this.viewPly !== null;
  }

  /** The ply whose position the board shows (the number of plies played when live). */
  get shownPly() {
    return this.viewPly === null ? this.moves.length : this.viewPly;
  }

  /** The FEN after `ply` plies (the start position for 0), or null when unknown. */
  fenAt(ply) {
    if (ply === 0) return this.startFen;
    return this.fens[ply - 1] || null;
  }

  /** The position on the board: the current one, or the one viewed in replay. */
  get shownPosition() {
    if (this.viewPly === null) return this.position;
    const ply = this.viewPly;
    if (!this.positionCache.has(ply)) {
      try {
        this.positionCache.set(ply, parseFen(this.fenAt(ply)));
      } catch (err) {
        return this.position;
      }
    }
    return this.positionCache.get(ply);
  }

  /** The move that led to the shown position (null at the start). */
  get shownLastMove() {
    if (this.viewPly === null) return this.lastMove;
    return this.viewPly > 0 ? this.moves[this.viewPly - 1] : null;
  }

  /** Show the position after `ply` plies; the last ply (or beyond) returns to the current position. */
  goTo(ply) {
    const n = this.moves.length;
    let target = Math.max(0, Math.min(n, Math.floor(Number(ply) || 0)));
    if (target >= n) target = null;
    else if (!this.fenAt(target)) return false; // position unknown (old server): stay
    if (target === this.viewPly) return false;
    this.viewPly = target;
    this.resetSelection();
    this.premoves.clear();
    this.redraw();
    return true;
  }

  replayFirst() {
    return this.goTo(0);
  }

  replayPrev() {
    return this.shownPly > 0 ? this.goTo(this.shownPly - 1) : false;
  }

  replayNext() {
    return this.viewPly === null ? false : this.goTo(this.viewPly + 1);
  }

  replayLast() {
    return this.goTo(this.moves.length);
  }

  get legal() {
    return this.canInput && this.state.legal ? this.state.legal : [];
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
    this.mergeChat(msg.chat);
    this.setForecast(Array.isArray(msg.forecast) ? msg.forecast : null);
    if (this.linkBack) {
      this.linkDownAt = null;
      this.linkBack = false;
    }
    this.v = msg.v;
    this.you = msg.you === undefined ? this.you : msg.you;
    this.moves = Array.isArray(msg.moves) ? msg.moves.slice() : [];
    this.startFen = typeof msg.start_fen === 'string' ? msg.start_fen : null;
    this.fens = Array.isArray(msg.fens) ? msg.fens.slice(0, this.moves.length) : [];
    this.positionCache.clear();
    if (this.viewPly !== null && (this.viewPly >= this.moves.length || !this.fenAt(this.viewPly))) this.viewPly = null;
    this.setActionPending(null);
    this.setState(msg.state);
    this.syncing = false;
    clearTimeout(this.syncTimer);
    this.setPending(null);
    this.resetSelection();
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
    if (this.fens.length === this.moves.length - 1 && msg.state && msg.state.fen) this.fens.push(msg.state.fen);
    this.setState(msg.state);
    this.setPending(null);
    this.resetSelection();
    this.premoves.afterState(); // a queued premove goes now, or is dropped with the reason
    // A move makes an earlier notice ("... declined the draw offer") old news: the status line
    // goes back to what matters now, such as a compulsory capture.
    if (this.flash && this.flash.kind === 'info') this.clearFlash();
    if (before && this.you && before.draw_offer === this.you && !this.state.draw_offer && !this.isOver) {
      // The opponent played on instead of answering: that declines the offer.
      const name = this.seatName(opposite(this.you));
      this.showFlash(
        name
          ? interpolate(gettext('%(name)s played on: your draw offer is declined.'), { name }, true)
          : gettext('Your opponent played on: your draw offer is declined.'),
        'info',
      );
      return;
    }
    if (before && this.you && before.takeback_offer === this.you && !this.state.takeback_offer
        && before.turn !== this.you && !this.isOver) {
      // The opponent played on instead of answering: that declines the takeback.
      const name = this.seatName(opposite(this.you));
      this.showFlash(
        name
          ? interpolate(gettext('%(name)s played on: your takeback proposal is declined.'), { name }, true)
          : gettext('Your opponent played on: your takeback proposal is declined.'),
        'info',
      );
      return;
    }
    this.redraw();
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
    this.fens = this.fens.slice(0, keep);
    this.positionCache.clear();
    if (this.viewPly !== null && this.viewPly >= keep) this.viewPly = null;
    this.premoves.clear(); // queued for a position that is gone
    this.setActionPending(null);
    this.setState(msg.state);
    this.setPending(null);
    this.resetSelection();
    this.showFlash(this.describeTakeback(msg.by, msg.plies), 'info');
  }

  /** What a takeback did, in words, for this viewer (`by`: the seat that proposed it). */
  describeTakeback(by, plies) {
    if (by && by === this.you) return gettext('Takeback accepted: it is your move again.');
    const name = (by && this.seatName(by)) || colorName(by);
    if (plies === 2) return interpolate(gettext('%(name)s took back a move and its reply.'), { name }, true);
    return interpolate(gettext('%(name)s took back a move.'), { name }, true);
  }

  onSeats(msg) {
    if (!this.accept(msg)) return;
    this.v = msg.v;
    this.setState(msg.state);
    this.resetSelection();
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
    if (this.isOver || msg.what === 'aborted' || msg.what === 'resigned') this.resetSelection();
    this.premoves.afterState();
    if (['draw_accepted', 'resigned', 'aborted', 'flagged', 'claimed_win', 'claimed_draw'].includes(msg.what)) {
      this.clearFlash(); // the result banner says it
    }
    const text = this.describeUpdate(msg.what, msg.by);
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
    const t = this.now();
    for (const seat of [BLACK, WHITE]) {
      const online = this.audience.online[seat];
      if (online === true) this.offlineSince[seat] = null;
      else if (online === false && this.offlineSince[seat] === null) this.offlineSince[seat] = t;
    }
    this.armClaimTimer();
    this.redraw();
  }

  /** A snapshot's chat ({room: [line, ...]}): its rooms are the ones this viewer reads; lines
   *  already here are kept (merged by id), so a resync never shows a line twice nor drops one. */
  mergeChat(rooms) {
    const next = {};
    for (const room of ['players', 'spectators']) {
      const lines = rooms && Array.isArray(rooms[room]) ? rooms[room] : null;
      if (!lines) continue;
      const byId = new Map((this.chat[room] || []).map((line) => [line.id, line]));
      for (const line of lines) if (line && typeof line.id === 'number') byId.set(line.id, line);
      next[room] = [...byId.values()].sort((a, b) => a.id - b.id).slice(-CHAT_KEEP);
    }
    this.chat = next;
    this.chatRevision += 1;
  }

  /** A chat line (unversioned: applied as it comes, once per id). */
  onChat(msg) {
    const line = msg && msg.line;
    if (!line || typeof line.id !== 'number') return;
    if (!this.chat[line.room]) {
      // The spectators' room opens to the players at the end; its history comes with the sync.
      if (!(line.room === 'spectators' && this.you && this.isOver)) return;
      this.chat.spectators = [];
    }
    const lines = this.chat[line.room];
    if (lines.some((known) => known.id === line.id)) return;
    lines.push(line);
    lines.sort((a, b) => a.id - b.id);
    if (lines.length > CHAT_KEEP) lines.splice(0, lines.length - CHAT_KEEP);
    this.chatRevision += 1;
    this.redraw();
  }

  /** Send a chat line to `room`; false when not connected. The line shows when the server sends it back. */
  sendChat(room, text) {
    return !!(this.socket && this.socket.send({ type: 'chat', room, text }));
  }

  describeUpdate(what, by) {
    const name = by && by !== this.you ? this.seatName(by) || colorName(by) : null;
    switch (what) {
      case 'draw_offered':
      case 'rematch_offered':
        return ''; // the actions panel shows the pending offer
      case 'draw_declined':
        if (by && by === this.you) return gettext('You declined the draw offer.');
        return name
          ? interpolate(gettext('%(name)s declined the draw offer.'), { name }, true)
          : gettext('Someone declined the draw offer.');
      case 'rematch_declined':
        if (by && by === this.you) return gettext('You declined the rematch.');
        return name
          ? interpolate(gettext('%(name)s declined the rematch.'), { name }, true)
          : gettext('Someone declined the rematch.');
      case 'rematch_started':
        return gettext('The rematch has started.');
      case 'takeback_offered':
        return ''; // the actions panel shows the pending proposal
      case 'takeback_declined':
        if (by && by === this.you) return gettext('You declined the takeback.');
        return name
          ? interpolate(gettext('%(name)s declined the takeback.'), { name }, true)
          : gettext('Someone declined the takeback.');
      default:
        return ''; // draw_accepted, resigned, aborted, flagged, claims: the result banner says it
    }
  }

  /** Our conditional moves now (docs/protocol.md, "Conditional moves"): a `forecast` message. */
  onForecast(msg) {
    this.forecastPending = false;
    this.forecastError = null;
    this.setForecast(Array.isArray(msg.lines) ? msg.lines : []);
    this.redraw();
  }

  setForecast(lines) {
    this.forecast = lines;
    this.forecastRevision += 1;
  }

  /** Send our conditional moves (a list of lines, each a list of move texts; [] clears them);
   * false when not connected. The answer is a `forecast` message, or an error. */
  sendForecast(lines) {
    this.forecastError = null;
    this.forecastPending = true;
    return !!(this.socket && this.socket.send({ type: 'forecast', lines }));
  }

  onError(msg) {
    const forecastCodes = ['bad_message', 'too_large', 'not_seated', 'not_started', 'game_over', 'busy', 'unavailable'];
    if (typeof msg.code === 'string'
        && (msg.code.startsWith('forecast_') || (this.forecastPending && forecastCodes.includes(msg.code)))) {
      this.forecastPending = false;
      this.forecastError = msg; // the forecast panel says it; a move in flight is not disturbed
      this.redraw();
      return;
    }
    if (typeof msg.code === 'string' && msg.code.startsWith('chat_')) {
      this.chatError = msg; // the chat view says it; a move in flight is not disturbed
      this.redraw();
      return;
    }
    this.setPending(null);
    this.setActionPending(null);
    this.resetSelection();
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
      this.resetSelection();
    }
    this.redraw();
  }

  setState(state) {
    const before = this.state;
    this.state = state;
    this.stateAt = this.now();
    if (!before || before.id !== state.id || before.ply !== state.ply || before.status !== state.status) {
      this.turnAt = this.stateAt;
    }
    this.armClaimTimer();
    const over = (st) => st.status === 'finished' || st.status === 'aborted';
    if (before && before.id === state.id && this.you && !over(before) && over(state) && !this.chat.spectators) {
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
    this.resetSelection();
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

  // ---- actions -----------------------------------------------------------

  resetSelection() {
    this.input.clear();
    this.confirming = null;
  }

  /** Click elsewhere or Escape: forget the route being picked, a move awaiting confirmation and a premove. */
  cancel() {
    const confirming = this.confirming !== null;
    this.confirming = null;
    const route = this.input.clear();
    if (this.premoves.clear() || route || confirming) this.redraw();
  }

  /** Select the piece on square n, if it has legal moves. Returns true if selected. */
  select(n) {
    if (!this.canInput) return this.premoves.select(n);
    if (!this.input.select(n)) return false;
    this.onSelected();
    this.redraw();
    return true;
  }

  /** A click or tap (or Enter) on dark square n. */
  clickSquare(n) {
    if (!this.canInput) {
      if (!this.premoves.click(n)) this.cancel();
      return;
    }
    this.follow(this.input.click(n), n);
  }

  /** A piece was dragged from square `from` and dropped on square `to` (null: off the board). */
  drop(from, to) {
    if (!this.canInput) {
      this.premoves.drop(from, to);
      return;
    }
    this.follow(this.input.drop(from, to), to);
  }

  /** Act on what a click or a drop on square n did (see RouteInput). */
  follow(step, n) {
    this.confirming = null; // another click on the board: the move awaiting confirmation is dropped
    if (step.move) {
      if (this.confirmMoves && this.legal.includes(step.move)) {
        this.confirming = step.move; // shown on the board with Confirm / Cancel (settings.js)
        this.input.clear();
        this.redraw();
      } else this.play(step.move);
      return;
    }
    if (step.selected) this.onSelected();
    if (step.changed) this.redraw();
    if (step.stuck) this.explainStuck(n);
  }

  /** A piece was selected: the hint about which pieces can move did its job. */
  onSelected() {
    if (this.flash && this.flash.kind === 'warn') this.clearFlash();
  }

  /** A click on square n picked nothing: if it holds one of the mover's pieces, say why it cannot move. */
  explainStuck(n) {
    const piece = this.position.pieces.get(n);
    if (!piece || !this.state || piece.color !== this.state.turn || !this.legal.length) return;
    if (this.input.mustCapture) this.showFlash(gettext('You must capture: the highlighted pieces can.'), 'warn');
    else this.showFlash(gettext('That piece has no move.'), 'warn');
  }

  /** Send the move waiting for confirmation (confirmMoves). */
  confirmMove() {
    const move = this.confirming;
    this.confirming = null;
    if (move) this.play(move);
    else this.redraw();
  }

  play(move) {
    if (!this.canInput || !this.legal.includes(move)) return;
    const sent = this.socket && this.socket.send({ type: 'move', move, v: this.v });
    this.resetSelection();
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
   * Send a game action (draw_offer, resign, ...: see ACTIONS). The server answers with an
   * `update` event to everyone, or an `error` to us; nothing changes here before that.
   */
  act(type) {
    if (!ACTIONS.includes(type) || !this.you) return false;
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

  // ---- what the viewer may do now --------------------------------------------

  get opponent() {
    return this.you ? opposite(this.you) : null;
  }

  /** Both seats taken (a rematch needs an opponent), and the opponent's account not deleted. */
  get hasOpponent() {
    const seats = (this.state && this.state.seats) || {};
    const other = this.you ? seats[opposite(this.you)] : null;
    return !!(this.seatName(BLACK) && this.seatName(WHITE)) && !(other && other.deleted);
  }

  /** The ply from which the viewer may propose a takeback again (0: any time). */
  get takebackAllowedAt() {
    const at = this.state && this.state.takeback_allowed_at && this.you ? this.state.takeback_allowed_at[this.you] : 0;
    return Number(at) || 0;
  }

  /** The computer's level in the opponent's seat, or null when the opponent is a person. */
  get opponentComputer() {
    const seat = this.you && this.state && this.state.seats ? this.state.seats[opposite(this.you)] : null;
    return seat && seat.computer ? Number(seat.computer) : null;
  }

  /**
   * True when the viewer has a move of their own to take back: the takeback removes one ply on the
   * opponent's turn and two on the viewer's own; the first `fixedPlies` plies (a 3-move ballot's,
   * played by the site) never go.
   */
  get hasTakeback() {
    const s = this.state;
    if (!s || s.status !== 'active' || !this.you) return false;
    const plies = s.turn === this.you ? 2 : 1;
    return s.ply - plies >= (Number(this.config.fixedPlies) || 0);
  }

  /** The ply from which the viewer may offer a draw again (0: any time). */
  get drawAllowedAt() {
    const at = this.state && this.state.draw_allowed_at && this.you ? this.state.draw_allowed_at[this.you] : 0;
    return Number(at) || 0;
  }

  get canAbort() {
    const s = this.state;
    if (!s || !this.you || this.isOver) return false;
    // Before both sides made a move of their own: a 3-move ballot's plies (config.fixedPlies) are the site's.
    const own = s.ply - (Number(this.config.fixedPlies) || 0);
    return s.status === 'waiting' || (s.status === 'active' && own < 2);
  }

  /** Plies left before the forty-move rule draws the game, or null when not worth a warning. */
  get noProgressLeft() {
    const s = this.state;
    if (!s || s.status !== 'active') return null;
    const n = Number(s.no_progress) || 0;
    if (n < NO_PROGRESS_WARN) return null;
    return Math.max(0, NO_PROGRESS_LIMIT - n);
  }

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

  // ---- clocks and presence ---------------------------------------------------

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

  /**
   * Milliseconds before the viewer may claim against the absent player to move (0: now), or
   * null when no claim applies: a spectator, the viewer's own turn, a correspondence game, the
   * computer's seat, or the player to move is on the page. Counted from when this page saw them
   * leave or saw their turn begin, whichever is later (the server counts alike, and decides).
   */
  get claimWaitMs() {
    const s = this.state;
    if (!s || s.status !== 'active' || !this.you || s.turn === this.you) return null;
    const limit = Number(s.claim_after_s);
    if (!s.claim_after_s || !(limit > 0)) return null;
    const seat = s.seats ? s.seats[s.turn] : null;
    if (!seat || !seat.name || seat.computer) return null;
    const since = this.offlineSince[s.turn];
    if (since === null || since === undefined) return null;
    const from = Math.max(since, this.turnAt);
    return Math.max(0, limit * 1000 - (this.now() - from));
  }

  get canClaim() {
    return this.claimWaitMs === 0;
  }

  /** Redraw when the claim becomes possible. */
  armClaimTimer() {
    clearTimeout(this.claimTimer);
    this.claimTimer = null;
    const wait = this.claimWaitMs;
    if (wait) this.claimTimer = setTimeout(() => this.redraw(), wait + 50);
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
      const by = seen.by;
      if (by === BLACK || by === WHITE) {
        if (by === this.you) return gettext('Aborted by you');
        return interpolate(gettext('Aborted by %(name)s'), { name: this.seatName(by) || colorName(by) }, true);
      }
      return interpolate(gettext('Aborted: a first move was not made within %(seconds)s seconds'), { seconds: FIRST_MOVE_S }, true);
    }
    return endText(s.termination, s.winner, s.reason);
  }

  seatName(color) {
    const seat = this.state && this.state.seats ? this.state.seats[color] : null;
    // The computer's name is the site's, so it is worded in the page's language.
    if (seat && seat.computer) return interpolate(gettext('Computer (level %(level)s)'), { level: seat.computer }, true);
    return seat && seat.name ? seat.name : null;
  }

  opponentOf(color) {
    return opposite(color);
  }
}
