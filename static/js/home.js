// Home page: the list of games being played now (#live-games), rendered by the
// server and refreshed from GET /games/live every few seconds. Names are
// inserted as text, never as HTML. Also: the create-game form's custom time
// inputs (#custom-time) show only while "Custom" is chosen, and the ballot number
// boxes can be typed in only while "3-move ballot" is chosen (without scripts
// both always can).

import { gettext, ngettext, interpolate } from './i18n.js';

const REFRESH_MS = 5000;

/** Moves played, counting a Black and a White ply as one move: ceil(ply / 2). */
export function movesPlayed(ply) {
  return Math.ceil((Number(ply) || 0) / 2);
}

function span(className, text) {
  const node = document.createElement('span');
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function marker(color) {
  const node = span(`color-marker ${color}`);
  node.setAttribute('aria-hidden', 'true');
  return node;
}

/** One <li> for a game {id, black, white, ply, spectators} (and its time control when given:
 * `control`, e.g. "5+3", with an optional `label`). */
export function gameItem(game) {
  const li = document.createElement('li');
  li.dataset.id = String(game.id);
  const a = document.createElement('a');
  a.href = `/g/${encodeURIComponent(game.id)}/`;
  a.title = gettext('Watch this game');
  const players = span('live-players');
  players.append(
    marker('black'),
    span('player-name', String(game.black || '?')),
    ' ',
    span('versus', gettext('vs')),
    ' ',
    marker('white'),
    span('player-name', String(game.white || '?')),
  );
  const ply = Number(game.ply) || 0;
  const moves = movesPlayed(ply);
  const movesNode = span('live-moves', interpolate(ngettext('%(moves)s move', '%(moves)s moves', moves), { moves }, true));
  movesNode.dataset.ply = String(ply);
  movesNode.title = interpolate(
    ngettext('%(plies)s move played by both sides together', '%(plies)s moves played by both sides together', ply),
    { plies: ply },
    true,
  );
  const n = Number(game.spectators) || 0;
  const watching = span('live-watching', interpolate(ngettext('%(spectators)s watching', '%(spectators)s watching', n), { spectators: n }, true));
  watching.dataset.spectators = String(n);
  a.append(players, ' ');
  if (game.control) {
    const control = span('live-control', String(game.label || game.control));
    control.dataset.control = String(game.control);
    control.title = gettext('Time control');
    a.append(control, ' ');
  }
  a.append(movesNode, ' ', watching);
  li.append(a);
  return li;
}

export function renderGames(list, empty, games) {
  const key = JSON.stringify(games);
  if (list.dataset.key === key) return;
  list.dataset.key = key;
  list.replaceChildren(...games.map(gameItem));
  if (empty) empty.hidden = games.length > 0;
}

/** Show #custom-time only while the time control select says "custom". */
export function wireTimeControl(custom = document.getElementById('custom-time')) {
  const box = custom ? custom.closest('.time-control') : null;
  const select = box ? box.querySelector('select') : null;
  if (!select) return;
  const update = () => {
    const on = select.value === 'custom';
    custom.hidden = !on;
    for (const input of custom.querySelectorAll('input')) input.disabled = !on;
  };
  select.addEventListener('change', () => {
    update();
    if (select.value === 'custom') {
      const first = custom.querySelector('input');
      if (first) first.focus();
    }
  });
  update();
}

/** In each form with an opening choice (select[name=opening]), enable its ballot number box
 * (input[name=ballot]) only while the choice is "ballot". */
export function wireBallots(root = document) {
  for (const select of root.querySelectorAll('select[name="opening"]')) {
    const input = select.form ? select.form.querySelector('input[name="ballot"]') : null;
    if (!input) continue;
    const update = () => {
      input.disabled = select.value !== 'ballot';
    };
    select.addEventListener('change', () => {
      update();
      if (select.value === 'ballot') input.focus();
    });
    update();
  }
}

/** The friend-game form's Rated box (input[name=rated], shown to signed-in players) is off and
 * disabled while the time control is untimed: untimed games are never rated. */
export function wireRated(root = document) {
  const box = root.querySelector('form.new-game input[name="rated"]');
  const select = box && box.form ? box.form.querySelector('select[name="time_control"]') : null;
  if (!select) return;
  const update = () => {
    const untimed = select.value === 'untimed';
    box.disabled = untimed;
    if (untimed) box.checked = false;
  };
  select.addEventListener('change', update);
  update();
}

function start() {
  wireTimeControl();
  wireBallots();
  wireRated();
  const list = document.getElementById('live-games');
  if (!list) return;
  const empty = document.getElementById('live-empty');
  const url = list.dataset.url || '/games/live';
  let timer = null;
  let busy = false;

  async function refresh() {
    clearTimeout(timer);
    timer = null;
    if (document.visibilityState === 'hidden') return; // resumes when the tab is shown again
    if (!busy) {
      busy = true;
      try {
        const response = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' });
        if (response.ok) {
          const data = await response.json();
          if (data && Array.isArray(data.games)) renderGames(list, empty, data.games);
        }
      } catch (err) {
        /* offline for a moment: keep the list, try again later */
      } finally {
        busy = false;
      }
    }
    timer = setTimeout(refresh, REFRESH_MS);
  }

  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && timer === null) refresh();
  });
  timer = setTimeout(refresh, REFRESH_MS);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
