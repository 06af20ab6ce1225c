// The game actions panel: draw offers and answers, takeback proposals and answers,
// resignation (with a confirmation step), abort, a claim against an absent opponent, and after
// the game the rematch. Every button only sends a message; what the page shows follows the
// server's state (what a seat may do now: game.js; the claim's wait: claims.js).

import { colorName } from '../fen.js';
import * as game from '../game.js';
import { gettext, ngettext, interpolate } from '../i18n.js';

const fmt = (format, values) => interpolate(format, values, true);

function text(node, value) {
  if (node && node.textContent !== value) node.textContent = value;
}

function show(node, visible) {
  if (node && node.hidden === visible) node.hidden = !visible;
}

function enable(node, on) {
  if (node && node.disabled === on) node.disabled = !on;
}

const CONFIRM_MS = 8000; // a confirmation step (resign, abort) closes by itself after this long

export class ActionsView {
  /**
   * @param {object} els  the panel's elements (see templates/game.html)
   * @param {Ctrl} ctrl
   */
  constructor(els, ctrl) {
    this.els = els;
    this.ctrl = ctrl;
    this.confirmingResign = false;
    this.resignTimer = null;
    this.confirmingAbort = false;
    this.abortTimer = null;
    this.claimTicker = null;

    this.refocus = null; // where focus goes once a pressed button is hidden or disabled (keepFocus)

    const on = (node, handler) => {
      if (node) node.addEventListener('click', handler);
    };
    // A button that goes away once pressed, and the controls that take its focus, in order.
    const after = (node, handler, ...next) => on(node, () => {
      this.refocus = next;
      handler();
    });
    after(els.offerDraw, () => ctrl.act('draw_offer'), els.drawPending, els.offerDraw);
    after(els.acceptDraw, () => ctrl.act('draw_accept'), els.rematch);
    after(els.declineDraw, () => ctrl.act('draw_decline'), els.offerDraw, els.drawHint);
    on(els.abort, () => this.askAbort());
    on(els.abortConfirm, () => {
      this.closeAbort(false);
      ctrl.act('abort');
    });
    on(els.abortCancel, () => this.closeAbort(true));
    on(els.resign, () => this.askResign());
    on(els.resignConfirm, () => {
      this.closeResign(false);
      ctrl.act('resign');
    });
    on(els.resignCancel, () => this.closeResign(true));
    after(els.rematch, () => ctrl.act('rematch_offer'), els.rematchNote);
    on(els.acceptRematch, () => ctrl.act('rematch_accept'));
    after(els.declineRematch, () => ctrl.act('rematch_decline'), els.rematch, els.rematchNote);
    after(els.claimWin, () => ctrl.act('claim_win'), els.rematch);
    after(els.claimDraw, () => ctrl.act('claim_draw'), els.rematch);
    after(els.proposeTakeback, () => ctrl.act('takeback_propose'), els.takebackPending, els.proposeTakeback);
    after(els.acceptTakeback, () => ctrl.act('takeback_accept'), els.proposeTakeback, els.offerDraw);
    after(els.declineTakeback, () => ctrl.act('takeback_decline'), els.proposeTakeback, els.takebackHint,
      els.offerDraw);
    if (els.resignBox) {
      els.resignBox.addEventListener('keydown', (e) => {
        if (e.key === 'Escape') this.closeResign(true);
      });
    }
    if (els.abortBox) {
      els.abortBox.addEventListener('keydown', (e) => {
        if (e.key === 'Escape') this.closeAbort(true);
      });
    }
  }

  /** The page shows another game now: the claim's countdown and the confirmations' timers stop. */
  stop() {
    clearInterval(this.claimTicker);
    clearTimeout(this.resignTimer);
    clearTimeout(this.abortTimer);
    this.claimTicker = null;
  }

  askResign() {
    this.closeAbort(false);
    this.confirmingResign = true;
    clearTimeout(this.resignTimer);
    this.resignTimer = setTimeout(() => this.closeResign(false), CONFIRM_MS);
    this.render();
    if (this.els.resignConfirm) this.els.resignConfirm.focus();
  }

  askAbort() {
    this.closeResign(false);
    this.confirmingAbort = true;
    clearTimeout(this.abortTimer);
    this.abortTimer = setTimeout(() => this.closeAbort(false), CONFIRM_MS);
    this.render();
    if (this.els.abortConfirm) this.els.abortConfirm.focus();
  }

