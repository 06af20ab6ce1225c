// The home page's TV (templates/tv_mini.html): the top channel's game drawn small, kept live by the
// game's spectator socket (the game page's own, socket.js) while the board is on screen: each
// message's state redraws it (scrolled away, the socket closes; back on screen, it opens again and its
// snapshot brings the board up to date). When the game ends, the board asks GET /tv/game for the
// channel's next game (never the one that ended) and watches that one; with none in play it asks again
// every EMPTY_POLL_MS (docs/people.md, "TV").

import { GameSocket, socketUrl } from './socket.js';
import { parseFen, BLACK, WHITE } from './fen.js';
import { EMPTY_POLL_MS, PAUSE_MS, JITTER_MS } from './tv-times.js';
import { gettext, interpolate } from './i18n.js';

const SVG = 'http://www.w3.org/2000/svg';

/** Where square `n` (1-32) is drawn, White at the bottom: {x, y}, columns and rows 0-7 from the top left. */
export function squareAt(n) {
  const row = Math.floor((n - 1) / 4);
  return { x: 2 * ((n - 1) % 4) + (row % 2 === 0 ? 1 : 0), y: row };
}

function shape(name, attrs) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

/** Draw the position `fen` in `svg` (viewBox 0 0 8 8): the squares, then each piece. */
export function drawBoard(svg, fen) {
  const { pieces } = parseFen(fen);
  const nodes = [];
  for (let y = 0; y < 8; y++) {
    for (let x = 0; x < 8; x++) {
      nodes.push(shape('rect', { class: `tv-sq ${(x + y) % 2 ? 'dark' : 'light'}`, x, y, width: 1, height: 1 }));
    }
  }
  for (const [n, piece] of pieces) {
    const { x, y } = squareAt(n);
    const color = piece.color === BLACK ? 'black' : 'white';
    nodes.push(shape('circle', { class: `tv-piece ${color}`, cx: x + 0.5, cy: y + 0.5, r: 0.38 }));
    if (piece.king) nodes.push(shape('circle', { class: 'tv-king', cx: x + 0.5, cy: y + 0.5, r: 0.16 }));
  }
  svg.replaceChildren(...nodes);
}

/** A seat as shown: "alice (1512)", its name alone in a casual game, the computer's in the page's
 *  language (as the game page words it: ctrl.js, seatName). */
export function seatText(seat) {
  if (seat && seat.computer) return interpolate(gettext('Computer (level %(level)s)'), { level: seat.computer }, true);
  if (!seat || !seat.name) return '?';
  return typeof seat.rating === 'number' ? `${seat.name} (${seat.rating}${seat.provisional ? '?' : ''})` : seat.name;
}

class MiniTv {
  constructor(root) {
    this.root = root;
    this.svg = document.getElementById('tv-mini-board');
    this.link = document.getElementById('tv-mini-board-link');
    this.empty = document.getElementById('tv-mini-empty');
    this.names = { [BLACK]: document.getElementById('tv-mini-black'), [WHITE]: document.getElementById('tv-mini-white') };
    this.socket = null;
    this.gameId = null;
    this.onScreen = false;
    new IntersectionObserver((entries) => {
      this.onScreen = entries.some((entry) => entry.isIntersecting);
      this.listen();
    }).observe(root);
  }

  /** Watch game `gameId`: its socket is open while the board is on screen. */
  watch(gameId) {
    this.gameId = gameId;
    this.root.dataset.game = gameId;
    this.listen();
  }

  /** Open the game's socket when the board is on screen and none is open; close it when it is not. */
  listen() {
    if (!this.gameId || (this.onScreen && this.socket)) return;
    if (!this.onScreen) {
      if (this.socket) this.socket.stop();
      this.socket = null;
      return;
    }
    const onState = (msg) => this.show(msg.state);
    const ignore = () => {};
    this.socket = new GameSocket(socketUrl(`/ws/game/${encodeURIComponent(this.gameId)}/`), {
      snapshot: onState, move: onState, seats: onState, update: onState, takeback: onState,
      audience: ignore, chat: ignore, forecast: ignore, link: ignore, error: ignore, pong: ignore, synced: ignore,
    });
    this.socket.connect();
  }

  show(state) {
    if (!state || state.id !== this.gameId) return;
    try {
      drawBoard(this.svg, state.fen);
    } catch (err) {
      return;
    }
    const seats = state.seats || {};
    for (const color of [BLACK, WHITE]) this.names[color].textContent = seatText(seats[color]);
    this.link.hidden = false;
    this.empty.hidden = true;
    if (state.status === 'finished' || state.status === 'aborted') this.next(state.id, PAUSE_MS + Math.random() * JITTER_MS);
  }

  /** Stop watching the game `after` (ended) and, `delayMs` later, watch the channel's next game. */
  next(after, delayMs) {
    if (this.socket) this.socket.stop();
    this.socket = null;
    this.gameId = null;
    setTimeout(async () => {
      let game = null;
      try {
        const query = new URLSearchParams({ channel: 'top' });
        if (after) query.set('after', after);
        const response = await fetch(`${this.root.dataset.gameUrl}?${query}`, { headers: { Accept: 'application/json' }, cache: 'no-store' });
        if (response.ok) game = (await response.json()).game;
      } catch (err) {
        /* asked again below */
      }
      if (game) {
        this.watch(game.id);
        return;
      }
      this.link.hidden = true;
      this.empty.hidden = false;
      this.next(after, EMPTY_POLL_MS);
    }, delayMs);
  }
}

function start() {
  const root = document.getElementById('tv-mini');
  if (!root) return;
  const tv = new MiniTv(root);
  if (root.dataset.game) tv.watch(root.dataset.game);
  else tv.next(null, EMPTY_POLL_MS);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
