// Claims against an absent opponent (docs/protocol.md, `claim_win`, `claim_draw`): when the
// player to move has left the page for `claim_after_s` seconds, the other may win or end the
// game drawn. This page counts the wait as the server does, from when it saw them leave or saw
// their turn begin, whichever is later, to show it; the server decides. The controller owns one
// (ctrl.claims) and hands it every new state and the `audience` notices' presence;
// view/actions.js shows the wait and the buttons.

import { BLACK, WHITE } from './fen.js';

export class Claims {
  /** @param {Ctrl} ctrl  the game page's controller (ctrl.js): its state, seat, clock (now) and redraw */
  constructor(ctrl) {
    this.ctrl = ctrl;
    this.turnAt = ctrl.now(); // when this page saw the current turn begin
    this.offlineSince = { B: null, W: null }; // when this page saw each player leave (null: on the page)
    this.timer = null;
  }

  /** A new state (`before`: the one it replaces, or null). */
  onState(before, state) {
    if (!before || before.id !== state.id || before.ply !== state.ply || before.status !== state.status) {
      this.turnAt = this.ctrl.stateAt;
    }
    this.arm();
  }

  /** Who is on the page ({B, W}: true, false, or unknown), from an `audience` notice. */
  onPresence(online) {
    const t = this.ctrl.now();
    for (const seat of [BLACK, WHITE]) {
      if (online[seat] === true) this.offlineSince[seat] = null;
      else if (online[seat] === false && this.offlineSince[seat] === null) this.offlineSince[seat] = t;
    }
    this.arm();
  }

  /**
   * Milliseconds before the viewer may claim against the absent player to move (0: now), or
   * null when no claim applies: a spectator, the viewer's own turn, a correspondence game, the
   * computer's seat, or the player to move is on the page.
   */
  get waitMs() {
    const ctrl = this.ctrl;
    const s = ctrl.state;
    if (!s || s.status !== 'active' || !ctrl.you || s.turn === ctrl.you) return null;
    const limit = Number(s.claim_after_s);
    if (!s.claim_after_s || !(limit > 0)) return null;
    const seat = s.seats ? s.seats[s.turn] : null;
    if (!seat || !seat.name || seat.computer) return null;
    const since = this.offlineSince[s.turn];
    if (since === null || since === undefined) return null;
    const from = Math.max(since, this.turnAt);
    return Math.max(0, limit * 1000 - (ctrl.now() - from));
  }

  /** True when the viewer may claim now. */
  get possible() {
    return this.waitMs === 0;
  }

  /** Redraw when the claim becomes possible. */
  arm() {
    clearTimeout(this.timer);
    this.timer = null;
    const wait = this.waitMs;
    if (wait) this.timer = setTimeout(() => this.ctrl.redraw(), wait + 50);
  }
}
