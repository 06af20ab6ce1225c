// The game page's "Analyse this position" link: it always points at the analysis board
// set up with the position on the board (the current one, or the one viewed in replay),
// with that position's move number so that the engine's line is numbered as in the game.
// Fair play: a seated player does not see it while their own game goes on (waiting or active);
// spectators always do, and everyone once the game is over. It opens in a new tab.

import { firstMover, moveNumberAt } from '../notation.js';

/** Point `node` (an <a>) at /analysis?fen=...&move_number=... for the position `ctrl` shows. */
export function renderAnalyseLink(node, ctrl) {
  if (!node) return;
  const row = node.closest('.analyse-row') || node;
  const playing = !!(ctrl.you && (!ctrl.state || !ctrl.isOver)); // unknown yet: stay hidden
  if (row.hidden !== playing) row.hidden = playing;
  const fen = ctrl.viewPly === null ? (ctrl.state ? ctrl.state.fen : null) : ctrl.fenAt(ctrl.viewPly);
  let href = '/analysis';
  if (fen) {
    const first = firstMover(ctrl.moves.length, ctrl.state ? ctrl.state.turn : 'B');
    const number = moveNumberAt(ctrl.shownPly, first);
    href = `/analysis?fen=${encodeURIComponent(fen)}${number > 1 ? `&move_number=${number}` : ''}`;
  }
  if (node.getAttribute('href') !== href) node.setAttribute('href', href);
}
