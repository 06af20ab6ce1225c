// What a screen reader hears on the game page: one polite live region (#announcer, visually
// hidden) says every move in words ("White 23x14x5, captures 18 and 9", "Black 11-15"), draw
// offers and answers, takeback proposals and answers, and the end of the game. The page's other
// live regions keep their own jobs (whose turn, the chat's log).
//
// `announce(text)` is for any part of the page with news to tell; `GameAnnouncer` watches the
// game controller and tells what changed since it last looked (called on every redraw). It also
// keeps the page's one <h1> naming the players.

import { BLACK, WHITE, colorName, jumpedSquare } from '../fen.js';
import { movePath } from '../notation.js';
import { gettext, interpolate } from '../i18n.js';

const fmt = (format, values) => interpolate(format, values, true);

/** Everything said, oldest first (read by the browser tests; kept short). */
const HEARD_KEEP = 50;

function region() {
  return document.getElementById('announcer');
}

/**
 * Say `text` in the live region (politely: after what the reader is saying). The same text twice
 * in a row is said twice: the region is emptied first and filled a moment later.
 */
export function announce(text) {
  const node = region();
  const words = String(text || '').trim();
  if (!node || !words) return;
  const heard = (window.checkersAnnounced = window.checkersAnnounced || []);
  heard.push(words);
  if (heard.length > HEARD_KEEP) heard.splice(0, heard.length - HEARD_KEEP);
  node.textContent = '';
  clearTimeout(node.announceTimer);
  node.announceTimer = setTimeout(() => {
    node.textContent = words;
  }, 50);
}

/** The squares a capture jumps over: "23x14x5" -> [18, 9]. */
export function capturedSquares(move) {
  const path = movePath(move);
  const out = [];
  for (let i = 1; i < path.length; i++) {
    const mid = jumpedSquare(path[i - 1], path[i]);
    if (mid) out.push(mid);
  }
  return out;
}

/** A list in words: [18] -> "18", [18, 9] -> "18 and 9", [18, 9, 2] -> "18, 9 and 2". */
function listWords(items) {
  if (items.length < 2) return items.join('');
  return fmt(gettext('%(first)s and %(last)s'), { first: items.slice(0, -1).join(', '), last: items[items.length - 1] });
}

/** A move in words, by the side that played it: "White 23x14x5, captures 18 and 9", "Black 11-15". */
export function moveWords(move, color) {
  const side = colorName(color);
  const taken = move.includes('x') ? capturedSquares(move) : [];
  if (!taken.length) return fmt(gettext('%(side)s %(move)s'), { side, move });
  return fmt(gettext('%(side)s %(move)s, captures %(squares)s'), { side, move, squares: listWords(taken) });
}

/** Who a seat is, in words: "White (bob)", or "White" when the seat has no name. */
function who(ctrl, color) {
  const name = ctrl.seatName(color);
  return name ? fmt(gettext('%(side)s (%(name)s)'), { side: colorName(color), name }) : colorName(color);
}

/** The side that played ply `ply` (1-based) of a game whose side to move after `plies` plies is `turn`. */
function moverOf(ply, plies, turn) {
  const other = turn === BLACK ? WHITE : BLACK;
  return (plies - ply) % 2 === 0 ? other : turn;
}

/** The game's end in words: "Game over: White wins (bob). Black resigned. 0-1". */
function endWords(ctrl) {
  const s = ctrl.state;
  let headline;
  if (s.winner) headline = fmt(gettext('Game over: %(winner)s wins.'), { winner: who(ctrl, s.winner) });
  else if (s.status === 'aborted') headline = gettext('The game was aborted.');
  else headline = gettext('Game over: a draw.');
  const reason = ctrl.endReason;
  const parts = [headline];
  if (reason) parts.push(`${reason}.`.replace(/\.\.$/, '.'));
  if (s.result && s.result !== '*') parts.push(s.result);
  return parts.join(' ');
}

