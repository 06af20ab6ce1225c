// Home page, "Play online": the seeks as a chart (#seek-chart), rating up the side, time control
// along the bottom (columns ordered by how long a game lasts: 1+0 first, days then untimed last),
// as lichess's lobby draws them. Fed by the same `seeks` messages as the list (SeekList hands it
// every seek it shows); one dot per seek: filled when rated, hollow when casual, a diamond for a
// 3-move ballot, a circle for a free start. A guest's seek has no rating: its dot sits on the
// band under the axis (marked "–", as the list marks a missing rating; the legend names it). Each other player's dot is a button named like
// "ann, 1520, 5+3, rated" that plays that seek exactly as the list's Play button does; one's own
// dot is drawn without a button. Built with DOM calls (the CSP allows no inline script or style):
// the look is site.css's .seek-chart rules. Stable hooks for tests: #seek-chart .seek-dot[data-seek].

import { gettext } from './i18n.js';
import { controlOf } from './seeklist.js';

const SVG = 'http://www.w3.org/2000/svg';

function node(name, attrs, className) {
  const el = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  if (className) el.setAttribute('class', className);
  return el;
}

/**
 * About how long a game of `control` lasts, in seconds, to order the columns: minutes × 60 plus
 * 40 × the increment ("5+3" → 420), a day per day ("1d" → 86400), untimed (or unknown) last.
 */
export function durationOf(control) {
  const live = /^(\d+)\+(\d+)$/.exec(control);
  if (live) return Number(live[1]) * 60 + 40 * Number(live[2]);
  const days = /^(\d+)d$/.exec(control);
  if (days) return Number(days[1]) * 86400;
  return Infinity;
}

/** The controls of `labels` ({control: words}) ordered from the shortest game to the longest. */
export function columnsOf(labels) {
  const order = Object.keys(labels);
  return order.slice().sort((a, b) => durationOf(a) - durationOf(b) || order.indexOf(a) - order.indexOf(b));
}

/**
 * The rating axis for `ratings` (numbers): {low, high, step} in whole points, in hundreds, at least
 * 1200 to 1800 (the new player's 1500 in the middle), a tick every 100 or 200 or 500.
 */
export function ratingAxis(ratings) {
  const low = Math.min(1200, Math.floor((Math.min(...ratings, Infinity) - 50) / 100) * 100);
  const high = Math.max(1800, Math.ceil((Math.max(...ratings, -Infinity) + 50) / 100) * 100);
  const span = high - low;
  return { low, high, step: span <= 800 ? 100 : span <= 1600 ? 200 : 500 };
}

/** "rated" or "casual", then "3-move ballot" or nothing: the kind of a seek of `pool`, as a dot names it. */
function kindWords(pool) {
  const words = [pool.endsWith('-rated') ? gettext('rated') : gettext('casual')];
  if (pool.includes('-ballot')) words.push(gettext('3-move ballot'));
  return words;
}

/** The name of the dot of `seek` in `pool` shown as `control`: "ann, 1520, 5+3, rated". */
export function dotName(seek, pool, control) {
  const rating = typeof seek.rating === 'number' ? String(seek.rating) : gettext('no rating');
  return [seek.name, rating, control, ...kindWords(pool)].join(', ');
}

export class SeekChart {
  /**
   * @param {object} els  {wrap, svg}: the chart's box (hidden with the list) and its <svg>
   * @param {object} options  {labels: {control: words}, play(pool, seekId)}
   */
  constructor(els, options) {
    this.els = els;
    this.labels = options.labels || {};
    this.play = options.play || (() => {});
    this.entries = [];
    this.mine = null;
    this.enabled = false;
    this.width = 0;
    if (typeof ResizeObserver === 'function') {
      new ResizeObserver(() => {
        const width = Math.round(this.els.wrap.clientWidth);
        if (width && width !== this.width) this.draw();
      }).observe(els.wrap);
    }
  }

  /** Show `entries` ([{pool, seek}]), `mine` (this page's own seek id or null). */
  render(entries, mine) {
    this.entries = entries;
    this.mine = mine;
    this.els.wrap.hidden = entries.length === 0;
    this.draw();
  }

  /** Whether the dots may be pressed (connected and not seeking). */
  setEnabled(enabled) {
    this.enabled = enabled;
    for (const dot of this.els.svg.querySelectorAll('.seek-dot[role="button"]')) {
      dot.setAttribute('aria-disabled', String(!enabled));
    }
  }

  activate(pool, id) {
    if (this.enabled) this.play(pool, id);
  }

  /** The chart's frame: sizes in CSS pixels (the viewBox follows the box's width, so text keeps its size). */
  frame() {
    const width = Math.max(280, Math.round(this.els.wrap.clientWidth) || 560);
    const columns = columnsOf(this.labels);
    const left = 44;
    const right = 8;
    const colW = (width - left - right) / Math.max(1, columns.length);
    const stagger = colW < 42; // narrow columns: the control names on two rows
    const height = width < 520 || window.innerHeight < 500 ? 220 : 260;
    const bottom = stagger ? 36 : 22;
    const band = 26; // the "No rating" band, under the rated area
    return { width, height, left, right, columns, colW, stagger, top: 10, axisY: height - bottom - band, bandY: height - bottom };
  }

