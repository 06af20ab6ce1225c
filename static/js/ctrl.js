// Game state and actions. The server is the truth: the controller applies its
// events in version order, offers only the moves in state.legal, and never
// shows a move before the server's `move` event.

import { parseFen, opposite, colorName, BLACK, WHITE } from './fen.js';
import { matching, movePath } from './notation.js';

const FLASH_MS = 4000;
const SYNC_RETRY_MS = 5000;
const PENDING_LIMIT_MS = 8000; // no answer to a move this long: ask for a snapshot
const NUMBERS_KEY = 'checkers.showNumbers';

function loadFlag(key) {
  try {
    return window.localStorage.getItem(key) === '1';
  } catch (err) {
    return false;
  }
}

function saveFlag(key, value) {
  try {
    window.localStorage.setItem(key, value ? '1' : '0');
  } catch (err) {
    /* private mode: keep it for this page only */
  }
}

export class Ctrl {
  /**
   * @param {object} config  the page's game-config: {gameId, wsPath, you}
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
    this.position = { turn: BLACK, pieces: new Map() };
    this.audience = null; // {spectators, online: {B, W}} once the server tells

    // Local state.
    this.connection = 'connecting';
    this.connectionDetail = null;
    this.syncing = false;
    this.syncTimer = null;
    this.pending = null; // move text sent, awaiting the server
    this.pendingTimer = null;
    this.path = []; // selected piece then the landing squares clicked so far
    this.flash = null; // {message, kind}
    this.flashTimer = null;
    this.showNumbers = loadFlag(NUMBERS_KEY);
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
    return this.you === BLACK ? BLACK : WHITE;
  }

  get lastMove() {
    return this.moves.length ? this.moves[this.moves.length - 1] : null;
  }

  get isMyTurn() {
    return !!(this.state && this.state.status === 'active' && this.you && this.state.turn === this.you);
  }

  /** True when the viewer may pick a move right now. */
  get canInput() {
    return this.isMyTurn && this.connection === 'open' && !this.syncing && !this.pending && this.v !== null;
  }

  get legal() {
    return this.canInput && this.state.legal ? this.state.legal : [];
  }

  /** Squares holding a piece with at least one legal move. */
  movableSquares() {
    return new Set(this.legal.map((m) => movePath(m)[0]));
  }

  /** Legal moves ({move, path}) matching the current selection. */
  candidates() {
    return this.path.length ? matching(this.legal, this.path) : [];
  }

  /** The next landing squares of the selected route. */
  destinations() {
    const n = this.path.length;
    const out = new Set();
    for (const { path } of this.candidates()) if (path.length > n) out.add(path[n]);
    return out;
  }

  /** The final squares of the routes still open (for the "jump to the end" shortcut). */
  finalSquares() {
    const out = new Map();
    for (const c of this.candidates()) {
      const end = c.path[c.path.length - 1];
      out.set(end, out.has(end) ? null : c.move); // null: several routes end there
    }
    return out;
  }

  // ---- server messages ---------------------------------------------------

  onSnapshot(msg) {
    this.v = msg.v;
    this.you = msg.you === undefined ? this.you : msg.you;
    this.moves = Array.isArray(msg.moves) ? msg.moves.slice() : [];
    this.setState(msg.state);
    this.syncing = false;
    clearTimeout(this.syncTimer);
    this.setPending(null);
    this.resetSelection();
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
    this.moves.push(msg.move);
    this.setState(msg.state);
    this.setPending(null);
    this.resetSelection();
    this.redraw();
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
    this.setState(msg.state);
    if (this.isOver || msg.what === 'aborted' || msg.what === 'resigned') this.resetSelection();
    const text = this.describeUpdate(msg.what, msg.by);
    if (text) this.showFlash(text, 'info');
    else this.redraw();
  }

  /** Who is watching: {spectators, online: {B, W}} (unversioned: applied as it comes). */
  onAudience(msg) {
    this.audience = {
      spectators: Number(msg.spectators) || 0,
      online: msg.online && typeof msg.online === 'object' ? msg.online : {},
    };
    this.redraw();
  }

