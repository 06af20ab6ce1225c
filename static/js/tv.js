// TV (templates/tv.html, tv_empty.html): the page shows the game its channel chose, through the game
// page's own views and spectator socket (main.js). When that game ends, the result stays shown a few
// seconds, then the page opens the channel again with ?after=<the game that ended>: the server never
// shows that game again (docs/people.md, "TV"). With no game on the channel, the page asks
// GET /tv/game every EMPTY_POLL_MS and opens the channel once one is in play.

import { gettext } from './i18n.js';

/** Seconds the ended game stays shown before the next one, plus up to JITTER_MS at random: the
 *  watchers of one channel do not all ask at the same moment. */
export const PAUSE_MS = 2000;
export const JITTER_MS = 1500;
export const EMPTY_POLL_MS = 10000;
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

/** No game shown: ask for one now and then, and open the channel once there is. */
function waitForGame(bar) {
  const poll = async () => {
    try {
      if (await currentGame(bar, null)) {
        window.location.replace(bar.dataset.pageUrl);
        return;
      }
    } catch (err) {
      /* asked again below */
    }
    setTimeout(poll, EMPTY_POLL_MS);
  };
  setTimeout(poll, EMPTY_POLL_MS);
}

/** A game shown: once it is over (the game page's controller says so), go to the channel's next. */
function followGame(bar) {
  const status = document.getElementById('tv-status');
  const shown = bar.dataset.game;
  const timer = setInterval(() => {
    const ctrl = window.checkers && window.checkers.ctrl;
    if (!ctrl || !ctrl.state || ctrl.state.id !== shown || !ctrl.isOver) return;
    clearInterval(timer);
    if (status) status.textContent = gettext('This game is over: the next one starts in a moment.');
    setTimeout(() => window.location.replace(channelUrl(bar.dataset.pageUrl, shown)), PAUSE_MS + Math.random() * JITTER_MS);
  }, WATCH_MS);
}

function start() {
  const bar = document.getElementById('tv-bar');
  if (!bar) return;
  if (bar.dataset.game) followGame(bar);
  else waitForGame(bar);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
