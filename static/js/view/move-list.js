// A game's moves in numbered pairs (Black first), each a button carrying its ply
// (data-ply) so that a click shows the position after it; the ply shown is marked.
// The game page and the analysis board (a loaded game) both show one.

import { BLACK, WHITE } from '../fen.js';
import { gettext, interpolate } from '../i18n.js';
import { movePairs } from '../notation.js';

export class MoveListView {
  /** @param {HTMLElement} list  an <ol class="move-list"> */
  constructor(list) {
    this.list = list;
    this.key = null;
    this.plyNodes = new Map(); // ply -> its button
    this.shownNode = null;
  }

  /**
   * Show `moves` (full notation), ply 1 played by `first`; mark the ply `shown` (none: null or
   * 0). `replaying`: an earlier position than the last is shown (scrolled into view).
   */
  render(moves, first, shown, replaying) {
    const list = this.list;
    if (!list) return;
    const key = `${first}|${moves.join(' ')}`;
    if (key !== this.key) {
      const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
      this.key = key;
      this.plyNodes = new Map();
      list.textContent = '';
      for (const pair of movePairs(moves, first)) {
        const li = document.createElement('li');
        const num = document.createElement('span');
        num.className = 'move-number';
        num.textContent = `${pair.number}.`;
        li.append(num, ' ', this.plyNode(pair.black, pair.blackPly, BLACK));
        if (pair.white) li.append(' ', this.plyNode(pair.white, pair.whitePly, WHITE));
        list.appendChild(li);
      }
      list.classList.toggle('empty', !moves.length);
      // Follow new moves unless the viewer scrolled up to look at earlier ones.
      if (moves.length && (atEnd || !replaying)) list.scrollTop = list.scrollHeight;
      this.shownNode = null;
    }
    const node = (shown !== null && this.plyNodes.get(shown)) || null;
    if (node !== this.shownNode) {
      if (this.shownNode) {
        this.shownNode.classList.remove('current');
        this.shownNode.removeAttribute('aria-current');
      }
      if (node) {
        node.classList.add('current');
        node.setAttribute('aria-current', 'step');
        if (replaying) node.scrollIntoView({ block: 'nearest' });
      }
      this.shownNode = node;
    }
    list.classList.toggle('replaying', replaying);
  }

  plyNode(move, ply, color) {
    if (move === null) {
      const span = document.createElement('span');
      span.className = `ply ${color === BLACK ? 'black' : 'white'} skipped`;
      span.textContent = '...';
      return span;
    }
    const button = document.createElement('button');
    button.type = 'button';
    button.className = `ply ${color === BLACK ? 'black' : 'white'}`;
    button.textContent = move;
    button.dataset.ply = String(ply);
    button.title = interpolate(
      color === BLACK ? gettext("Show the position after Black's move %(move)s") : gettext("Show the position after White's move %(move)s"),
      { move },
      true,
    );
    this.plyNodes.set(ply, button);
    return button;
  }
}