  closeAbort(refocus) {
    clearTimeout(this.abortTimer);
    if (!this.confirmingAbort) return;
    this.confirmingAbort = false;
    this.render();
    if (refocus && this.els.abort && !this.els.abort.hidden) this.els.abort.focus();
  }

  closeResign(refocus) {
    clearTimeout(this.resignTimer);
    if (!this.confirmingResign) return;
    this.confirmingResign = false;
    this.render();
    if (refocus && this.els.resign && !this.els.resign.hidden) this.els.resign.focus();
  }

  /** The name of the player in `seat` (never the viewer: callers say "you" in a sentence of its own). */
  name(seat) {
    const ctrl = this.ctrl;
    if (!seat) return '';
    return ctrl.seatName(seat) || colorName(seat);
  }

  /** The pending offer or proposal in words, for its proposer (`mine`) or a spectator; '' for none. */
  pendingText(offer, mine, forMe, byMe, bySomeone) {
    const ctrl = this.ctrl;
    const opponentName = ctrl.seatName(ctrl.opponent);
    if (mine) return opponentName ? fmt(forMe, { name: opponentName }) : byMe;
    return offer && !ctrl.you ? fmt(bySomeone, { name: this.name(offer) }) : '';
  }

  render() {
    const ctrl = this.ctrl;
    const els = this.els;
    const s = ctrl.state;
    const busy = !!ctrl.actionPending || ctrl.connection !== 'open';
    const seatedInPlay = !!(ctrl.you && s && s.status === 'active');
    const shown = [
      this.renderDraw(seatedInPlay, busy),
      this.renderTakeback(seatedInPlay, busy),
      this.renderResignAbort(seatedInPlay, busy),
      this.renderClaim(seatedInPlay, busy),
      this.renderRematch(busy),
    ];
    show(els.panel, shown.some(Boolean));
    if (els.panel) els.panel.dataset.busy = busy ? '1' : '';
    this.keepFocus(busy);
  }

  /**
   * A pressed button hidden or disabled by what it did leaves the focus nowhere (the document's
   * body): it goes to the first of the controls that replace it once shown (this.refocus), or,
   * when none is and the page waits for nothing, to the status line.
   */
  keepFocus(busy) {
    if (!this.refocus) return;
    const usable = (node) => !!node && !node.hidden && !node.disabled && node.getClientRects().length > 0;
    const active = document.activeElement;
    if (active && active !== document.body && usable(active)) {
      this.refocus = null; // the focus is somewhere a key works: leave it there
      return;
    }
    const target = this.refocus.find(usable) || (busy ? null : this.els.status);
    if (!target) return;
    this.refocus = null;
    if (!target.matches('button, a, input, select, textarea')) target.tabIndex = -1;
    target.focus();
  }

  /** Draw offers: the opponent's to answer, one's own pending, "Offer a draw" and why not now.
   *  Returns true when it shows anything. */
  renderDraw(seatedInPlay, busy) {
    const { ctrl, els } = this;
    const s = ctrl.state;
    const you = ctrl.you;
    const offer = s && s.status === 'active' ? s.draw_offer : null;
    const theirOffer = !!(offer && you && offer !== you);
    const myOffer = !!(offer && you && offer === you);

    show(els.drawOfferBox, theirOffer);
    if (theirOffer) text(els.drawOfferText, fmt(gettext('%(name)s offers a draw'), { name: ctrl.seatName(offer) || colorName(offer) }));
    enable(els.acceptDraw, !busy);
    enable(els.declineDraw, !busy);

    // The offerer and the spectators see the offer pending.
    const pendingText = this.pendingText(
      offer,
      myOffer,
      gettext('Draw offered by you · waiting for %(name)s'),
      gettext('Draw offered by you · waiting for your opponent'),
      gettext('Draw offered by %(name)s'),
    );
    text(els.drawPending, pendingText);
    show(els.drawPending, !!pendingText);

    show(els.offerDraw, seatedInPlay && !theirOffer);
    const allowedAt = game.drawAllowedAt(s, you);
    const tooSoon = seatedInPlay && s.ply < allowedAt;
    enable(els.offerDraw, seatedInPlay && !myOffer && !tooSoon && !busy);
    let hint = '';
    if (seatedInPlay && tooSoon && !myOffer && !theirOffer) {
      // Counted in the viewer's own moves; the note goes once an offer is allowed again.
      const moves = Math.ceil((allowedAt - s.ply) / 2);
      hint = fmt(
        ngettext(
          'Your draw offer was declined. You can offer a draw again after %(count)s more move of yours.',
          'Your draw offer was declined. You can offer a draw again after %(count)s more moves of yours.',
          moves,
        ),
        { count: moves },
      );
    }
    text(els.drawHint, hint);
    show(els.drawHint, !!hint);
    if (els.offerDraw) els.offerDraw.title = hint || (myOffer ? gettext('Your offer is pending') : gettext('Offer a draw'));
    return theirOffer || !!pendingText || seatedInPlay;
  }

