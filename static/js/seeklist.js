// Home page, "Play online": the seeks everyone can see (#seek-list), the counters (#online-count,
// #playing-count) and, for a rated seek, how many others wait, how many are out of its range for now
// and about when the range reaches the nearest. Fed by the lobby socket's `seeks` and `counters`
// messages (docs/protocol.md, "Lobby socket"); a click on a row's button plays that seek at once
// (`seek` with `accept`). The same seeks, when a SeekChart is given (seekchart.js), are drawn as its
// dots, whose buttons call the same `play`. Stable hooks for tests: #seek-list tbody tr[data-seek], .seek-play.

import { fmt, gettext, ngettext } from './i18n.js';

/** The time control of a pool id ("5+0" for "5+0-ballot-rated"). */
export function controlOf(pool) {
  return pool.replace(/-rated$/, '').replace(/-ballot$/, '');
}

/**
 * The rated seek's view of its pool's other seeks: {others, outside, nearest: {rating, seconds} | null}.
 * `mine` {id, rating, waitedMs}; `range` {start, step, step_s, max}; `seeks` [{id, rating, waited_ms}].
 * A pair meets when the longer wait's range covers the gap (game.lobby.pairing.in_range).
 */
export function rangeView(mine, range, seeks) {
  const others = seeks.filter((s) => s.id !== mine.id && typeof s.rating === 'number');
  const width = (ms) => Math.min(range.max, range.start + range.step * Math.floor(Math.max(0, ms) / 1000 / range.step_s));
  let outside = 0;
  let nearest = null;
  for (const s of others) {
    const gap = Math.abs(s.rating - mine.rating);
    const longer = Math.max(mine.waitedMs, Number(s.waited_ms) || 0);
    if (gap <= width(longer)) continue;
    outside += 1;
    if (gap > range.max) continue;
    const steps = Math.ceil((gap - range.start) / range.step);
    const seconds = Math.max(1, Math.ceil(steps * range.step_s - longer / 1000));
    if (!nearest || seconds < nearest.seconds) nearest = { rating: s.rating, seconds };
  }
  return { others: others.length, outside, nearest };
}

/** Put in `node` the sentence `format` (its number as %(n)s) with `n` in a <span class="count" id=`id`>. */
function counted(node, id, format, n) {
  if (!node) return;
  const [before, after = ''] = format.split('%(n)s');
  const count = document.createElement('span');
  count.className = 'count';
  count.id = id;
  count.textContent = String(n);
  node.replaceChildren(before, count, after);
}

export class SeekList {
  /**
   * @param {object} els  {table, body, empty, online, playing}
   * @param {object} options  {labels: {control: words}, play(pool, seekId), chart: a SeekChart or none}
   */
  constructor(els, options) {
    this.els = els;
    this.labels = options.labels || {};
    this.play = options.play;
    this.pools = {};
    this.mine = null; // this page's own seek id, shown without a button
    // The chart's dots play a seek through this list's `play`, as its rows do (set later by the page).
    this.chart = options.chart || null;
    if (this.chart) this.chart.play = (pool, id) => this.play(pool, id);
  }

  onSeeks(msg) {
    for (const [pool, seeks] of Object.entries(msg.pools || {})) {
      if (Array.isArray(seeks) && seeks.length) this.pools[pool] = seeks;
      else delete this.pools[pool];
    }
    this.render();
  }

  onCounters(msg) {
    const online = Number(msg.online) || 0;
    const playing = Number(msg.playing) || 0;
    counted(this.els.online, 'online-count', ngettext('%(n)s online', '%(n)s online', online), online);
    counted(this.els.playing, 'playing-count',
      ngettext('%(n)s game in play', '%(n)s games in play', playing), playing);
  }

  /** The seeks waiting in `pool` (what the last message said). */
  seeksOf(pool) {
    return this.pools[pool] || [];
  }

  setMine(id) {
    this.mine = id || null;
    this.render();
  }

  /** Whether the buttons may be pressed (connected and not seeking). */
  setEnabled(enabled) {
    this.enabled = enabled;
    for (const button of this.els.body.querySelectorAll('.seek-play')) button.disabled = !enabled;
    if (this.chart) this.chart.setEnabled(enabled);
  }

  row(pool, seek) {
    const tr = document.createElement('tr');
    tr.dataset.seek = seek.id;
    tr.dataset.pool = pool;
    const control = this.labels[controlOf(pool)] || controlOf(pool);
    const kind = [pool.endsWith('-rated') ? gettext('Rated') : gettext('Casual'),
      pool.includes('-ballot') ? gettext('3-move ballot') : gettext('Free start')].join(' · ');
    for (const text of [seek.name, typeof seek.rating === 'number' ? String(seek.rating) : '–']) {
      const td = document.createElement('td');
      td.textContent = text;
      tr.append(td);
    }
    const game = document.createElement('td');
    const small = document.createElement('span');
    small.className = 'seek-kind';
    small.textContent = kind;
    game.append(control, ' ', small);
    tr.append(game);
    const td = document.createElement('td');
    if (seek.id === this.mine) {
      td.textContent = gettext('You');
    } else {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'button seek-play';
      button.textContent = gettext('Play');
      button.setAttribute('aria-label', fmt(gettext('Play %(name)s, %(control)s'), { name: seek.name, control: `${control}, ${kind}` }));
      button.disabled = !this.enabled;
      button.addEventListener('click', () => this.play(pool, seek.id));
      td.append(button);
    }
    tr.append(td);
    return tr;
  }

  render() {
    const rows = [];
    const entries = [];
    const order = Object.keys(this.labels);
    const pools = Object.keys(this.pools).sort(
      (a, b) => order.indexOf(controlOf(a)) - order.indexOf(controlOf(b)) || a.localeCompare(b));
    for (const pool of pools) {
      for (const seek of this.pools[pool]) {
        rows.push(this.row(pool, seek));
        entries.push({ pool, seek });
      }
    }
    this.els.body.replaceChildren(...rows);
    this.els.table.hidden = rows.length === 0;
    if (this.els.empty) this.els.empty.hidden = rows.length !== 0;
    if (this.chart) this.chart.render(entries, this.mine);
  }
}

/** The words under a rated seek: others waiting, out of range for now, when the range reaches one. */
export function rangeNote(view) {
  if (!view.others) return gettext('Nobody else is waiting for this game yet.');
  let text = fmt(ngettext('%(n)s other player waiting', '%(n)s other players waiting', view.others), { n: view.others });
  if (view.outside) {
    text += '; ' + fmt(ngettext('%(n)s outside your range for now', '%(n)s outside your range for now', view.outside), { n: view.outside });
    if (view.nearest) {
      text += '; ' + fmt(gettext('a player rated %(rating)s comes in range in about %(seconds)s s'), view.nearest);
    }
  }
  return text + '.';
}
