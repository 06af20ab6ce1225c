// What the analysis board's boxes take, and their refusals in plain words: a position (FEN)
// refused by the server, a game's link or id, or a game record (PDN) pasted into the "Load" box.

import { gettext, interpolate } from '../i18n.js';

const fmt = (format, values) => interpolate(format, values, true);

export const FEN_EXAMPLE = 'B:W21,22,23:B1,2,3';

/**
 * Why a position was refused, in plain words (the server's reasons are terse: "white man on its
 * crowning row: 1"). Unknown reasons are passed on, as a sentence.
 */
export function plainFenError(message) {
  const text = String(message || '').trim().replace(/^That position cannot be set up: /, '').replace(/\.$/, '');
  let m;
  if ((m = /^(black|white) man on its crowning row: (\d+)$/i.exec(text))) {
    const format =
      m[1].toLowerCase() === 'black'
        ? gettext('A black man cannot stand on square %(square)s: black men are crowned on that row. Make it a king or move it.')
        : gettext('A white man cannot stand on square %(square)s: white men are crowned on that row. Make it a king or move it.');
    return fmt(format, { square: m[2] });
  }
  if ((m = /^square held by both sides: (\d+)$/i.exec(text))) {
    return fmt(gettext('Square %(square)s is given to both Black and White.'), { square: m[1] });
  }
  if ((m = /^repeated square: (\d+)$/i.exec(text))) return fmt(gettext('Square %(square)s is listed twice.'), { square: m[1] });
  if ((m = /^square outside 1-32: (.+)$/i.exec(text))) {
    return fmt(gettext('There is no square %(square)s: the dark squares are numbered 1 to 32.'), {
      square: m[1].replace(/^'|'$/g, ''),
    });
  }
  if ((m = /^stray characters in '(.*)'$/i.exec(text))) {
    return fmt(gettext('“%(text)s” is not a square: write a number from 1 to 32 (K before a king), separated by commas.'), {
      text: m[1],
    });
  }
  if ((m = /^king on an empty square: (\d+)$/i.exec(text))) {
    return fmt(gettext('There is a king on square %(square)s but no piece.'), { square: m[1] });
  }
  if (/^empty FEN$|^a FEN is required/i.test(text)) return fmt(gettext('Type or paste a position first, e.g. %(example)s.'), { example: FEN_EXAMPLE });
  if (/^a FEN has at most/i.test(text)) return gettext('That is too long to be a position.');
  if (/^bad side to move|^stray characters|^a FEN is a string/i.test(text)) {
    return fmt(
      gettext(
        "That is not a position the board can read. Write who is to move (B or W), then White's squares and Black's squares, K before a king: e.g. %(example)s.",
      ),
      { example: FEN_EXAMPLE },
    );
  }
  if (!text) return gettext('That position cannot be set up.');
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}

/**
 * The game id in what was typed into the "Load" box: an id ("k3n8x2pq7a") or a game's link
 * ("https://host/g/k3n8x2pq7a/", also its .pdn). Null when it cannot be one.
 */
export function gameIdFrom(text) {
  let value = String(text || '').trim();
  if (!value) return null;
  try {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) value = new URL(value).pathname;
  } catch (err) {
    return null;
  }
  value = value.split(/[?#]/)[0].replace(/\/+$/, '');
  const id = value.slice(value.lastIndexOf('/') + 1).replace(/\.pdn$/i, '');
  return /^[A-Za-z0-9_-]{1,64}$/.test(id) ? id : null;
}

/** True when the "Load" box holds a game record (PDN, or moves such as "1. 11-15 23-19"), not a link or id. */
export function looksLikePdn(text) {
  const value = String(text || '').trim();
  return /[\[\n{]/.test(value) || /^(\d+\.+\s*)?\d{1,2}\s*[-xX:]\s*\d{1,2}\b/.test(value);
}

/** The CSRF token of the page (for the POST endpoints). */
export function csrfToken() {
  const token = document.querySelector('input[name="csrfmiddlewaretoken"]');
  return token ? token.value : '';
}

/** What the "Load" box says of a game the server does not know. */
export function noSuchGame(id) {
  return fmt(gettext('No game “%(id)s” was found. Check the link for a typo.'), { id });
}
