// Home page, "Play online" (#lobby): one lobby socket (/ws/lobby/), at most one seek.
// The server pairs two seeks and sends {type: "paired", url}; the page then goes to the game.
// The protocol is in docs/protocol.md ("Lobby socket"). Stable element ids for tests:
// .quick-seek[data-control] (one click seeks that control), #seek-rated and #seek-ballot (toggles the
// browser remembers), #custom-seek (the dialog: #seek-pool, #play-online), #seek-cancel, #seek-status,
// #seek-count; #seek-range shows a rated seek's rating and the range of ratings it accepts now (it
// widens while the seek waits); #seek-view-list / #seek-view-chart show the seeks as a list or as
// a chart (seekchart.js), the choice remembered by the browser.

import { GameSocket, socketUrl } from './socket.js';
import { fmt, gettext, ngettext } from './i18n.js';
import { SeekList, rangeNote, rangeView } from './seeklist.js';
import { SeekChart } from './seekchart.js';
import { loadFlag, saveFlag } from './storage.js';

const MESSAGES = {
  connecting: gettext('Connecting…'),
  ready: gettext('Press a time control to meet the next player looking for it, or play someone below.'),
  requesting: gettext('Joining the pool…'),
  seeking: gettext('Looking for an opponent…'),
  cancelling: gettext('Cancelling…'),
  cancelled: gettext('Search cancelled.'),
  paired: gettext('Opponent found! Opening the game…'),
  pairedElsewhere: gettext('You got a game in another tab, so this search stopped.'),
  reconnecting: gettext('Connection lost; reconnecting…'),
  crowded: gettext('Too many pages of this site are open in this browser; trying again…'),
  tooMany: gettext('Too many pages of this site are open in this browser: close one, then reload this page.'),
  reseeking: gettext('Connection lost; your search resumes when it is back…'),
};

