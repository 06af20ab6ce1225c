// Stepping through a game's positions: the replay buttons (#replay-first, -prev, -next, -last,
// #back-to-game), a click on a move in #move-list, and the keys Left/Right/Home/End. The game
// page and the analysis board (a loaded game) both wire theirs here. The board takes Left and
// Right itself while a move is being picked (see BoardView.selecting), and text fields and
// controls keep their own keys.

/** True when a key press belongs to a text field or a control that uses the arrow keys itself. */
export function typingTarget(target) {
  if (!(target instanceof Element)) return false;
  if (target.isContentEditable) return true;
  return !!target.closest('input, textarea, select, [role="slider"], [role="listbox"], [role="menu"]');
}

const KEYS = { ArrowLeft: 'prev', ArrowRight: 'next', Home: 'first', End: 'last' };

/**
 * Wire the replay controls to `steps`: {first(), prev(), next(), last(), goTo(ply)} (the game
 * page's Replay, replay.js; the analysis board's loaded game, analysis/game.js). The keys step
 * only while `active()` (otherwise they keep their usual meaning); `signal` (an AbortSignal)
 * ends the keys' listener on the document.
 */
export function wireReplay(steps, active = () => true, signal = undefined) {
  const on = (id, handler) => {
    const node = document.getElementById(id);
    if (node) node.addEventListener('click', handler);
  };
  on('replay-first', () => steps.first());
  on('replay-prev', () => steps.prev());
  on('replay-next', () => steps.next());
  on('replay-last', () => steps.last());
  on('back-to-game', () => steps.last());
  const list = document.getElementById('move-list');
  if (list) {
    list.addEventListener('click', (e) => {
      const target = e.target instanceof Element ? e.target.closest('[data-ply]') : null;
      if (target && list.contains(target)) steps.goTo(Number(target.dataset.ply));
    });
  }
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || typingTarget(e.target)) return;
    const name = KEYS[e.key];
    if (!name || !active()) return;
    e.preventDefault();
    steps[name]();
  }, { signal });
}
