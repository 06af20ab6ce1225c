// Boot of the analysis board: read the page's analysis-config, build the controller and the
// view, wire the panel's controls, then show the position the page was opened with (or load the
// game it names, with its moves to step through).

import { AnalysisCtrl } from './ctrl.js';
import { gameIdFrom, noSuchGame, plainFenError } from './load.js';
import { AnalysisView } from './view.js';
import { wireReplay } from '../view/replay.js';
import { gettext, interpolate } from '../i18n.js';
import { copyText } from '../copy.js';

function byId(id) {
  return document.getElementById(id);
}

/** The set-up tools, the board's buttons and the square numbers. */
function wireSetup(ctrl) {
  for (const input of document.querySelectorAll('input[name="mode"]')) {
    input.addEventListener('change', () => ctrl.setMode(input.value));
  }
  for (const input of document.querySelectorAll('input[name="tool"]')) {
    input.addEventListener('change', () => ctrl.setTool(input.value));
  }
  for (const input of document.querySelectorAll('input[name="turn"]')) {
    input.addEventListener('change', () => ctrl.setTurn(input.value));
  }
  byId('undo').addEventListener('click', () => ctrl.undo());
  byId('reset').addEventListener('click', () => ctrl.reset());
  byId('clear').addEventListener('click', () => ctrl.clear());
  byId('flip').addEventListener('click', () => ctrl.flip());
  byId('toggle-numbers').addEventListener('change', (e) => ctrl.toggleNumbers(e.target.checked));
}

/** The engine's buttons and the legal moves' list. */
function wireEngine(ctrl) {
  byId('analyse').addEventListener('click', () => ctrl.analyse(byId('think-ms').value));
  ctrl.thinkMs = () => byId('think-ms').value;
  byId('auto-analyse').addEventListener('change', (e) => ctrl.setAutoAnalyse(e.target.checked));
  byId('play-best').addEventListener('click', () => {
    if (ctrl.best && ctrl.best.move) ctrl.play(ctrl.best.move);
  });
  byId('legal-moves').addEventListener('click', (e) => {
    const button = e.target instanceof Element ? e.target.closest('button[data-move]') : null;
    if (button) ctrl.play(button.dataset.move);
  });
}

/** The FEN box: load the position typed in, or copy the board's. */
function wireFenBox(ctrl) {
  const fenInput = byId('fen-input');
  byId('fen-load').addEventListener('click', () => ctrl.load(fenInput.value));
  fenInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      ctrl.load(fenInput.value);
    }
  });
  fenInput.addEventListener('input', () => {
    if (ctrl.fenError) {
      ctrl.fenError = null; // a new attempt: the old refusal goes
      ctrl.redraw();
    }
  });
  const copy = byId('fen-copy');
  copy.addEventListener('click', async () => {
    fenInput.value = ctrl.fen;
    const ok = await copyText(fenInput);
    copy.textContent = ok ? gettext('Copied!') : gettext('Press Ctrl+C');
    setTimeout(() => {
      copy.textContent = gettext('Copy');
    }, 2000);
  });
}

/** The "Load" box: a game's link or id, or a game record. */
function wireGameBox(ctrl) {
  const gameSource = byId('game-source');
  byId('game-source-form').addEventListener('submit', (e) => {
    e.preventDefault(); // found: the board shows it here; not found: the position stays
    ctrl.loader.load(gameSource.value);
  });
  gameSource.addEventListener('keydown', (e) => {
    // A pasted record may span lines (Shift+Enter); Enter alone loads, as in a one-line box.
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      ctrl.loader.load(gameSource.value);
    }
  });
  gameSource.addEventListener('input', () => {
    if (ctrl.gameError) {
      ctrl.gameError = null;
      ctrl.redraw();
    }
  });
}

function wirePanel(ctrl) {
  wireSetup(ctrl);
  wireEngine(ctrl);
  wireFenBox(ctrl);
  wireGameBox(ctrl);
  // A loaded game: its move list, the step buttons and Left/Right/Home/End.
  wireReplay(ctrl.loader, () => !!ctrl.game);
}

/** The position the page was opened with, or the game it names; why not, when the server refused it. */
async function start(ctrl, config) {
  const params = new URLSearchParams(window.location.search); // before the address is rewritten
  const ply = /^\d{1,4}$/.test(params.get('ply') || '') ? Number(params.get('ply')) : null;
  if (config.game) {
    const shown = await ctrl.loader.load(config.game, ply);
    // Found: on the board, or already stepped through by the player before its first answer came.
    if (shown || ctrl.game) return;
  }
  await ctrl.show(config.fen);
  if (!config.error) return;
  // Why the page's ?fen= or ?game= was not used: shown next to its box (a refused FEN quoted
  // in the reason; the box shows the board's position).
  if (params.get('game') && !params.get('fen')) {
    byId('game-source').value = params.get('game');
    const id = gameIdFrom(params.get('game'));
    ctrl.gameError = id ? noSuchGame(id) : config.error;
  } else if (params.get('fen')) {
    ctrl.fenError = interpolate(gettext('“%(fen)s” was not set up: %(reason)s'),
      { fen: params.get('fen').slice(0, 120), reason: plainFenError(config.error) }, true);
  } else ctrl.fenError = plainFenError(config.error);
  ctrl.redraw();
}

function boot() {
  const node = byId('analysis-config');
  const boardEl = byId('board');
  if (!node || !boardEl) return;
  const config = JSON.parse(node.textContent);
  let view = null;
  const ctrl = new AnalysisCtrl(config, () => {
    if (view) view.render();
  });
  view = new AnalysisView(boardEl, ctrl);
  wirePanel(ctrl);
  view.render();
  const started = start(ctrl, config);
  // For debugging in the console and for browser tests (`started`: the page has set itself up).
  window.analysis = { ctrl, board: view.board, view, started };
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
