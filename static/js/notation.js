// Move notation helpers. Legality is the server's business: these only read
// the strings it sends ("11-15", "27x18x11").

import { BLACK, opposite } from './fen.js';
import { gettext, interpolate } from './i18n.js';

/** Squares of a full-notation move: "27x18x11" -> [27, 18, 11]. */
export function movePath(move) {
  return String(move).split(/[-x]/).map(Number);
}

export function isCapture(move) {
  return String(move).includes('x');
}

function samePrefix(route, prefix) {
  if (route.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (route[i] !== prefix[i]) return false;
  return true;
}

/** The legal moves ({move, path}) whose path starts with `prefix`. */
export function matching(legal, prefix) {
  return legal
    .map((move) => ({ move, path: movePath(move) }))
    .filter(({ path }) => samePrefix(path, prefix));
}

/**
 * The side that played ply 1, given the number of plies played and the side to move now.
 */
export function firstMover(plies, turn) {
  return plies % 2 === 0 ? turn : opposite(turn);
}

/**
 * The move number of the position after `shown` plies of a game whose ply 1 was played by
 * `first` (Black's move and White's reply share a number): 1 at the start.
 */
export function moveNumberAt(shown, first = BLACK) {
  const offset = first === BLACK ? 0 : 1;
  return Math.floor((Math.max(0, shown) + offset) / 2) + 1;
}

/**
 * Number the plies in pairs, Black first:
 *   [{number: 1, black: "11-15", white: "23-19", blackPly: 1, whitePly: 2}, ...]
 * If White moved first, the first pair has black = null ("1. ... 23-19"). `startNumber` is the
 * number of the first pair (a line from the middle of a game: 12. ... 23-19 13. 8-11).
 */
export function movePairs(moves, first = BLACK, startNumber = 1) {
  const base = Math.max(1, Math.floor(Number(startNumber) || 1)) - 1;
  const pairs = [];
  let ply = 0;
  let i = 0;
  if (first !== BLACK && moves.length) {
    pairs.push({ number: base + 1, black: null, white: moves[0], blackPly: null, whitePly: 1 });
    i = 1;
  }
  for (; i < moves.length; i += 2) {
    ply = i + 1;
    pairs.push({
      number: base + pairs.length + 1,
      black: moves[i],
      white: i + 1 < moves.length ? moves[i + 1] : null,
      blackPly: ply,
      whitePly: i + 1 < moves.length ? ply + 1 : null,
    });
  }
  return pairs;
}

/** The whole list as text: "1. 11-15 23-19 2. 8-11" (numbered from `startNumber`). */
export function moveText(moves, first = BLACK, startNumber = 1) {
  return movePairs(moves, first, startNumber)
    .map((p) => `${p.number}. ${p.black ?? '...'}${p.white ? ' ' + p.white : ''}`)
    .join(' ');
}

/**
 * The position after `ply` plies of `moves` (ply 1 played by `first`) in words: "Start position",
 * "After 12. 11-15" (Black's move), "After 12... 23x14" (White's).
 */
export function plyText(moves, first, ply) {
  if (!ply) return gettext('Start position');
  const offset = first === BLACK ? 0 : 1;
  const number = Math.floor((ply - 1 + offset) / 2) + 1;
  const blackMoved = (ply - 1 + offset) % 2 === 0;
  return interpolate(gettext('After %(move)s'), { move: `${number}${blackMoved ? '.' : '...'} ${moves[ply - 1]}` }, true);
}

/** What a PDN result says, in words: "1-0" is "Black won (1-0: Black's score first)"; '' for "*". */
export function resultWords(result) {
  if (result === '1-0') return gettext("Black won (1-0: Black's score first)");
  if (result === '0-1') return gettext("White won (0-1: Black's score first)");
  if (result === '1/2-1/2') return gettext('A draw (1/2-1/2: half a point each)');
  return '';
}
