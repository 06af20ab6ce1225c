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
