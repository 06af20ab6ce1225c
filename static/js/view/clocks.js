// The clocks next to the player bars (#clock-top, #clock-bottom), the time control
// label (#time-control) and, in a correspondence game, the mover's "Time left to
// answer" (#answer-time). Between the server's events the running clock counts
// down here; at zero the controller asks the server, which decides.

import { BLACK, opposite } from '../fen.js';
import { formatClock, firstMoveSeconds, controlLabel, lowTimeMs } from '../clock.js';
import { gettext, interpolate } from '../i18n.js';

const fmt = (format, values) => interpolate(format, values, true);

const TICK_MS = 100;
const LOW_CORRESPONDENCE_MS = 3_600_000; // a correspondence clock under an hour turns red

function text(node, value) {
  if (node && node.textContent !== value) node.textContent = value;
}

function show(node, visible) {
  if (node && node.hidden === visible) node.hidden = !visible;
}

function setData(node, key, value) {
  if (node && node.dataset[key] !== value) node.dataset[key] = value;
}

export class ClockView {
  /**
   * @param {object} els  {clockTop, clockBottom, timeControl, answerTime}
   * @param {Ctrl} ctrl
   */
  constructor(els, ctrl) {
    this.els = els;
    this.ctrl = ctrl;
    this.ticker = null;
  }

  render() {
    const ctrl = this.ctrl;
    const now = ctrl.clockNow();
    const bottom = ctrl.orientation;
    this.renderClock(this.els.clockBottom, bottom, now);
    this.renderClock(this.els.clockTop, opposite(bottom), now);
    this.renderLabel(now);
    this.renderAnswerTime(now);
    this.renderFirstMoveNote(now);
    const ticking = !!(now && (now.running || now.firstMove !== null));
    if (ticking) {
      if (!this.ticker) this.ticker = setInterval(() => this.tick(), TICK_MS);
    } else if (this.ticker) {
      clearInterval(this.ticker);
      this.ticker = null;
    }
  }

  /** The page shows another game now: the countdown stops. */
  stop() {
    clearInterval(this.ticker);
    this.ticker = null;
  }

  tick() {
    this.render();
    this.ctrl.clockExpired(); // sends clock_check only when a countdown is at zero
  }

  renderClock(node, color, now) {
    if (!node) return;
    if (!now) {
      show(node, false);
      return;
    }
    const s = this.ctrl.state;
    const running = now.running === color;
    const firstMove = now.firstMove !== null && s.turn === color;
    const ms = now[color];
    let value;
    if (firstMove) value = fmt(gettext('first move: %(seconds)s s'), { seconds: firstMoveSeconds(now.firstMove) });
    else value = formatClock(ms, now.correspondence);
    text(node, value);
    setData(node, 'seat', color);
    setData(node, 'running', running ? 'true' : 'false');
    setData(node, 'ms', String(Math.round(ms)));
    node.classList.toggle('first-move', firstMove);
    node.classList.toggle('correspondence', now.correspondence);
    const mark = lowTimeMs(s.clock); // 10 % of the start time or 20 s, whichever is more (clock.js)
    const low = running && mark !== null && ms < mark;
    node.classList.toggle('low', low);
    node.classList.toggle('out', running && ms <= 0);
    let title = color === BLACK ? gettext("Black's clock") : gettext("White's clock");
    if (running) title += ` ${gettext('(running)')}`;
    if (node.title !== title) node.title = title;
    show(node, true);
  }

  renderLabel(now) {
    const node = this.els.timeControl;
    if (!node) return;
    const s = this.ctrl.state;
    if (!s) {
      show(node, false);
      return;
    }
    const label = now ? controlLabel(s.clock.control, now.label) : gettext('Untimed');
    // A rated game says so beside its control ("5+0 · Rated"), as the players chose it.
    text(node, s.rated ? `${label} · ${gettext('Rated')}` : label);
    setData(node, 'rated', s.rated ? 'true' : 'false');
    node.title = now ? fmt(gettext('Time control: %(control)s'), { control: label }) : gettext('No clocks in this game');
    setData(node, 'control', s.clock ? String(s.clock.control || '') : 'untimed');
    show(node, true);
  }

  /** A live game's first move: the player to move sees, in words, how long is left before the game is aborted. */
  renderFirstMoveNote(now) {
    const node = this.els.firstMoveNote;
    if (!node) return;
    const ctrl = this.ctrl;
    const mine = !!(now && now.firstMove !== null && ctrl.isMyTurn);
    if (mine) {
      const seconds = firstMoveSeconds(now.firstMove);
      text(node, fmt(gettext('Make your first move within %(seconds)s\u00a0s or the game is aborted.'), { seconds }));
      setData(node, 'seconds', String(seconds));
      node.classList.toggle('urgent', seconds <= 10);
    }
    show(node, mine);
  }

  /** Correspondence: the player to move sees how long is left for this move. */
  renderAnswerTime(now) {
    const node = this.els.answerTime;
    if (!node) return;
    const ctrl = this.ctrl;
    const mine = !!(now && now.correspondence && ctrl.isMyTurn && now.running === ctrl.you);
    if (mine) {
      text(node, fmt(gettext('Time left to answer: %(time)s'), { time: formatClock(now[ctrl.you], true) }));
      node.classList.toggle('low', now[ctrl.you] < LOW_CORRESPONDENCE_MS);
    }
    show(node, mine);
  }
}