  draw() {
    const f = this.frame();
    this.width = f.width;
    const svg = this.els.svg;
    const focused = svg.querySelector('.seek-dot:focus');
    const refocus = focused ? focused.dataset.seek : null;
    svg.setAttribute('viewBox', `0 0 ${f.width} ${f.height}`);
    svg.setAttribute('width', String(f.width));
    svg.setAttribute('height', String(f.height));
    const axis = ratingAxis(this.entries.map((e) => e.seek.rating).filter((r) => typeof r === 'number'));
    const y = (rating) => f.axisY - ((rating - axis.low) / (axis.high - axis.low)) * (f.axisY - f.top);
    const x = (i) => f.left + f.colW * (i + 0.5);
    const parts = [this.grid(f, axis, y, x)];
    const perColumn = {};
    for (const { pool, seek } of this.entries) {
      const control = controlOf(pool);
      let i = f.columns.indexOf(control);
      if (i < 0) i = f.columns.length - 1;
      const k = (perColumn[i] = (perColumn[i] || 0) + 1) - 1;
      const shift = [0, -1, 1][k % 3] * Math.min(9, f.colW / 3);
      const cy = typeof seek.rating === 'number' ? y(Math.max(axis.low, Math.min(axis.high, seek.rating)))
        : (f.axisY + f.bandY) / 2;
      parts.push(this.dot(pool, seek, x(i) + shift, cy));
    }
    svg.replaceChildren(...parts);
    if (refocus) {
      const again = svg.querySelector(`.seek-dot[data-seek="${CSS.escape(refocus)}"]`);
      if (again) again.focus();
    }
  }

  /** The axes, drawn for the eye only (the dots carry the words). */
  grid(f, axis, y, x) {
    const g = node('g', { 'aria-hidden': 'true' }, 'seek-chart-grid');
    for (let r = axis.low; r <= axis.high; r += axis.step) {
      g.append(node('line', { x1: f.left, x2: f.width - f.right, y1: y(r), y2: y(r) }, 'seek-chart-rule'));
      const label = node('text', { x: f.left - 6, y: y(r) + 4, 'text-anchor': 'end' });
      label.textContent = String(r);
      g.append(label);
    }
    g.append(node('rect', { x: f.left, y: f.axisY + 4, width: f.width - f.left - f.right, height: f.bandY - f.axisY - 6 }, 'seek-chart-band'));
    const none = node('text', { x: f.left - 6, y: (f.axisY + f.bandY) / 2 + 4, 'text-anchor': 'end' }, 'seek-chart-band-label');
    none.textContent = '–'; // as the list shows a missing rating; the legend says what the band is
    g.append(none);
    f.columns.forEach((control, i) => {
      const label = node('text', { x: x(i), y: f.bandY + 14 + (f.stagger && i % 2 ? 14 : 0), 'text-anchor': 'middle' });
      label.textContent = control === 'untimed' ? '∞' : control;
      g.append(label);
    });
    return g;
  }

  /** One seek's dot: a button (another player's seek) or a plain mark (one's own). */
  dot(pool, seek, cx, cy) {
    const control = this.labels[controlOf(pool)] || controlOf(pool);
    const mine = seek.id === this.mine;
    const classes = ['seek-dot', pool.endsWith('-rated') ? 'rated' : 'casual'];
    if (pool.includes('-ballot')) classes.push('ballot');
    if (mine) classes.push('mine');
    const g = node('g', { 'data-seek': seek.id, 'data-pool': pool }, classes.join(' '));
    const name = dotName(seek, pool, control);
    const title = node('title', {});
    title.textContent = mine ? `${gettext('You')}: ${name}` : name;
    g.append(title, node('circle', { cx, cy, r: 12 }, 'seek-dot-hit'));
    if (pool.includes('-ballot')) {
      g.append(node('rect', { x: cx - 5.5, y: cy - 5.5, width: 11, height: 11, transform: `rotate(45 ${cx} ${cy})` }, 'seek-dot-mark'));
    } else {
      g.append(node('circle', { cx, cy, r: 6.5 }, 'seek-dot-mark'));
    }
    if (mine) {
      g.setAttribute('role', 'img');
      g.setAttribute('aria-label', `${gettext('You')}: ${name}`);
      return g;
    }
    g.setAttribute('role', 'button');
    g.setAttribute('tabindex', '0');
    g.setAttribute('aria-label', name);
    g.setAttribute('aria-disabled', String(!this.enabled));
    g.addEventListener('click', () => this.activate(pool, seek.id));
    g.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter' && event.key !== ' ') return;
      event.preventDefault();
      this.activate(pool, seek.id);
    });
    return g;
  }
}
