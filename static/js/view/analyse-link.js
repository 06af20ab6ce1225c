// The game page's "Analyse" link: it opens the analysis board in a new tab with the game's
// moves to step through, at the position on the board (the current one, or the one viewed in
// replay): /analysis?game=<id>&ply=<n>. Before the first move, or without a game id, it sets
// up the position shown instead (?fen=, with its move number so the engine's line is numbered
// as in the game). Once the game is over it reads "Analyse the game".
// Fair play: a seated player does not see it while their own game goes on (waiting or active);
// spectators always do, and everyone once the game is over (unless it ended with no move played).

import { firstMover, moveNumberAt } from '../notation.js';
import { gettext } from '../i18n.js';

/** Where the link goes for the position `ctrl` shows. */
export function analyseHref(ctrl) {
  const gameId = ctrl.config && ctrl.config.gameId;
  if (gameId && ctrl.moves.length > 0) {
    return `/analysis?game=${encodeURIComponent(gameId)}&ply=${ctrl.shownPly}`;
  }
  const fen = ctrl.replaying ? ctrl.fenAt(ctrl.shownPly) : ctrl.state ? ctrl.state.fen : null;
  if (!fen) return '/analysis';
  const first = firstMover(ctrl.moves.length, ctrl.state ? ctrl.state.turn : 'B');
  const number = moveNumberAt(ctrl.shownPly, first);
  return `/analysis?fen=${encodeURIComponent(fen)}${number > 1 ? `&move_number=${number}` : ''}`;
}

/** Point `node` (an <a>) at the analysis board for what `ctrl` shows; show or hide its row. */
export function renderAnalyseLink(node, ctrl) {
  if (!node) return;
  const row = node.closest('.analyse-row') || node;
  const playing = !!(ctrl.you && (!ctrl.state || !ctrl.isOver)); // unknown yet: stay hidden
  const nothingPlayed = !!(ctrl.state && ctrl.isOver && ctrl.moves.length === 0); // aborted before a move
  const hide = playing || nothingPlayed;
  if (row.hidden !== hide) row.hidden = hide;
  const href = analyseHref(ctrl);
  if (node.getAttribute('href') !== href) node.setAttribute('href', href);
  const label = ctrl.state && ctrl.isOver ? gettext('Analyse the game') : gettext('Analyse this position');
  if (node.textContent !== label) node.textContent = label;
}