  /** Resignation and abort, each with its confirmation step. Returns true when it shows anything. */
  renderResignAbort(seatedInPlay, busy) {
    const { ctrl, els } = this;
    show(els.resign, seatedInPlay && !this.confirmingResign);
    enable(els.resign, !busy);
    if (!seatedInPlay) this.confirmingResign = false;
    show(els.resignBox, seatedInPlay && this.confirmingResign);
    enable(els.resignConfirm, !busy);

    const canAbort = game.abortable(ctrl.state, ctrl.you, ctrl.config.fixedPlies);
    if (!canAbort) this.confirmingAbort = false;
    show(els.abort, canAbort && !this.confirmingAbort);
    enable(els.abort, !busy);
    show(els.abortBox, canAbort && this.confirmingAbort);
    enable(els.abortConfirm, !busy);
    show(els.playActions, seatedInPlay || (canAbort && !this.confirmingAbort));
    return seatedInPlay || canAbort;
  }

  /** The player to move left: claim the win or call it a draw (players only), with the wait
   *  counted down. Returns true when it shows anything. */
  renderClaim(seatedInPlay, busy) {
    const { ctrl, els } = this;
    const claimWait = seatedInPlay ? ctrl.claims.waitMs : null;
    const canClaim = claimWait === 0;
    let claimText = '';
    if (claimWait !== null) {
      const who = ctrl.seatName(ctrl.state.turn);
      const seconds = Math.ceil(claimWait / 1000);
      if (canClaim) claimText = who ? fmt(gettext('%(name)s left the game.'), { name: who }) : gettext('Your opponent left the game.');
      else if (who) {
        claimText = fmt(gettext('%(name)s left the page: if they stay away, you may claim the game in %(seconds)s s.'), {
          name: who,
          seconds,
        });
      } else {
        claimText = fmt(gettext('Your opponent left the page: if they stay away, you may claim the game in %(seconds)s s.'), {
          seconds,
        });
      }
    }
    text(els.claimText, claimText);
    show(els.claimBox, !!claimText);
    show(els.claimActions, canClaim);
    enable(els.claimWin, canClaim && !busy);
    enable(els.claimDraw, canClaim && !busy);
    // Count the wait down on the page (the controller redraws when it is over).
    if (claimWait && !this.claimTicker) this.claimTicker = setInterval(() => this.render(), 1000);
    else if (!claimWait && this.claimTicker) {
      clearInterval(this.claimTicker);
      this.claimTicker = null;
    }
    return !!claimText;
  }