/** "0:07", "1:32": the time spent searching. */
export function formatElapsed(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/**
 * The rating range a rated seek accepts after `ms` of waiting, as the server widens it
 * ({start, step, step_s, max} from the `seeking` answer): 100, then 50 more every 5 s, up to 500.
 */
export function ratingRange(range, ms) {
  if (!range) return null;
  const steps = Math.floor(Math.max(0, ms) / 1000 / Number(range.step_s || 1));
  return Math.min(Number(range.max), Number(range.start) + Number(range.step) * steps);
}

/** The localStorage key of the quick-pairing toggles ({rated, ballot}). */
export const CHOICES_KEY = 'checkers.lobby.choices';

/** The toggles remembered by this browser: {rated: bool, ballot: bool} (both false when unknown). */
export function loadChoices(storage) {
  try {
    const saved = JSON.parse((storage && storage.getItem(CHOICES_KEY)) || '{}');
    return { rated: saved.rated === true, ballot: saved.ballot === true };
  } catch (e) {
    return { rated: false, ballot: false };
  }
}

/** Remember the toggles (a browser that refuses storage simply forgets them). */
export function saveChoices(storage, choices) {
  try {
    if (storage) storage.setItem(CHOICES_KEY, JSON.stringify({ rated: !!choices.rated, ballot: !!choices.ballot }));
  } catch (e) {
    /* private mode or full: nothing to keep */
  }
}

/**
 * The pool a seek of `control` goes to with the toggles {rated, ballot}: "5+0", "5+0-ballot",
 * "5+0-rated", "5+0-ballot-rated"; untimed games are never rated.
 */
export function poolOf(control, choices) {
  let pool = control + (choices.ballot ? '-ballot' : '');
  if (choices.rated && control !== 'untimed') pool += '-rated';
  return pool;
}

/** Only a path on this site (e.g. "/g/k3n8x2pq7a/") is followed, never another origin. */
export function isSitePath(url) {
  return typeof url === 'string' && url.startsWith('/') && !url.startsWith('//') && !url.includes('\\');
}

export class Lobby {
  /**
   * @param {object} els  {root, play, cancel, status, count, countLabel, name}: the panel's elements
   * @param {object} options  {wsPath, pool, navigate(url)}
   */
  constructor(els, options) {
    this.els = els;
    this.pool = options.pool || 'untimed';
    // The quick-pairing toggles ({rated, ballot}); rated only for a signed-in player.
    this.choices = options.choices || { rated: false, ballot: false };
    // The visible seeks and counters (a SeekList), fed by `watch`; this page's own seek id.
    this.list = options.list || null;
    this.seekId = null;
    this.counts = {};
    this.navigate = options.navigate || ((url) => window.location.assign(url));
    // idle | requesting | seeking | cancelling | paired
    this.state = 'idle';
    this.connected = false;
    this.startedAt = 0;
    // A rated seek's rating and range rule ({start, step, step_s, max}), from its `seeking` answer.
    this.rated = null;
    this.timer = null;
    this.note = MESSAGES.connecting;
    this.error = false;
    this.socket = new GameSocket(
      socketUrl(options.wsPath || '/ws/lobby/'),
      {
        pool: (msg) => this.onPool(msg),
        seeking: (msg) => this.onSeeking(msg),
        cancelled: (msg) => this.onCancelled(msg),
        paired: (msg) => this.onPaired(msg),
        error: (msg) => this.onError(msg),
        seeks: (msg) => this.onSeeks(msg),
        counters: (msg) => this.list && this.list.onCounters(msg),
        pong: () => {},
      },
      { onState: (state, detail) => this.onConnection(state, detail) },
    );
    els.play.addEventListener('click', () => this.seek(els.pool ? els.pool.value : this.control()));
    els.cancel.addEventListener('click', () => this.cancel());
    for (const button of els.quick || []) {
      button.addEventListener('click', () => this.seek(button.dataset.control));
    }
  }

  /** The time control of `this.pool` ("5+0" for "5+0-ballot-rated"). */
  control() {
    return this.pool.replace(/-rated$/, '').replace(/-ballot$/, '');
  }

  /** Change the toggles (only while not seeking): the buttons' counts follow. */
  choose(choices) {
    if (this.state !== 'idle' && this.state !== 'paired') return false;
    this.choices = { ...this.choices, ...choices };
    this.pool = poolOf(this.control(), this.choices);
    this.onPool({ pool: this.pool, waiting: this.counts[this.pool] || 0 });
    this.render();
    return true;
  }

  start() {
    this.render();
    this.socket.connect();
  }

  get wanted() {
    return this.state === 'requesting' || this.state === 'seeking';
  }

  say(text, error = false) {
    this.note = text;
    this.error = error;
    this.render();
  }

  /** Play the listed seek `id` of `pool` ("5+0-rated") at once: the server pairs the two or says why not. */
  playSeek(pool, id) {
    if (this.wanted || this.state === 'paired') return;
    const message = { type: 'seek', pool: pool.replace(/-rated$/, ''), accept: id };
    if (pool.endsWith('-rated')) message.rated = true;
    if (this.els.name) message.name = this.els.name.value.trim();
    if (!this.socket.send(message)) {
      this.say(gettext('Not connected yet; try again in a moment.'), true);
      return;
    }
    this.state = 'requesting';
    this.say(MESSAGES.requesting);
  }

  /** Seek a game of time control `control` ("5+0", "untimed") with the toggles chosen. */
  seek(control) {
    if (this.wanted || this.state === 'paired') return;
    this.pool = poolOf(control || this.control(), this.choices);
    const message = { type: 'seek', pool: this.pool.replace(/-rated$/, '') };
    if (this.pool.endsWith('-rated')) message.rated = true;
    // The home form's name box, even empty (then the guest name, as on every form).
    if (this.els.name) message.name = this.els.name.value.trim();
    if (!this.socket.send(message)) {
      this.say(gettext('Not connected yet; try again in a moment.'), true);
      return;
    }
    this.state = 'requesting';
    this.say(MESSAGES.requesting);
  }

  cancel() {
    if (!this.wanted) return;
    if (this.socket.send({ type: 'cancel' })) {
      this.state = 'cancelling';
      this.say(MESSAGES.cancelling);
    } else {
      // Not connected: the server already dropped the seek with the connection.
      this.state = 'idle';
      this.stopTimer();
      this.say(MESSAGES.cancelled);
    }
  }

  onConnection(state, detail) {
    this.connected = state === 'open';
    if (detail === 'no_session' || detail === 'paired') {
      this.render();
      return;
    }
    if (detail === 'too_many_sockets' || detail === 'crowded') {
      this.say(detail === 'crowded' ? MESSAGES.crowded : MESSAGES.tooMany, detail === 'too_many_sockets');
      return;
    }
    if (state === 'open') {
      if (this.list) this.socket.send({ type: 'watch' });
      if (this.wanted) {
        // The seek went with the old connection: seek again.
        this.state = 'idle';
        this.seek();
      } else if (this.state !== 'paired') {
        const passing = [MESSAGES.connecting, MESSAGES.reconnecting, MESSAGES.crowded];
        this.say(passing.includes(this.note) ? MESSAGES.ready : this.note, this.error);
      }
    } else if (state === 'closed' && this.state !== 'paired') {
      this.say(this.wanted ? MESSAGES.reseeking : MESSAGES.reconnecting);
    } else {
      this.render();
    }
  }

  /** Choose the pool to seek in (only while not seeking); shows that pool's count. */
  choosePool(pool) {
    if (this.state !== 'idle') return false;
    this.pool = pool;
    this.onPool({ pool, waiting: this.counts[pool] || 0 });
    return true;
  }

  onPool(msg) {
    this.socket.attempts = 0; // a working connection: reset the reconnect backoff
    this.counts[msg.pool] = Number(msg.waiting) || 0;
    this.renderQuickCount(msg.pool);
    // every pool's seeks, as the quick buttons and the list show them
    const n = Object.values(this.counts).reduce((sum, count) => sum + count, 0);
    this.els.count.textContent = String(n);
    if (this.els.countLabel) this.els.countLabel.textContent = ngettext('player', 'players', n);
  }

  /** The seeks of the pools that changed, with their counts (`waiting`, as `pool` messages). */
  onSeeks(msg) {
    for (const [pool, waiting] of Object.entries(msg.waiting || {})) this.onPool({ pool, waiting });
    if (this.list) this.list.onSeeks(msg);
  }

  onSeeking(msg) {
    if (this.state !== 'requesting' && this.state !== 'seeking') return;
    this.state = 'seeking';
    this.startedAt = this.startedAt || Date.now();
    this.startTimer();
    if (msg && msg.pool === this.pool) this.onPool(msg);
    if (msg && typeof msg.rating === 'number' && msg.range) this.rated = { rating: msg.rating, range: msg.range };
    if (msg && msg.seek) {
      this.seekId = msg.seek;
      if (this.list) this.list.setMine(msg.seek);
    }
    this.say(MESSAGES.seeking);
  }

  onCancelled(msg) {
    if (this.state === 'paired') return;
    this.state = 'idle';
    this.stopTimer();
    if (msg && msg.reason === 'paired_elsewhere') {
      this.say(MESSAGES.pairedElsewhere);
      return;
    }
    this.say(MESSAGES.cancelled);
  }

  onPaired(msg) {
    if (!isSitePath(msg.url)) return;
    this.state = 'paired';
    this.stopTimer();
    this.say(MESSAGES.paired);
    this.socket.stop('paired');
    this.navigate(msg.url);
  }

  onError(msg) {
    const code = msg.code;
    if (code === 'already_seeking') {
      this.onSeeking({});
      return;
    }
    if (code === 'no_session') this.socket.stop('no_session');
    if (this.state !== 'paired') {
      this.state = 'idle';
      this.stopTimer();
    }
    let text = msg.message || gettext('Something went wrong.');
    if (code === 'bad_name') {
      text = gettext('Shorten your name above to 24 characters at most (or leave it empty to play as a guest), then press Play online.');
      if (this.els.name) this.els.name.focus();
    }
    this.say(text, true);
  }

  /** Show on the quick button of `pool` (when it is the pool the toggles choose) its waiting count. */
  renderQuickCount(pool) {
    for (const button of this.els.quick || []) {
      if (poolOf(button.dataset.control, this.choices) !== pool) continue;
      const n = this.counts[pool] || 0;
      const badge = button.querySelector('.quick-waiting');
      const text = n ? fmt(ngettext('%(n)s waiting', '%(n)s waiting', n), { n }) : '';
      if (badge && badge.textContent !== text) badge.textContent = text;
    }
  }

  startTimer() {
    if (this.timer) return;
    this.timer = setInterval(() => this.render(), 1000);
  }

  stopTimer() {
    clearInterval(this.timer);
    this.timer = null;
    this.startedAt = 0;
    this.rated = null;
    this.seekId = null;
    if (this.list) this.list.setMine(null);
  }

  render() {
    const { root, play, cancel, status } = this.els;
    const searching = this.wanted || this.state === 'cancelling';
    let text = this.note;
    if (this.state === 'seeking' && this.note === MESSAGES.seeking && this.startedAt) {
      text = `${MESSAGES.seeking} ${formatElapsed(Date.now() - this.startedAt)}`;
    }
    if (status.textContent !== text) status.textContent = text;
    if (this.els.range) {
      let range = '';
      if (this.state === 'seeking' && this.rated) {
        const wide = ratingRange(this.rated.range, Date.now() - (this.startedAt || Date.now()));
        range = fmt(gettext('Rated: your rating %(rating)s; opponents from %(low)s to %(high)s'), {
          rating: this.rated.rating, low: Math.max(0, this.rated.rating - wide), high: this.rated.rating + wide,
        });
        if (this.list) {
          const mine = { id: this.seekId, rating: this.rated.rating, waitedMs: Date.now() - (this.startedAt || Date.now()) };
          range += '. ' + rangeNote(rangeView(mine, this.rated.range, this.list.seeksOf(this.pool)));
        }
      }
      if (this.els.range.textContent !== range) this.els.range.textContent = range;
      this.els.range.hidden = !range;
    }
    status.classList.toggle('error', this.error);
    status.dataset.state = this.state === 'idle' && !this.connected ? 'connecting' : this.state;
    root.classList.toggle('searching', searching);
    play.hidden = searching || this.state === 'paired';
    play.disabled = !this.connected || this.state === 'paired';
    cancel.hidden = !searching;
    cancel.disabled = this.state === 'cancelling';
    if (this.els.pool) this.els.pool.disabled = searching || this.state === 'paired';
    for (const button of this.els.quick || []) {
      button.disabled = !this.connected || searching || this.state === 'paired';
      button.setAttribute('aria-pressed', String(searching && poolOf(button.dataset.control, this.choices) === this.pool));
      this.renderQuickCount(poolOf(button.dataset.control, this.choices));
    }
    if (this.list) this.list.setEnabled(this.connected && !searching && this.state !== 'paired');
    for (const box of [this.els.rated, this.els.ballot]) {
      if (box && !box.dataset.locked) box.disabled = searching || this.state === 'paired';
    }
  }
}

/** The seek list of the page (labels of the controls from the quick buttons and the custom dialog). */
function seekList(root) {
  const table = document.getElementById('seek-list');
  if (!table) return null;
  const labels = {};
  for (const option of document.querySelectorAll('#seek-pool option')) labels[option.value] = option.textContent;
  for (const button of root.querySelectorAll('.quick-seek[data-control]')) {
    labels[button.dataset.control] = button.querySelector('.quick-control').textContent;
  }
  return new SeekList(
    {
      table,
      body: table.querySelector('tbody'),
      empty: document.getElementById('seek-list-empty'),
      online: document.getElementById('online-text'),
      playing: document.getElementById('playing-text'),
    },
    { labels, play: () => {}, chart: seekChart(labels) },
  );
}

/** The localStorage flag of the seeks' view: "1" the chart, else the list. */
export const CHART_KEY = 'checkers.lobby.chart';

/** The chart of the seeks, with its List / Chart buttons (the choice remembered by this browser). */
function seekChart(labels) {
  const svg = document.getElementById('seek-chart');
  const view = document.getElementById('seek-chart-view');
  const table = document.getElementById('seek-table-view');
  if (!svg || !view || !table) return null;
  const buttons = Array.from(document.querySelectorAll('.seek-view-button'));
  const show = (chart) => {
    view.hidden = !chart;
    table.hidden = chart;
    for (const button of buttons) button.setAttribute('aria-pressed', String((button.dataset.view === 'chart') === chart));
  };
  for (const button of buttons) {
    button.addEventListener('click', () => {
      show(button.dataset.view === 'chart');
      saveFlag(CHART_KEY, button.dataset.view === 'chart');
    });
  }
  show(loadFlag(CHART_KEY));
  return new SeekChart({ wrap: document.getElementById('seek-chart-wrap'), svg }, { labels });
}

function boot() {
  const root = document.getElementById('lobby');
  const play = document.getElementById('play-online');
  const select = document.getElementById('seek-pool');
  const rated = document.getElementById('seek-rated');
  const ballot = document.getElementById('seek-ballot');
  const dialog = document.getElementById('custom-seek');
  if (!root || !play) return;
  const signedIn = root.dataset.signedIn === '1';
  const remembered = loadChoices(window.localStorage);
  const choices = { rated: signedIn && remembered.rated, ballot: remembered.ballot };
  if (rated) {
    rated.checked = choices.rated;
    if (!signedIn) rated.dataset.locked = '1'; // a guest's stays disabled, with the reason beside it
  }
  if (ballot) ballot.checked = choices.ballot;
  const lobby = new Lobby(
    {
      root,
      play,
      cancel: document.getElementById('seek-cancel'),
      status: document.getElementById('seek-status'),
      count: document.getElementById('seek-count'),
      countLabel: document.getElementById('seek-count-label'),
      range: document.getElementById('seek-range'),
      name: document.getElementById('id_name'),
      pool: select,
      quick: Array.from(root.querySelectorAll('.quick-seek[data-control]')),
      rated,
      ballot,
    },
    { wsPath: root.dataset.wsPath, pool: poolOf('untimed', choices), choices, list: seekList(root) },
  );
  if (lobby.list) lobby.list.play = (pool, id) => lobby.playSeek(pool, id);
  for (const box of [rated, ballot]) {
    if (!box) continue;
    box.addEventListener('change', () => {
      if (!lobby.choose({ rated: !!(rated && rated.checked), ballot: !!(ballot && ballot.checked) })) {
        box.checked = !box.checked;
        return;
      }
      saveChoices(window.localStorage, lobby.choices);
    });
  }
  if (select) {
    select.addEventListener('change', () => {
      if (!lobby.choosePool(poolOf(select.value, lobby.choices))) select.value = lobby.control();
    });
  }
  if (dialog) {
    document.getElementById('custom-seek-open').addEventListener('click', () => dialog.showModal());
    document.getElementById('custom-seek-close').addEventListener('click', () => dialog.close());
    play.addEventListener('click', () => dialog.close());
  }
  lobby.start();
  // For debugging in the console and for browser tests.
  window.checkersLobby = lobby;
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
