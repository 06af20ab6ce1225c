// Picking a move on a board, as both boards do it (the game page and the analysis board):
// click a piece, then its landing squares one hop at a time (or the end of the only route
// there), or drag it. Legality is the server's: only the legal moves it sent, in full
// notation ("11-15", "27x18x11"), can be picked.

import { matching, movePath, isCapture } from './notation.js';

/**
 * What a click or a drop did, for the controller to act on:
 * - `move`: a whole legal move was picked (the route is left as it is): play it;
 * - `changed`: the route changed (redraw);
 * - `selected`: a piece was selected afresh;
 * - `stuck`: the click picked nothing (the controller may say why).
 */
function step({ move = null, changed = false, selected = false, stuck = false } = {}) {
  return { move, changed, selected, stuck };
}

export class RouteInput {
  /** @param {function(): string[]} legal  the moves that may be picked now (none: no input) */
  constructor(legal) {
    this.legal = legal;
    this.path = []; // the selected piece, then the landing squares clicked so far
  }

  /** The square the route ends on so far (the selected piece before a hop), or null. */
  get tip() {
    return this.path.length ? this.path[this.path.length - 1] : null;
  }

  /** Forget the route; true when there was one. */
  clear() {
    const had = this.path.length > 0;
    this.path = [];
    return had;
  }

  /** Squares holding a piece with at least one legal move. */
  movable() {
    return new Set(this.legal().map((m) => movePath(m)[0]));
  }

  /** Every legal move is a capture (the rules make captures compulsory): the board rings the pieces that can take. */
  get mustCapture() {
    const legal = this.legal();
    return legal.length > 0 && legal.every(isCapture);
  }

  /** Legal moves ({move, path}) along the route so far. */
  candidates() {
    return this.path.length ? matching(this.legal(), this.path) : [];
  }

  /** The next landing squares of the route. */
  destinations() {
    const n = this.path.length;
    const out = new Set();
    for (const { path } of this.candidates()) if (path.length > n) out.add(path[n]);
    return out;
  }

  /** The final squares of the routes still open, each with its move (null: several routes end there). */
  finalSquares() {
    const out = new Map();
    for (const c of this.candidates()) {
      const end = c.path[c.path.length - 1];
      out.set(end, out.has(end) ? null : c.move);
    }
    return out;
  }

  /** Select the piece on square n, if it has a legal move; true if selected. */
  select(n) {
    if (!this.movable().has(n)) return false;
    this.path = [n];
    return true;
  }

  /** A click or tap (or Enter) on dark square n. */
  click(n) {
    if (!this.path.length) return this.select(n) ? step({ changed: true, selected: true }) : step({ stuck: true });
    if (this.path.length === 1 && n === this.path[0]) return step({ changed: this.clear() }); // again: unselect
    if (this.destinations().has(n)) return this.extend(n);
    const shortcut = this.finalSquares().get(n);
    if (shortcut) return step({ move: shortcut }); // the only route ending on n
    if (this.select(n)) return step({ changed: true, selected: true }); // another piece
    return step({ changed: this.clear(), stuck: true });
  }

  /** Add landing square n to the route: the move once it is complete. */
  extend(n) {
    const path = this.path.concat([n]);
    const candidates = matching(this.legal(), path);
    const complete = candidates.filter((c) => c.path.length === path.length);
    if (complete.length === 1) return step({ move: complete[0].move });
    if (!candidates.length) return step({ changed: this.clear() });
    this.path = path;
    return step({ changed: true });
  }

  /** A piece was dragged from square `from` and dropped on square `to` (null: off the board). */
  drop(from, to) {
    let fresh = false;
    if (from !== this.tip) {
      // A fresh drag from a piece: a new route from there.
      if (!this.select(from)) return step();
      fresh = true;
    }
    if (to === null || to === from) return step({ changed: true }); // dropped back: still selected
    const next = this.click(to);
    return fresh ? { ...next, changed: true } : next;
  }
}

// ---- premoves ---------------------------------------------------------------------------
// While the opponent thinks there are no legal moves to pick from: a premove is a route the
// player's piece could take by the board's geometry (a man forward, a king either way; a step,
// or a chain of jumps), queued until the opponent's move arrives. Only then do the server's
// legal moves say what it means (resolvePremove); the server judges the move sent like any other.

const DIAGONALS = [
  [-1, -1],
  [-1, 1],
  [1, -1],
  [1, 1],
];

/** The dark square at {row, col} (White at the bottom, row 0 = squares 1-4), or null off the board. */
function squareAt(row, col) {
  if (row < 0 || row > 7 || col < 0 || col > 7 || (row + col) % 2 === 0) return null;
  return row * 4 + Math.floor(col / 2) + 1;
}

