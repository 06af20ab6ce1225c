// The move being picked on the board: clicks, taps, Enter and drags build a route among the legal
// moves (input.js's RouteInput), or the premove's route while the opponent thinks (premove.js). A
// finished route is played at once, or waits for "Confirm" when the player asked for that
// (settings.js). A click on a piece that cannot move says why. The controller owns one
// (ctrl.picker) and passes the board's clicks and drops to it.

import { RouteInput } from './input.js';
import { gettext } from './i18n.js';

export class MovePicker {
  /** @param {Ctrl} ctrl  the game page's controller (ctrl.js): its legal moves, premoves, play and status line */
  constructor(ctrl) {
    this.ctrl = ctrl;
    this.input = new RouteInput(() => ctrl.legal); // the route being picked
    this.confirmMoves = false; // a picked move waits for "Confirm" before it is sent (settings.js)
    this.confirming = null; // the move waiting for confirmation
  }

  /** Forget the route and the move awaiting confirmation (nothing redrawn). */
  reset() {
    this.input.clear();
    this.confirming = null;
  }

  /** Click elsewhere or Escape: forget the route being picked, a move awaiting confirmation and a premove. */
  cancel() {
    const confirming = this.confirming !== null;
    this.confirming = null;
    const route = this.input.clear();
    if (this.ctrl.premoves.clear() || route || confirming) this.ctrl.redraw();
  }

  /** Select the piece on square n, if it has legal moves. Returns true if selected. */
  select(n) {
    const ctrl = this.ctrl;
    if (!ctrl.canInput) return ctrl.premoves.select(n);
    if (!this.input.select(n)) return false;
    this.onSelected();
    ctrl.redraw();
    return true;
  }

  /** A click or tap (or Enter) on dark square n. */
  click(n) {
    const ctrl = this.ctrl;
    if (!ctrl.canInput) {
      if (!ctrl.premoves.click(n)) this.cancel();
      return;
    }
    this.follow(this.input.click(n), n);
  }

  /** A piece was dragged from square `from` and dropped on square `to` (null: off the board). */
  drop(from, to) {
    if (!this.ctrl.canInput) {
      this.ctrl.premoves.drop(from, to);
      return;
    }
    this.follow(this.input.drop(from, to), to);
  }

  /** Act on what a click or a drop on square n did (see RouteInput). */
  follow(step, n) {
    const ctrl = this.ctrl;
    this.confirming = null; // another click on the board: the move awaiting confirmation is dropped
    if (step.move) {
      if (this.confirmMoves && ctrl.legal.includes(step.move)) {
        this.confirming = step.move; // shown on the board with Confirm / Cancel (settings.js)
        this.input.clear();
        ctrl.redraw();
      } else ctrl.play(step.move);
      return;
    }
    if (step.selected) this.onSelected();
    if (step.changed) ctrl.redraw();
    if (step.stuck) this.explainStuck(n);
  }

  /** A piece was selected: the hint about which pieces can move did its job. */
  onSelected() {
    const ctrl = this.ctrl;
    if (ctrl.flash && ctrl.flash.kind === 'warn') ctrl.clearFlash();
  }

  /** A click on square n picked nothing: if it holds one of the mover's pieces, say why it cannot move. */
  explainStuck(n) {
    const ctrl = this.ctrl;
    const piece = ctrl.position.pieces.get(n);
    if (!piece || !ctrl.state || piece.color !== ctrl.state.turn || !ctrl.legal.length) return;
    if (this.input.mustCapture) ctrl.showFlash(gettext('You must capture: the highlighted pieces can.'), 'warn');
    else ctrl.showFlash(gettext('That piece has no move.'), 'warn');
  }

  /** Send the move waiting for confirmation. */
  confirm() {
    const move = this.confirming;
    this.confirming = null;
    if (move) this.ctrl.play(move);
    else this.ctrl.redraw();
  }
}
