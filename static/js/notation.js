// Move notation helpers. Legality is the server's business: these only read
// the strings it sends ("11-15", "27x18x11").

import { BLACK, opposite } from './fen.js';

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
 * Number the plies in pairs, Black first:
 *   [{number: 1, black: "11-15", white: "23-19", blackPly: 1, whitePly: 2}, ...]
 * If White moved first, the first pair has black = null ("1. ... 23-19").
 */
export function movePairs(moves, first = BLACK) {
  const pairs = [];
  let ply = 0;
  let i = 0;
  if (first !== BLACK && moves.length) {
    pairs.push({ number: 1, black: null, white: moves[0], blackPly: null, whitePly: 1 });
    i = 1;
  }
  for (; i < moves.length; i += 2) {
    ply = i + 1;
    pairs.push({
      number: pairs.length + 1,
      black: moves[i],
      white: i + 1 < moves.length ? moves[i + 1] : null,
      blackPly: ply,
      whitePly: i + 1 < moves.length ? ply + 1 : null,
    });
  }
  return pairs;
}

/** The whole list as text: "1. 11-15 23-19 2. 8-11". */
export function moveText(moves, first = BLACK) {
  return movePairs(moves, first)
    .map((p) => `${p.number}. ${p.black ?? '...'}${p.white ? ' ' + p.white : ''}`)
    .join(' ');
}