function rowCol(n) {
  const row = Math.floor((n - 1) / 4);
  const i = (n - 1) % 4;
  return { row, col: row % 2 === 0 ? 2 * i + 1 : 2 * i };
}

/** True when going from a to b is a jump (two diagonal squares). */
function isJumpHop(a, b) {
  const p = rowCol(a);
  const q = rowCol(b);
  return Math.abs(p.row - q.row) === 2 && Math.abs(p.col - q.col) === 2;
}

export class PremoveInput {
  /**
   * @param {function(): Map} pieces  the position's pieces (square -> {color, king})
   * @param {function(): (string|null)} color  the player's colour ("B", "W"); null: no premoves now
   */
  constructor(pieces, color) {
    this.pieces = pieces;
    this.color = color;
    this.path = []; // the piece, then the landing squares queued so far
  }

  get tip() {
    return this.path.length ? this.path[this.path.length - 1] : null;
  }

  /** True once a route of at least one hop is queued. */
  get queued() {
    return this.path.length > 1;
  }

  /** The queued route in notation ("11-15", "15x24x31"), or "" when nothing is queued. */
  get text() {
    if (!this.queued) return '';
    return this.path.join(isJumpHop(this.path[0], this.path[1]) ? 'x' : '-');
  }

  clear() {
    const had = this.path.length > 0;
    this.path = [];
    return had;
  }

  /** Squares holding one of the player's pieces. */
  movable() {
    const color = this.color();
    const out = new Set();
    if (!color) return out;
    for (const [n, piece] of this.pieces()) if (piece.color === color) out.add(n);
    return out;
  }

  /** The squares the route may go on to: steps and jumps first, then only further jumps. */
  destinations() {
    const out = new Set();
    if (!this.path.length) return out;
    const piece = this.pieces().get(this.path[0]);
    if (!piece) return out;
    const tip = this.tip;
    const jumping = this.path.length > 1;
    if (jumping && !isJumpHop(this.path[this.path.length - 2], tip)) return out; // a step is a whole move
    const forward = piece.color === 'B' ? 1 : -1; // Black's men go down the numbers, White's up
    const { row, col } = rowCol(tip);
    for (const [dr, dc] of DIAGONALS) {
      if (!piece.king && dr !== forward) continue;
      const jump = squareAt(row + 2 * dr, col + 2 * dc);
      if (jump !== null && !this.path.includes(jump)) out.add(jump);
      if (!jumping) {
        const one = squareAt(row + dr, col + dc);
        if (one !== null) out.add(one);
      }
    }
    return out;
  }

  select(n) {
    if (!this.movable().has(n)) return false;
    this.path = [n];
    return true;
  }

  /** A click on square n: select a piece, queue or extend the route, or cancel it (step as RouteInput's). */
  click(n) {
    if (this.path.length && this.destinations().has(n)) {
      this.path = this.path.concat([n]);
      return step({ changed: true });
    }
    if (this.path.length === 1 && n === this.path[0]) return step({ changed: this.clear() });
    if (this.queued && n === this.tip) return step(); // the tip again: the route stays queued
    if (this.select(n)) return step({ changed: true, selected: true });
    return step({ changed: this.clear() });
  }

  /** A drag from `from` dropped on `to` (null: off the board). */
  drop(from, to) {
    if (from !== this.tip && !this.select(from)) return step();
    if (to === null || to === from) return step({ changed: true });
    if (this.destinations().has(to)) return this.click(to);
    return step({ changed: true });
  }
}

/**
 * What a queued premove route means once it is the player's turn, by the legal moves then.
 *   resolvePremove([11, 15], ['11-15', '9-13'])         -> {move: '11-15'}
 *   resolvePremove([15, 24], ['15x24x31'])              -> {move: '15x24x31'} (the one way on)
 *   resolvePremove([10, 17], ['10x17x26', '10x17x24'])  -> {ambiguous: ['10x17x26', '10x17x24']}
 *   resolvePremove([9, 13], ['15x22'])                  -> {illegal: true}
 * @param {number[]} path  the piece's square and the landing squares queued
 * @param {string[]} legal  the side to move's legal moves (full notation)
 * @returns {{move?: string, ambiguous?: string[], illegal?: boolean}}
 */
export function resolvePremove(path, legal) {
  const candidates = path.length > 1 ? matching(legal, path) : [];
  const exact = candidates.find((c) => c.path.length === path.length);
  if (exact) return { move: exact.move };
  if (candidates.length === 1) return { move: candidates[0].move };
  if (candidates.length > 1) return { ambiguous: candidates.map((c) => c.move) };
  return { illegal: true };
}
