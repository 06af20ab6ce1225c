// TV (templates/tv.html, tv_empty.html): the page shows the game its channel chose, through the game
// page's own views and spectator socket (main.js). The page is loaded once: choosing a channel, and
// the channel's next game, are shown in place. The page asks the server for the channel's page
// (the HTML a reload would get), puts its game part in place of the one shown (the channels' bar
// stays, so the focus stays on the channel chosen) and builds the game page again (main.js
// mountGame, learning/review.js mountReview): the socket of the game shown before closes, the new
// game's opens. A channel chosen is a new entry of the browser's history (history.pushState): Back
// and Forward show the channel of that entry in place, and the address is always the channel's.
// When the game ends, the result stays shown a few seconds, then the channel's next game is asked
// for with ?after=<the game that ended>: the server never shows that game again (docs/people.md,
// "TV"), and the address stays the channel's. With no game on the channel, the page asks
// GET /tv/game every EMPTY_POLL_MS and shows the channel once one is in play. Whatever the page
// cannot show in place (the server cannot be reached, a page other than TV's, the viewer's own
// arena game, which needs its page's own scripts) is opened as a page of its own.

import { gettext } from './i18n.js';
import { mountGame } from './main.js';
import { mountReview } from './learning/review.js';
import { EMPTY_POLL_MS, JITTER_MS, PAUSE_MS } from './tv-times.js';

const WATCH_MS = 500;

/** The channel's page, never showing `after` (a game id) when given. */
export function channelUrl(pageUrl, after) {
  return after ? `${pageUrl}?after=${encodeURIComponent(after)}` : pageUrl;
}

/** The channel's game as the server picks it now (null: none in play), never `after`. */
async function currentGame(bar, after) {
  const query = new URLSearchParams({ channel: bar.dataset.channel });
  if (after) query.set('after', after);
  const response = await fetch(`${bar.dataset.gameUrl}?${query}`, { headers: { Accept: 'application/json' }, cache: 'no-store' });
  if (!response.ok) throw new Error(`TV: ${response.status}`);
  const body = await response.json();
  return body.game || null;
}

/** The nodes after `node` among its siblings. */
function following(node) {
  const nodes = [];
  for (let next = node.nextSibling; next; next = next.nextSibling) nodes.push(next);
  return nodes;
}

class Tv {
  constructor(bar) {
    this.bar = bar;
    this.timer = null;
    this.asked = 0; // the last page asked for: an answer to an earlier one is dropped
    bar.addEventListener('click', (event) => this.onClick(event));
    window.addEventListener('popstate', (event) => {
      if (event.state && event.state.tv) this.open(window.location.pathname + window.location.search, null);
    });
    window.history.replaceState({ tv: true }, '', window.location.href);
    this.follow();
  }

  /** A channel's tab clicked (a plain click): its page shown in place, a new entry of the history. */
  onClick(event) {
    const tab = event.target instanceof Element ? event.target.closest('a.tv-channel') : null;
    if (!tab || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    this.open(tab.href, tab.getAttribute('aria-current') === 'page' ? 'replace' : 'push');
  }

  stopTimer() {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    this.timer = null;
  }

  /** Watch what the bar says is shown: a game, until it ends; else wait for one. */
  follow() {
    this.stopTimer();
    if (this.bar.dataset.game) this.followGame(this.bar.dataset.game);
    else this.waitForGame();
  }

  /** Once the game `shown` is over (the game page's controller says so), show the channel's next. */
  followGame(shown) {
    this.timer = setInterval(() => {
      const ctrl = window.checkers && window.checkers.ctrl;
      if (!ctrl || !ctrl.state || ctrl.state.id !== shown || !ctrl.isOver) return;
      this.stopTimer();
      const status = document.getElementById('tv-status');
      if (status) status.textContent = gettext('This game is over: the next one starts in a moment.');
      this.timer = setTimeout(() => this.open(channelUrl(this.bar.dataset.pageUrl, shown), 'replace'),
        PAUSE_MS + Math.random() * JITTER_MS);
    }, WATCH_MS);
  }

  /** No game shown: ask for one now and then, and show the channel once there is. */
  waitForGame() {
    const poll = async () => {
      try {
        if (await currentGame(this.bar, null)) {
          this.open(this.bar.dataset.pageUrl, 'replace');
          return;
        }
      } catch (err) {
        /* asked again below */
      }
      this.timer = setTimeout(poll, EMPTY_POLL_MS);
    };
    this.timer = setTimeout(poll, EMPTY_POLL_MS);
  }

  /**
   * Show the TV page at `url` in place. `history`: 'push' (a channel chosen: a new entry), 'replace'
   * (the channel's next game: the same entry) or null (Back or Forward: the browser moved already).
   * The address becomes the channel's page (never ?after=).
   */
  async open(url, history) {
    const asked = ++this.asked;
    this.stopTimer();
    let page = null;
    try {
      const response = await fetch(url, { headers: { Accept: 'text/html' }, credentials: 'same-origin', cache: 'no-store' });
      if (response.ok) page = new DOMParser().parseFromString(await response.text(), 'text/html');
    } catch (err) {
      page = null;
    }
    if (asked !== this.asked) return;
    const bar = page && page.getElementById('tv-bar');
    if (!bar || page.querySelector('#arena-panel[data-ws-path]')) {
      window.location.assign(url);
      return;
    }
    if (history === 'push') window.history.pushState({ tv: true }, '', bar.dataset.pageUrl);
    else if (history === 'replace') window.history.replaceState({ tv: true }, '', bar.dataset.pageUrl);
    this.show(page, bar);
    mountGame();
    mountReview();
    this.follow();
  }

  /** Put `page`'s TV part in place of this one's: its title, bar (in place) and what follows the bar. */
  show(page, bar) {
    document.title = page.title;
    document.body.className = page.body.className;
    const have = new Set([...document.querySelectorAll('link[rel="stylesheet"]')].map((link) => link.getAttribute('href')));
    for (const link of page.querySelectorAll('#content link[rel="stylesheet"]')) {
      if (!have.has(link.getAttribute('href'))) document.head.append(link);
    }
    for (const key of ['channel', 'pageUrl', 'game']) {
      if (bar.dataset[key] === undefined) delete this.bar.dataset[key];
      else this.bar.dataset[key] = bar.dataset[key];
    }
    this.bar.querySelector('#tv-title').textContent = bar.querySelector('#tv-title').textContent;
    for (const tab of this.bar.querySelectorAll('.tv-channel')) {
      if (tab.dataset.channel === bar.dataset.channel) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    document.getElementById('tv-status').textContent = '';
    for (const node of following(this.bar)) node.remove();
    this.bar.after(...following(bar));
  }
}

function start() {
  const bar = document.getElementById('tv-bar');
  if (bar) new Tv(bar);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