  describeUpdate(what, by) {
    const who = by ? (by === this.you ? 'You' : this.seatName(by) || colorName(by)) : 'Someone';
    switch (what) {
      case 'draw_offered':
        return by === this.you ? 'You offered a draw.' : `${who} offers a draw.`;
      case 'draw_declined':
        return by === this.you ? 'You declined the draw offer.' : `${who} declined the draw offer.`;
      case 'rematch_offered':
        return by === this.you ? 'You proposed a rematch.' : `${who} proposes a rematch.`;
      case 'rematch_declined':
        return by === this.you ? 'You declined the rematch.' : `${who} declined the rematch.`;
      case 'rematch_started':
        return 'The rematch has started.';
      default:
        return ''; // draw_accepted, resigned, aborted: the result banner says it
    }
  }

  onError(msg) {
    this.setPending(null);
    this.resetSelection();
    this.showFlash(msg.message || msg.code || 'Refused', 'error');
  }

  onConnection(state, detail) {
    this.connection = state;
    this.connectionDetail = detail;
    if (state !== 'open') {
      // Whatever was in flight is unknown now; the next snapshot tells.
      this.setPending(null);
      this.syncing = false;
      clearTimeout(this.syncTimer);
      this.resetSelection();
    }
    this.redraw();
  }

  setState(state) {
    this.state = state;
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
    this.path = [];
  }

  cancel() {
    if (!this.path.length) return;
    this.resetSelection();
    this.redraw();
  }

  /** Select the piece on square n, if it has legal moves. Returns true if selected. */
  select(n) {
    if (!this.movableSquares().has(n)) return false;
    this.path = [n];
    this.redraw();
    return true;
  }

  /** A click or tap (or Enter) on dark square n. */
  clickSquare(n) {
    if (!this.canInput) {
      this.cancel();
      return;
    }
    if (!this.path.length) {
      this.select(n);
      return;
    }
    if (this.path.length === 1 && n === this.path[0]) {
      this.cancel(); // click the selected piece again: unselect
      return;
    }
    if (this.destinations().has(n)) {
      this.extend(n);
      return;
    }
    const shortcut = this.finalSquares().get(n);
    if (shortcut) {
      this.play(shortcut); // the only route ending on n
      return;
    }
    if (this.movableSquares().has(n)) {
      this.select(n); // another piece
      return;
    }
    this.cancel();
  }

  /** Add landing square n to the route; send the move once it is complete. */
  extend(n) {
    const path = this.path.concat([n]);
    const candidates = matching(this.legal, path);
    const complete = candidates.filter((c) => c.path.length === path.length);
    if (complete.length === 1) {
      this.play(complete[0].move);
      return;
    }
    if (!candidates.length) {
      this.cancel();
      return;
    }
    this.path = path;
    this.redraw();
  }

  /** A piece was dragged from square `from` and dropped on square `to` (null: off the board). */
  drop(from, to) {
    if (!this.canInput) return;
    const tip = this.path.length ? this.path[this.path.length - 1] : null;
    if (from !== tip) {
      // A fresh drag from a piece: start a new route there.
      if (!this.movableSquares().has(from)) return;
      this.path = [from];
    }
    if (to === null || to === from) {
      this.redraw(); // dropped back: the piece stays selected
      return;
    }
    this.clickSquare(to);
  }

  play(move) {
    if (!this.canInput || !this.legal.includes(move)) return;
    const sent = this.socket && this.socket.send({ type: 'move', move, v: this.v });
    this.resetSelection();
    if (sent) this.setPending(move);
    else this.showFlash('Not connected: the move was not sent.', 'error');
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

  toggleNumbers(on = !this.showNumbers) {
    this.showNumbers = !!on;
    saveFlag(NUMBERS_KEY, this.showNumbers);
    this.redraw();
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

  // ---- presentation helpers ---------------------------------------------

  seatName(color) {
    const seat = this.state && this.state.seats ? this.state.seats[color] : null;
    return seat && seat.name ? seat.name : null;
  }

  opponentOf(color) {
    return opposite(color);
  }
}
