// PDN FEN for American checkers: "B:W21,22,K30:B1,2,K3".
// Side to move (B/W), then each side's squares, "K" before a king.
// parseFen returns {turn, pieces} where pieces is a Map square -> {color, king}.

import { gettext } from './i18n.js';

export const SQUARES = 32;
export const BLACK = 'B';
export const WHITE = 'W';

export function opposite(color) {
  return color === BLACK ? WHITE : BLACK;
}

/** The side's name as the page shows it ("Black", "White"), in the page's language. */
export function colorName(color) {
  return color === BLACK ? gettext('Black') : color === WHITE ? gettext('White') : '';
}

function addSquare(pieces, color, king, n, text) {
  if (!Number.isInteger(n) || n < 1 || n > SQUARES) throw new Error(`bad square in FEN: ${text}`);
  if (pieces.has(n)) throw new Error(`square ${n} given twice in FEN`);
  pieces.set(n, { color, king });
}

/**
 * Parse a PDN FEN string.
 *   parseFen("B:W21,K30:B1,K3").pieces.get(30)  -> {color: "W", king: true}
 * Tolerates spaces, a trailing ".", empty piece lists and ranges ("1-12", "K1-4").
 * Throws Error on anything else.
 */
export function parseFen(fen) {
  const text = String(fen || '').trim().replace(/\.$/, '');
  const parts = text.split(':').map((p) => p.trim());
  const turn = (parts[0] || '').toUpperCase();
  if (turn !== BLACK && turn !== WHITE) throw new Error(`bad side to move in FEN: ${fen}`);
  const pieces = new Map();
  for (const part of parts.slice(1)) {
    if (!part) continue;
    const color = part[0].toUpperCase();
    if (color !== BLACK && color !== WHITE) throw new Error(`bad colour in FEN: ${part}`);
    for (const raw of part.slice(1).split(',')) {
      const token = raw.trim();
      if (!token) continue;
      const m = /^(K?)(\d+)(?:-(\d+))?$/i.exec(token);
      if (!m) throw new Error(`bad square in FEN: ${token}`);
      const king = m[1] !== '';
      const from = Number(m[2]);
      const to = m[3] === undefined ? from : Number(m[3]);
      if (to < from) throw new Error(`bad range in FEN: ${token}`);
      for (let n = from; n <= to; n++) addSquare(pieces, color, king, n, token);
    }
  }
  return { turn, pieces };
}

// ---- board geometry -------------------------------------------------------
// Squares 1-32, row by row from the top as White sees the board, left to right.
// Row 0 (rank 8) holds b8 d8 f8 h8 (squares 1-4); odd rows start on the a-file.

/** {row, col} of square n with White at the bottom (row 0 = rank 8, col 0 = a-file). */
export function squareToRowCol(n) {
  const row = Math.floor((n - 1) / 4);
  const i = (n - 1) % 4;
  const col = row % 2 === 0 ? 2 * i + 1 : 2 * i;
  return { row, col };
}

/** The square number at {row, col} (White at the bottom), or null for a light square. */
export function rowColToSquare(row, col) {
  if (row < 0 || row > 7 || col < 0 || col > 7) return null;
  if ((row + col) % 2 === 0) return null;
  return row * 4 + Math.floor(col / 2) + 1;
}

/** Algebraic name of square n ("b8" for 1). */
export function squareName(n) {
  const { row, col } = squareToRowCol(n);
  return 'abcdefgh'[col] + String(8 - row);
}

/** The square jumped over when moving from a to b two diagonal steps away, else null. */
export function jumpedSquare(a, b) {
  const p = squareToRowCol(a);
  const q = squareToRowCol(b);
  if (Math.abs(p.row - q.row) !== 2 || Math.abs(p.col - q.col) !== 2) return null;
  return rowColToSquare((p.row + q.row) / 2, (p.col + q.col) / 2);
}
