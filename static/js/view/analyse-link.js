// The game page's "Analyse this position" link: it always points at the analysis board
// set up with the position on the board (the current one, or the one viewed in replay).

/** Point `node` (an <a>) at /analysis?fen=... for the position `ctrl` shows. */
export function renderAnalyseLink(node, ctrl) {
  if (!node) return;
  const fen = ctrl.viewPly === null ? (ctrl.state ? ctrl.state.fen : null) : ctrl.fenAt(ctrl.viewPly);
  const href = fen ? `/analysis?fen=${encodeURIComponent(fen)}` : '/analysis';
  if (node.getAttribute('href') !== href) node.setAttribute('href', href);
}