  /** After the game: the rematch, proposed or to answer. Returns true when it shows anything. */
  renderRematch(busy) {
    const { ctrl, els } = this;
    const s = ctrl.state;
    const you = ctrl.you;
    const over = ctrl.isOver;
    const canRematch = !!(you && over && game.hasOpponent(s, you) && !s.next_game);
    const proposal = canRematch ? s.rematch_offer : null;
    const theirProposal = !!(proposal && proposal !== you);
    const myProposal = !!(proposal && proposal === you);
    show(els.rematchOfferBox, theirProposal);
    if (theirProposal) {
      text(els.rematchOfferText, fmt(gettext('%(name)s wants a rematch'), { name: ctrl.seatName(proposal) || colorName(proposal) }));
    }
    enable(els.acceptRematch, !busy);
    enable(els.declineRematch, !busy);
    show(els.rematch, canRematch && !theirProposal);
    enable(els.rematch, canRematch && !myProposal && !busy);
    text(els.rematch, myProposal ? gettext('Rematch proposed…') : gettext('Rematch'));

    const opponentName = ctrl.seatName(ctrl.opponent);
    let note = '';
    if (myProposal) {
      note = opponentName
        ? fmt(gettext('Waiting for %(name)s to accept (colours swap).'), { name: opponentName })
        : gettext('Waiting for your opponent to accept (colours swap).');
    } else if (canRematch && ctrl.rematchDeclinedBy) {
      note = fmt(gettext('%(name)s declined the rematch.'), { name: this.name(ctrl.rematchDeclinedBy) });
    } else if (!you && over && s.rematch_offer && !s.next_game) {
      note = fmt(gettext('Rematch proposed by %(name)s'), { name: this.name(s.rematch_offer) });
    }
    text(els.rematchNote, note);
    show(els.rematchNote, !!note);
    show(els.rematchActions, canRematch && !theirProposal);
    return canRematch || !!note;
  }

  /**
   * Takebacks: the opponent's proposal to accept or decline, the pending proposal (for the
   * proposer and the spectators), and the "Propose takeback" button. Returns true when it shows
   * anything.
   */
  renderTakeback(seatedInPlay, busy) {
    const { ctrl, els } = this;
    const s = ctrl.state;
    const you = ctrl.you;
    const offer = s && s.status === 'active' ? s.takeback_offer : null;
    const theirs = !!(offer && you && offer !== you);
    const mine = !!(offer && you && offer === you);

    show(els.takebackOfferBox, theirs);
    if (theirs) text(els.takebackOfferText, fmt(gettext('%(name)s proposes to take back their last move'), { name: this.name(offer) }));
    enable(els.acceptTakeback, theirs && !busy);
    enable(els.declineTakeback, theirs && !busy);

    const pending = this.pendingText(
      offer,
      mine,
      gettext('Takeback proposed by you · waiting for %(name)s'),
      gettext('Takeback proposed by you · waiting for your opponent'),
      gettext('Takeback proposed by %(name)s'),
    );
    text(els.takebackPending, pending);
    show(els.takebackPending, !!pending);
    const hint = this.renderProposeTakeback(seatedInPlay, busy, mine, theirs);
    return theirs || !!pending || !!hint;
  }

  /**
   * The "Propose takeback" button, and why proposing is not possible now (too soon after a
   * declined one, or a computer that grants none). Returns that hint ('' for none).
   */
  renderProposeTakeback(seatedInPlay, busy, mine, theirs) {
    const { ctrl, els } = this;
    const s = ctrl.state;
    const level = seatedInPlay ? game.opponentComputer(s, ctrl.you) : null;
    const refuses = level !== null && level > ctrl.computerGrantsUpTo;
    const allowedAt = game.takebackAllowedAt(s, ctrl.you);
    const tooSoon = seatedInPlay && !level && s.ply < allowedAt;
    const has = game.hasTakeback(s, ctrl.you, ctrl.config.fixedPlies);
    const can = seatedInPlay && has && !refuses && !tooSoon && !mine && !theirs;
    show(els.proposeTakeback, seatedInPlay && !theirs && !refuses);
    enable(els.proposeTakeback, can && !busy);
    let hint = '';
    if (refuses) {
      hint = fmt(gettext('The computer at level %(level)s grants no takebacks (levels 1 to %(max)s do).'), {
        level,
        max: ctrl.computerGrantsUpTo,
      });
    } else if (tooSoon && !mine && !theirs) {
      const moves = Math.ceil((allowedAt - s.ply) / 2);
      hint = fmt(
        ngettext(
          'Your takeback proposal was declined. You can propose again after %(count)s more move of yours.',
          'Your takeback proposal was declined. You can propose again after %(count)s more moves of yours.',
          moves,
        ),
        { count: moves },
      );
    }
    text(els.takebackHint, hint);
    show(els.takebackHint, !!hint);
    if (els.proposeTakeback) {
      els.proposeTakeback.title =
        hint ||
        (mine
          ? gettext('Your proposal is pending')
          : level
            ? gettext('Take back your last move: the computer grants it at once')
            : gettext('Ask your opponent to let you take back your last move'));
    }
    return hint;
  }
}
