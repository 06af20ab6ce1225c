// Premoves: in a live timed game a player may queue one move while the opponent thinks (click or
// drag as for a move: one hop, or a whole route of jumps). When the opponent's move arrives the
// page reads the new legal moves (state.legal) and sends the queued route at once if it names one
// legal move; otherwise it drops it and says why. The server judges the move sent like any other.
// Clicking elsewhere or Escape cancels the queued route (Ctrl.cancel); a setting turns premoves off.

import { PremoveInput, resolvePremove } from './input.js';
import { gettext, interpolate } from './i18n.js';

const fmt = (format, values) => interpolate(format, values, true);

/** True for a live timed control ("5+3"): no premoves untimed or by correspondence. */
export function isLiveControl(state) {
  return !!(state && state.clock && /^\d+\+\d+$/.test(String(state.clock.control || '')));
}

export class Premoves {
  /** @param {Ctrl} ctrl  the game page's controller (ctrl.js) */
  constructor(ctrl) {
    this.ctrl = ctrl;
    this.enabled = true; // the settings panel's "Premoves" (settings.js)
    this.input = new PremoveInput(
      () => ctrl.position.pieces,
      () => (this.active ? ctrl.you : null),
    );
    this.ply = null; // the ply the route was queued at (the opponent's turn)
    this.sent = null; // {move, at}: the last premove sent (at: performance.now() ms)
  }

  /** True while the player may queue a premove: a live timed game in play, the opponent's turn. */
  get active() {
    const c = this.ctrl;
    const s = c.state;
    return !!(
      this.enabled &&
      s &&
      s.status === 'active' &&
      c.you &&
      s.turn !== c.you &&
      isLiveControl(s) &&
      c.connection === 'open' &&
      c.v !== null &&
      !c.replaying
    );
  }

  /** The queued route's squares ([] when none). */
  get path() {
    return this.input.path;
  }

  get queued() {
    return this.input.queued;
  }

  /** Forget the route; true when there was one. */
  clear() {
    this.ply = null;
    return this.input.clear();
  }

  /** A click on square n while premoves are possible; false when premoves are not (the caller cancels). */
  click(n) {
    if (!this.active) return false;
    this.follow(this.input.click(n));
    return true;
  }

  /** A piece dragged from `from` and dropped on `to` (null: off the board). */
  drop(from, to) {
    if (!this.active) return false;
    this.follow(this.input.drop(from, to));
    return true;
  }

  /** Select the piece on n (a drag starts); true when selected. */
  select(n) {
    if (!this.active || !this.input.select(n)) return false;
    this.ply = this.ctrl.state.ply;
    this.ctrl.redraw();
    return true;
  }

  follow(step) {
    if (this.input.path.length) this.ply = this.ctrl.state.ply;
    else this.ply = null;
    if (step.changed || step.selected) this.ctrl.redraw();
  }

  /**
   * After every new state (a move, a snapshot, an update): on the player's turn right after the
   * opponent's move, send the queued route if it names one legal move, else drop it and say why.
   * A route queued for another position (a takeback, a missed move) or a game that ended is dropped.
   */
  afterState() {
    const c = this.ctrl;
    const s = c.state;
    if (!this.input.path.length) return;
    if (!s || s.status !== 'active' || !c.you || !this.enabled) {
      this.clear();
      return;
    }
    if (s.turn !== c.you) {
      if (s.ply !== this.ply) this.clear(); // the position changed under the route
      return;
    }
    const text = this.input.text;
    const path = this.input.path.slice();
    const fresh = s.ply === this.ply + 1;
    this.clear();
    if (!fresh || path.length < 2) return; // a piece only selected, or a route for another position
    if (!c.canInput) return; // the page is catching up (a snapshot follows): no move from an old view
    const answer = resolvePremove(path, c.legal);
    if (answer.move) {
      this.sent = { move: answer.move, at: performance.now() };
      c.play(answer.move);
      return;
    }
    if (answer.ambiguous) {
      c.showFlash(
        fmt(gettext('Premove %(move)s cancelled: it can go on more than one way (%(moves)s).'), {
          move: text,
          moves: answer.ambiguous.join(', '),
        }),
        'warn',
      );
      return;
    }
    c.showFlash(fmt(gettext('Premove %(move)s cancelled: it is not a legal move in this position.'), { move: text }), 'warn');
  }
}
