// Replay: any earlier position of the game can be shown while it goes on. The controller keeps
// the position after every ply (a snapshot's start_fen and fens, then each move's) here, and the
// board and the move list read the position shown from here (through the controller, whose
// shownPosition, shownPly, ... the analysis board's controller has too). Stepping goes through
// first/prev/next/last/goTo (view/replay.js wires the buttons, the move list and the keys).

import { parseFen } from './fen.js';

export class Replay {
  /** @param {Ctrl} ctrl  the game page's controller (ctrl.js): its moves, position, move picker, premoves and redraw */
  constructor(ctrl) {
    this.ctrl = ctrl;
    this.startFen = null; // the position before ply 1
    this.fens = []; // the position after each ply (fens[i] after ply i + 1)
    this.viewPly = null; // null: the current position; else the ply whose position is shown
    this.positions = new Map(); // ply -> parsed position
  }

  /** A snapshot's positions: `startFen` and `fens` for its `plies` plies. A view of a ply it does
   *  not hold (or no longer knows) returns to the current position. */
  reset(startFen, fens, plies) {
    this.startFen = typeof startFen === 'string' ? startFen : null;
    this.fens = Array.isArray(fens) ? fens.slice(0, plies) : [];
    this.positions.clear();
    if (this.viewPly !== null && (this.viewPly >= plies || !this.fenAt(this.viewPly))) this.viewPly = null;
  }

  /** A move was played: `fen`, the position after it, follows the ones known (a gap: unknown). */
  push(fen, plies) {
    if (this.fens.length === plies - 1 && fen) this.fens.push(fen);
  }

  /** A takeback left `plies` plies: the later positions are gone, and a view of them goes back to the game. */
  cut(plies) {
    this.fens = this.fens.slice(0, plies);
    this.positions.clear();
    if (this.viewPly !== null && this.viewPly >= plies) this.viewPly = null;
  }

  /** True while an earlier position than the current one is shown. */
  get replaying() {
    return this.viewPly !== null;
  }

  /** The ply whose position the board shows (the number of plies played when live). */
  get shownPly() {
    return this.viewPly === null ? this.ctrl.moves.length : this.viewPly;
  }

  /** The FEN after `ply` plies (the start position for 0), or null when unknown. */
  fenAt(ply) {
    if (ply === 0) return this.startFen;
    return this.fens[ply - 1] || null;
  }

  /** The position on the board: the current one, or the one viewed. */
  get shownPosition() {
    const ctrl = this.ctrl;
    if (this.viewPly === null) return ctrl.position;
    const ply = this.viewPly;
    if (!this.positions.has(ply)) {
      try {
        this.positions.set(ply, parseFen(this.fenAt(ply)));
      } catch (err) {
        return ctrl.position;
      }
    }
    return this.positions.get(ply);
  }

  /** The move that led to the shown position (null at the start). */
  get shownLastMove() {
    const moves = this.ctrl.moves;
    if (this.viewPly === null) return moves.length ? moves[moves.length - 1] : null;
    return this.viewPly > 0 ? moves[this.viewPly - 1] : null;
  }

  /** Show the position after `ply` plies; the last ply (or beyond) returns to the current position. */
  goTo(ply) {
    const ctrl = this.ctrl;
    const n = ctrl.moves.length;
    let target = Math.max(0, Math.min(n, Math.floor(Number(ply) || 0)));
    if (target >= n) target = null;
    else if (!this.fenAt(target)) return false; // position unknown (old server): stay
    if (target === this.viewPly) return false;
    this.viewPly = target;
    ctrl.picker.reset();
    ctrl.premoves.clear();
    ctrl.redraw();
    return true;
  }

  first() {
    return this.goTo(0);
  }

  prev() {
    return this.shownPly > 0 ? this.goTo(this.shownPly - 1) : false;
  }

  next() {
    return this.viewPly === null ? false : this.goTo(this.viewPly + 1);
  }

  last() {
    return this.goTo(this.ctrl.moves.length);
  }
}
