// Home page, "Play online" (#lobby): one lobby socket (/ws/lobby/), at most one seek.
// The server pairs two seeks and sends {type: "paired", url}; the page then goes to the game.
// The protocol is in docs/protocol.md ("Lobby socket"). Stable element ids for tests:
// #play-online, #seek-cancel, #seek-status, #seek-count; #seek-range shows a rated seek's rating
// and the range of ratings it accepts now (it widens while the seek waits).

import { GameSocket, socketUrl } from './socket.js';
import { fmt, gettext, ngettext } from './i18n.js';

const MESSAGES = {
  connecting: gettext('Connecting…'),
  ready: gettext('Press Play online to meet the next player looking for a game.'),
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
        pong: () => {},
      },
      { onState: (state, detail) => this.onConnection(state, detail) },
    );
    els.play.addEventListener('click', () => this.seek());
    els.cancel.addEventListener('click', () => this.cancel());
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

  seek() {
    if (this.wanted || this.state === 'paired') return;
    const message = { type: 'seek', pool: this.pool };
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
    if (msg.pool !== this.pool) return;
    const n = Number(msg.waiting) || 0;
    this.els.count.textContent = String(n);
    if (this.els.countLabel) this.els.countLabel.textContent = ngettext('player', 'players', n);
  }

  onSeeking(msg) {
    if (this.state !== 'requesting' && this.state !== 'seeking') return;
    this.state = 'seeking';
    this.startedAt = this.startedAt || Date.now();
    this.startTimer();
    if (msg && msg.pool === this.pool) this.onPool(msg);
    if (msg && typeof msg.rating === 'number' && msg.range) this.rated = { rating: msg.rating, range: msg.range };
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

  startTimer() {
    if (this.timer) return;
    this.timer = setInterval(() => this.render(), 1000);
  }

  stopTimer() {
    clearInterval(this.timer);
    this.timer = null;
    this.startedAt = 0;
    this.rated = null;
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
  }
}

function boot() {
  const root = document.getElementById('lobby');
  const play = document.getElementById('play-online');
  const select = document.getElementById('seek-pool');
  if (!root || !play) return;
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
    },
    { wsPath: root.dataset.wsPath, pool: (select && select.value) || root.dataset.pool },
  );
  if (select) {
    select.addEventListener('change', () => {
      if (!lobby.choosePool(select.value)) select.value = lobby.pool;
    });
  }
  lobby.start();
  // For debugging in the console and for browser tests.
  window.checkersLobby = lobby;
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