export class GameAnnouncer {
  /** @param {object} ctrl  the game controller (state, moves, v, seatName, endReason, you) */
  constructor(ctrl) {
    this.ctrl = ctrl;
    this.seen = null; // what was last told: {id, plies, status, draw, takeback, moves}
    this.firstMoveTold = null; // the game and ply whose first-move warning was said
  }

  /** Tell what changed since the last call; the first state seen is only noted, not told. */
  update() {
    const ctrl = this.ctrl;
    const s = ctrl.state;
    this.renderHeading();
    if (!s) return;
    const now = {
      id: s.id,
      plies: ctrl.moves.length,
      status: s.status,
      draw: s.draw_offer || null,
      takeback: s.takeback_offer || null,
      last: ctrl.lastMove,
    };
    const before = this.seen || now; // the first state seen is only noted
    this.seen = now;
    if (before.id !== now.id) return;
    const said = [];
    if (now.plies > before.plies) {
      const missed = now.plies - before.plies;
      if (missed > 1) said.push(fmt(gettext('%(count)s moves were played meanwhile.'), { count: missed }));
      said.push(moveWords(now.last, moverOf(now.plies, now.plies, s.turn)));
    } else if (now.plies < before.plies) {
      said.push(
        fmt(gettext('Takeback: the position before move %(ply)s is back; %(side)s to move.'), {
          ply: Math.floor(now.plies / 2) + 1,
          side: colorName(s.turn),
        }),
      );
    }
    if (now.draw && now.draw !== before.draw) said.push(fmt(gettext('%(player)s offers a draw.'), { player: who(ctrl, now.draw) }));
    else if (!now.draw && before.draw && now.status === 'active') {
      const answerer = before.draw === BLACK ? WHITE : BLACK;
      said.push(fmt(gettext('%(player)s declined the draw.'), { player: who(ctrl, answerer) }));
    }
    if (now.takeback && now.takeback !== before.takeback) {
      said.push(fmt(gettext('%(player)s asks to take back a move.'), { player: who(ctrl, now.takeback) }));
    } else if (!now.takeback && before.takeback && now.plies >= before.plies && now.status === 'active') {
      const answerer = before.takeback === BLACK ? WHITE : BLACK;
      said.push(fmt(gettext('%(player)s declined the takeback.'), { player: who(ctrl, answerer) }));
    }
    if (ctrl.isOver && before.status !== now.status) said.push(endWords(ctrl));
    else if (now.status === 'active' && before.status === 'waiting') said.push(gettext('Both seats are taken: the game has started.'));
    // A live game's first move (no clock yet, but aborted after 30 s): told once to the player
    // who must make it; the countdown beside the board is not a live region (it changes each second).
    const firstMove = s.clock && s.clock.first_move_ms !== null && s.clock.first_move_ms !== undefined;
    const key = `${s.id}:${now.plies}`;
    if (now.status === 'active' && firstMove && ctrl.isMyTurn && this.firstMoveTold !== key) {
      this.firstMoveTold = key;
      said.push(fmt(gettext('Make your first move within %(seconds)s seconds, or the game is aborted.'), {
        seconds: Math.max(1, Math.round(Number(s.clock.first_move_ms) / 1000)),
      }));
    }
    if (said.length) announce(said.join(' '));
  }

  /** The page's <h1>: who plays whom ("Checkers: alice (Black) against bob (White)"). */
  renderHeading() {
    const node = document.getElementById('game-heading');
    const s = this.ctrl.state;
    if (!node || !s || !s.seats) return;
    const black = this.ctrl.seatName(BLACK);
    const white = this.ctrl.seatName(WHITE);
    let words;
    if (black && white) words = fmt(gettext('Checkers: %(black)s (Black) against %(white)s (White)'), { black, white });
    else if (black || white) {
      words = fmt(gettext('Checkers: %(player)s, waiting for an opponent'), { player: who(this.ctrl, black ? BLACK : WHITE) });
    } else words = gettext('Checkers game');
    if (node.textContent !== words) node.textContent = words;
  }
}
