// The analysis board: set up any position, play legal moves on it, and ask the engine
// for its best move, evaluation and line. The server is the judge of every position
// (GET /analysis/position) and the engine runs there (POST /analysis/search); this
// page only draws what they answer.

import { BoardView } from './view/board.js';
import { BLACK, WHITE, colorName, opposite, parseFen, jumpedSquare } from './fen.js';
import { matching, movePath, moveText } from './notation.js';
import { loadFlag, saveFlag } from './storage.js';

const NUMBERS_KEY = 'checkers.showNumbers';
const SVG_NS = 'http://www.w3.org/2000/svg';

/** PDN FEN of a position {turn, pieces: Map square -> {color, king}}, squares ascending, White first. */
export function toFen(turn, pieces) {
  const side = (color) =>
    [...pieces.entries()]
      .filter(([, p]) => p.color === color)
      .sort((a, b) => a[0] - b[0])
      .map(([n, p]) => (p.king ? `K${n}` : String(n)))
      .join(',');
  return `${turn}:W${side(WHITE)}:B${side(BLACK)}`;
}

/** Below this many hundredths of a man either way, the engine calls the position equal. */
const EQUAL_WITHIN = 10;

/**
 * The engine's verdict in words. `score` is in hundredths of a man from the side to move's view;
 * the text names the side that is better and by how much, in men: "Equal",
 * "Black is better (+1.25)", "White wins (a forced win in 3 moves)".
 */
export function describeScore(result, turn) {
  if (result.mate !== null && result.mate !== undefined) {
    const winner = result.mate > 0 ? turn : opposite(turn);
    const moves = Math.ceil(Math.abs(result.mate) / 2);
    return `${colorName(winner)} wins (a forced win in ${moves} move${moves === 1 ? '' : 's'})`;
  }
  const forBlack = turn === BLACK ? result.score : -result.score;
  if (Math.abs(forBlack) < EQUAL_WITHIN) return 'Equal';
  const ahead = forBlack > 0 ? BLACK : WHITE;
  return `${colorName(ahead)} is better (+${(Math.abs(forBlack) / 100).toFixed(2)})`;
}

const FEN_EXAMPLE = 'B:W21,22,23:B1,2,3';

/**
 * Why a position was refused, in plain words (the server's reasons are terse: "white man on its
 * crowning row: 1"). Unknown reasons are passed on, as a sentence.
 */
export function plainFenError(message) {
  const text = String(message || '').trim().replace(/^That position cannot be set up: /, '').replace(/\.$/, '');
  let m;
  if ((m = /^(black|white) man on its crowning row: (\d+)$/i.exec(text))) {
    const color = m[1].toLowerCase();
    return `A ${color} man cannot stand on square ${m[2]}: ${color} men are crowned on that row. Make it a king or move it.`;
  }
  if ((m = /^square held by both sides: (\d+)$/i.exec(text))) return `Square ${m[1]} is given to both Black and White.`;
  if ((m = /^repeated square: (\d+)$/i.exec(text))) return `Square ${m[1]} is listed twice.`;
  if ((m = /^square outside 1-32: (.+)$/i.exec(text))) {
    return `There is no square ${m[1].replace(/^'|'$/g, '')}: the dark squares are numbered 1 to 32.`;
  }
  if ((m = /^stray characters in '(.*)'$/i.exec(text))) {
    return `“${m[1]}” is not a square: write a number from 1 to 32 (K before a king), separated by commas.`;
  }
  if ((m = /^king on an empty square: (\d+)$/i.exec(text))) return `There is a king on square ${m[1]} but no piece.`;
  if (/^empty FEN$|^a FEN is required/i.test(text)) return `Type or paste a position first, e.g. ${FEN_EXAMPLE}.`;
  if (/^a FEN has at most/i.test(text)) return 'That is too long to be a position.';
  if (/^bad side to move|^stray characters|^a FEN is a string/i.test(text)) {
    return (
      `That is not a position the board can read. Write who is to move (B or W), then White's squares ` +
      `and Black's squares, K before a king: e.g. ${FEN_EXAMPLE}.`
    );
  }
  if (!text) return 'That position cannot be set up.';
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

/** A whole move number from the page's address or config (null when absent or not a number). */
function moveNumberFrom(value) {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n < 10000 ? n : null;
}

export class AnalysisCtrl {
  /**
   * @param {object} config  {fen, error, positionUrl, searchUrl, defaultMs, maxMs, initialFen}
   * @param {function} redraw  called after every change
   */
  constructor(config, redraw) {
    this.config = config;
    this.redraw = redraw || (() => {});
    this.fen = config.fen;
    this.position = parseFen(config.fen);
    this.info = null; // the server's view of this.fen: {fen, turn, legal, over, winner, reason}
    // What went wrong, each shown where it belongs: `fenError` (a position refused: next to the
    // FEN box), `gameError` (the "Load" box), `error` (the engine or a move: at the top).
    this.error = null;
    this.fenError = null;
    this.gameError = null;
    this.gameLoading = false;
    this.mode = 'play';
    this.tool = 'b';
    this.flipped = false;
    this.path = [];
    this.lastMove = null;
    this.undoStack = []; // earlier positions of the moves played here: [{fen, lastMove}]
    this.best = null; // the engine's answer for this.fen
    // The move number of the position shown, when it comes from a game (?move_number= from the
    // game page's link, or the server's config); the engine's line is numbered from it.
    let number = moveNumberFrom(config.moveNumber);
    try {
      number = moveNumberFrom(new URLSearchParams(window.location.search).get('move_number')) || number;
    } catch (err) {
      /* no address to read */
    }
    this.moveNumber = number || 1;
    this.thinking = false;
    this.loading = false;
    this.requests = 0; // answers to older requests are dropped
    this.showNumbers = loadFlag(NUMBERS_KEY);
    // What the board view reads of a game controller.
    this.connection = 'open';
    this.connectionDetail = null;
    this.v = 0;
    this.syncing = false;
    this.pending = null;
    this.you = null;
    this.replaying = false;
    this.shownPly = 0;
    this.status = 'analysis';
    this.isOver = false;
  }

  // ---- what the board view reads ------------------------------------------

  get orientation() {
    return this.flipped ? BLACK : WHITE;
  }

  get shownPosition() {
    return this.position;
  }

  get shownLastMove() {
    return this.lastMove;
  }

  get valid() {
    return !!(this.info && this.info.fen === this.fen);
  }

  get canInput() {
    return this.mode === 'play' && !this.loading && this.valid && this.info.legal.length > 0;
  }

  get isMyTurn() {
    return this.canInput;
  }

  get legal() {
    return this.canInput ? this.info.legal : [];
  }

  /** Every legal move is a capture: the board rings the pieces that can take. */
  get mustCapture() {
    const legal = this.legal;
    return legal.length > 0 && legal.every((m) => m.includes('x'));
  }

  movableSquares() {
    return new Set(this.legal.map((m) => movePath(m)[0]));
  }

  candidates() {
    return this.path.length ? matching(this.legal, this.path) : [];
  }

  destinations() {
    const n = this.path.length;
    const out = new Set();
    for (const { path } of this.candidates()) if (path.length > n) out.add(path[n]);
    return out;
  }

  finalSquares() {
    const out = new Map();
    for (const c of this.candidates()) {
      const end = c.path[c.path.length - 1];
      out.set(end, out.has(end) ? null : c.move);
    }
    return out;
  }

  // ---- input from the board ------------------------------------------------

  cancel() {
    if (!this.path.length) return;
    this.path = [];
    this.redraw();
  }

  select(n) {
    if (!this.movableSquares().has(n)) return false;
    this.path = [n];
    this.redraw();
    return true;
  }

  clickSquare(n) {
    if (this.mode === 'edit') {
      this.edit(n);
      return;
    }
    if (!this.canInput) return;
    if (!this.path.length) {
      this.select(n);
      return;
    }
    if (this.path.length === 1 && n === this.path[0]) {
      this.cancel();
      return;
    }
    if (this.destinations().has(n)) {
      const path = this.path.concat([n]);
      const complete = matching(this.legal, path).filter((c) => c.path.length === path.length);
      if (complete.length === 1) this.play(complete[0].move);
      else {
        this.path = path;
        this.redraw();
      }
      return;
    }
    const shortcut = this.finalSquares().get(n);
    if (shortcut) {
      this.play(shortcut);
      return;
    }
    if (this.movableSquares().has(n)) this.select(n);
    else this.cancel();
  }

  drop(from, to) {
    if (!this.canInput) return;
    const tip = this.path.length ? this.path[this.path.length - 1] : null;
    if (from !== tip) {
      if (!this.movableSquares().has(from)) return;
      this.path = [from];
    }
    if (to === null || to === from) {
      this.redraw();
      return;
    }
    this.clickSquare(to);
  }

  // ---- changing the position -------------------------------------------------

  /** Set up mode: place the chosen piece on square n, or remove it when the same piece is there. */
  edit(n) {
    const pieces = new Map(this.position.pieces);
    const here = pieces.get(n);
    if (this.tool === 'x') pieces.delete(n);
    else {
      const piece = { color: this.tool.toUpperCase() === 'B' ? BLACK : WHITE, king: this.tool === this.tool.toUpperCase() };
      if (here && here.color === piece.color && here.king === piece.king) pieces.delete(n);
      else pieces.set(n, piece);
    }
    this.undoStack = [];
    this.lastMove = null;
    this.moveNumber = 1;
    this.show(toFen(this.position.turn, pieces));
  }

  setTurn(turn) {
    if (turn !== BLACK && turn !== WHITE) return;
    this.undoStack = [];
    this.lastMove = null;
    this.moveNumber = 1;
    this.show(toFen(turn, this.position.pieces));
  }

  clear() {
    this.undoStack = [];
    this.lastMove = null;
    this.moveNumber = 1;
    this.mode = 'edit';
    this.show(toFen(this.position.turn, new Map()));
  }

  reset() {
    this.undoStack = [];
    this.lastMove = null;
    this.moveNumber = 1;
    this.show(this.config.initialFen);
  }

  undo() {
    const previous = this.undoStack.pop();
    if (!previous) return;
    this.lastMove = previous.lastMove;
    this.moveNumber = previous.moveNumber || 1;
    this.show(previous.fen);
  }

  /** Draw `fen` at once and ask the server whether it is a legal position (and its legal moves). */
  show(fen) {
    try {
      this.position = parseFen(fen);
    } catch (err) {
      /* the server says why below */
    }
    this.fen = fen;
    this.info = null;
    this.best = null;
    this.path = [];
    this.redraw();
    return this.ask(fen, null);
  }

  /** A FEN typed or pasted: the board changes only if the server accepts it. */
  load(text) {
    return this.ask(String(text || '').trim(), null, { keepBoard: true });
  }

  /**
   * The "Load" box: a game's link or id (or a FEN pasted there). The board changes only when it
   * is found; otherwise the reason shows next to the box and the position stays.
   */
  async loadGame(text) {
    const value = String(text || '').trim();
    if (/^[BW]\s*:/i.test(value)) return this.ask(value, null, { keepBoard: true, errorTo: 'game' });
    if (!value) return this.failGame('Paste a game link (…/g/abc123/) or a game id first.');
    const id = gameIdFrom(value);
    if (!id) return this.failGame(`“${value}” is not a game link or id. A link looks like ${window.location.origin}/g/abc123/.`);
    this.gameLoading = true;
    this.gameError = null;
    this.redraw();
    let config = null;
    try {
      // The analysis page set up from that game carries its position (or why there is none).
      const response = await fetch(`${window.location.pathname}?${new URLSearchParams({ game: id })}`, {
        headers: { Accept: 'text/html' },
      });
      const page = new DOMParser().parseFromString(await response.text(), 'text/html');
      const node = page.getElementById('analysis-config');
      config = node ? JSON.parse(node.textContent) : null;
    } catch (err) {
      config = null;
    }
    this.gameLoading = false;
    if (!config) return this.failGame('The server could not be reached; try again.');
    if (config.error) return this.failGame(`No game “${id}” was found. Check the link for a typo.`);
    return this.ask(config.fen, null, {
      keepBoard: true,
      errorTo: 'game',
      moveNumber: moveNumberFrom(config.moveNumber) || 1,
    });
  }

  failGame(message) {
    this.gameLoading = false;
    this.gameError = message;
    this.redraw();
    return false;
  }

  /** Play a legal move (full notation) on the board. */
  play(move) {
    if (!this.valid || !this.info.legal.includes(move)) return Promise.resolve(false);
    return this.ask(this.fen, move);
  }

  /**
   * Ask the server about `fen` (after `move`, when given) and show it if accepted. `keepBoard`: a
   * position typed in, which replaces the board only when accepted; `errorTo`: where a refusal
   * shows ('fen' next to the FEN box, 'game' next to the Load box; moves at the top).
   */
  async ask(fen, move, { keepBoard = false, errorTo = 'fen', moveNumber = 1 } = {}) {
    const id = ++this.requests;
    this.loading = true;
    this.redraw();
    const params = new URLSearchParams({ fen });
    if (move) params.set('move', move);
    let data = null;
    let ok = false;
    try {
      const response = await fetch(`${this.config.positionUrl}?${params}`, { headers: { Accept: 'application/json' } });
      data = await response.json();
      ok = response.ok;
    } catch (err) {
      data = { message: 'The server could not be reached; try again.' };
    }
    if (id !== this.requests) return false;
    this.loading = false;
    if (!ok) {
      const message = data && data.message ? data.message : 'Refused.';
      const code = data ? data.error : null;
      if (move) this.error = message;
      else {
        const plain = code === 'bad_fen' ? plainFenError(message) : message;
        if (errorTo === 'game') this.gameError = plain;
        else this.fenError = plain;
      }
      if (!keepBoard && !move) this.info = null;
      this.redraw();
      return false;
    }
    if (move) {
      this.undoStack.push({ fen: this.fen, lastMove: this.lastMove, moveNumber: this.moveNumber });
      this.lastMove = move;
      if (this.position.turn === WHITE) this.moveNumber += 1; // White's reply ends the numbered pair
    } else if (keepBoard) {
      this.undoStack = [];
      this.lastMove = null;
      this.moveNumber = moveNumber;
    }
    this.error = null;
    this.fenError = null;
    if (!move) this.gameError = null;
    this.info = data;
    this.fen = data.fen;
    this.position = parseFen(data.fen);
    this.best = null;
    this.path = [];
    try {
      const number = this.moveNumber > 1 ? `&move_number=${this.moveNumber}` : '';
      window.history.replaceState(null, '', `?fen=${encodeURIComponent(data.fen)}${number}`);
    } catch (err) {
      /* a sandboxed page: the address stays */
    }
    this.redraw();
    return true;
  }

  // ---- the engine -------------------------------------------------------------

  async analyse(timeMs) {
    if (!this.valid || this.thinking) return false;
    const fen = this.fen;
    const token = document.querySelector('input[name="csrfmiddlewaretoken"]');
    this.thinking = true;
    this.best = null;
    this.redraw();
    let data = null;
    let ok = false;
    try {
      const response = await fetch(this.config.searchUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRFToken': token ? token.value : '' },
        body: JSON.stringify({ fen, time_ms: Number(timeMs) || this.config.defaultMs }),
      });
      data = await response.json();
      ok = response.ok;
    } catch (err) {
      data = { message: 'The engine could not be reached; try again.' };
    }
    this.thinking = false;
    if (fen !== this.fen) {
      this.redraw(); // the position changed meanwhile: the answer is for another one
      return false;
    }
    if (!ok) this.error = data && data.message ? data.message : 'The engine refused.';
    else {
      this.error = null;
      this.best = { ...data, moveNumber: this.moveNumber };
    }
    this.redraw();
    return ok;
  }

  toggleNumbers(on = !this.showNumbers) {
    this.showNumbers = !!on;
    saveFlag(NUMBERS_KEY, this.showNumbers);
    this.redraw();
  }
}

/** The engine's move on the board: highlighted squares and an arrow. */
function renderBest(board, ctrl) {
  const path = ctrl.best && ctrl.best.move ? movePath(ctrl.best.move) : [];
  const jumped = new Set();
  for (let i = 1; i < path.length; i++) {
    const mid = jumpedSquare(path[i - 1], path[i]);
    if (mid) jumped.add(mid);
  }
  for (const [n, entry] of board.cells) {
    entry.cell.classList.toggle('best-from', path.length > 0 && n === path[0]);
    entry.cell.classList.toggle('best-to', path.length > 0 && n === path[path.length - 1]);
    entry.cell.classList.toggle('best-jumped', jumped.has(n));
  }
  if (!board.svg) return;
  for (const node of Array.from(board.svg.querySelectorAll('.arrow-best'))) node.remove();
  if (path.length < 2) return;
  const line = document.createElementNS(SVG_NS, 'polyline');
  line.setAttribute('points', path.map((n) => {
    const { row, col } = board.displayOf(n);
    return `${col + 0.5},${row + 0.5}`;
  }).join(' '));
  line.setAttribute('class', 'arrow-best');
  line.setAttribute('marker-end', 'url(#arrowhead)');
  board.svg.appendChild(line);
}

function byId(id) {
  return document.getElementById(id);
}

function text(node, value) {
  if (node && node.textContent !== value) node.textContent = value;
}

function renderPanel(ctrl) {
  const turn = ctrl.position.turn;
  const info = ctrl.valid ? ctrl.info : null;
  let status;
  if (ctrl.loading) status = 'Checking the position…';
  else if (!info) status = ctrl.fenError ? `This position cannot be analysed. ${ctrl.fenError}` : '';
  else if (info.over) status = `${info.reason[0].toUpperCase()}${info.reason.slice(1)}: ${colorName(info.winner)} wins.`;
  else status = `${ctrl.moveNumber > 1 ? `Move ${ctrl.moveNumber} · ` : ''}${colorName(info.turn)} to move · ${info.legal.length} legal move${info.legal.length === 1 ? '' : 's'}${info.legal[0].includes('x') ? ' (a capture is compulsory)' : ''}`;
  text(byId('analysis-status'), status);
  const error = byId('analysis-error');
  text(error, ctrl.error || '');
  error.hidden = !ctrl.error;
  // Errors about positions sit next to the box they came from.
  for (const [box, field, message] of [
    ['fen-error', 'fen-input', ctrl.fenError],
    ['game-source-error', 'game-source', ctrl.gameError],
  ]) {
    const node = byId(box);
    text(node, message || '');
    node.hidden = !message;
    byId(field).setAttribute('aria-invalid', message ? 'true' : 'false');
  }
  const loadGame = byId('game-load');
  loadGame.disabled = ctrl.gameLoading;
  text(loadGame, ctrl.gameLoading ? 'Loading…' : 'Load');

  byId('mode-play').checked = ctrl.mode === 'play';
  byId('mode-edit').checked = ctrl.mode === 'edit';
  byId('setup-tools').disabled = ctrl.mode !== 'edit';
  byId('setup-tools').hidden = ctrl.mode !== 'edit'; // the piece palette only while setting up
  for (const input of document.querySelectorAll('input[name="tool"]')) input.checked = input.value === ctrl.tool;
  byId('turn-black').checked = turn === BLACK;
  byId('turn-white').checked = turn === WHITE;
  byId('undo').disabled = !ctrl.undoStack.length || ctrl.loading;
  byId('toggle-numbers').checked = ctrl.showNumbers;

  const fenInput = byId('fen-input');
  if (document.activeElement !== fenInput && fenInput.dataset.shown !== ctrl.fen) {
    fenInput.value = ctrl.fen;
    fenInput.dataset.shown = ctrl.fen;
  }

  const list = byId('legal-moves');
  const legalKey = info ? info.legal.join(' ') : '';
  if (list.dataset.key !== legalKey) {
    list.dataset.key = legalKey;
    list.replaceChildren(...(info ? info.legal : []).map((move) => {
      const li = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'legal-move';
      button.textContent = move;
      button.dataset.move = move;
      li.append(button);
      return li;
    }));
  }
  for (const button of list.querySelectorAll('button')) button.disabled = ctrl.loading;

  const analyse = byId('analyse');
  analyse.disabled = !info || info.over || ctrl.thinking || ctrl.loading;
  text(analyse, ctrl.thinking ? 'Thinking…' : 'Best move');

  const result = byId('engine-result');
  const best = ctrl.best;
  result.hidden = !best;
  if (best) {
    text(byId('engine-move'), best.move || '—');
    text(byId('engine-eval'), describeScore(best, best.turn));
    text(byId('engine-pv'), best.pv.length ? moveText(best.pv, best.turn, best.moveNumber || 1) : '—');
    const seconds = (best.elapsed_ms / 1000).toFixed(1);
    text(byId('engine-info'), `depth ${best.depth} · ${best.nodes.toLocaleString('en')} positions · ${seconds} s`);
    result.dataset.move = best.move || '';
    result.dataset.score = String(best.score);
    byId('play-best').disabled = !best.move || ctrl.loading;
  }

  const bottom = ctrl.orientation;
  text(byId('caption-bottom'), `${colorName(bottom)}${turn === bottom ? ' · to move' : ''}`);
  text(byId('caption-top'), `${colorName(opposite(bottom))}${turn !== bottom ? ' · to move' : ''}`);
  document.body.dataset.fen = ctrl.fen;
  document.body.dataset.valid = info ? '1' : '0';
}

async function copyText(input) {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(input.value);
      return true;
    } catch (err) {
      /* fall back below */
    }
  }
  input.focus();
  input.select();
  try {
    return document.execCommand('copy');
  } catch (err) {
    return false;
  }
}

function boot() {
  const node = byId('analysis-config');
  const boardEl = byId('board');
  if (!node || !boardEl) return;
  const config = JSON.parse(node.textContent);
  let board = null;
  const redraw = () => {
    if (!board) return;
    board.render();
    boardEl.classList.toggle('editing', ctrl.mode === 'edit');
    renderBest(board, ctrl);
    renderPanel(ctrl);
  };
  const ctrl = new AnalysisCtrl(config, redraw);
  board = new BoardView(boardEl, ctrl);

  for (const input of document.querySelectorAll('input[name="mode"]')) {
    input.addEventListener('change', () => {
      ctrl.mode = input.value;
      ctrl.path = [];
      redraw();
    });
  }
  for (const input of document.querySelectorAll('input[name="tool"]')) {
    input.addEventListener('change', () => {
      ctrl.tool = input.value;
      redraw();
    });
  }
  for (const input of document.querySelectorAll('input[name="turn"]')) {
    input.addEventListener('change', () => ctrl.setTurn(input.value));
  }
  byId('undo').addEventListener('click', () => ctrl.undo());
  byId('reset').addEventListener('click', () => ctrl.reset());
  byId('clear').addEventListener('click', () => ctrl.clear());
  byId('flip').addEventListener('click', () => {
    ctrl.flipped = !ctrl.flipped;
    redraw();
  });
  byId('toggle-numbers').addEventListener('change', (e) => ctrl.toggleNumbers(e.target.checked));
  byId('analyse').addEventListener('click', () => ctrl.analyse(byId('think-ms').value));
  byId('play-best').addEventListener('click', () => {
    if (ctrl.best && ctrl.best.move) ctrl.play(ctrl.best.move);
  });
  byId('legal-moves').addEventListener('click', (e) => {
    const button = e.target instanceof Element ? e.target.closest('button[data-move]') : null;
    if (button) ctrl.play(button.dataset.move);
  });
  const fenInput = byId('fen-input');
  byId('fen-load').addEventListener('click', () => ctrl.load(fenInput.value));
  fenInput.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      ctrl.load(fenInput.value);
    }
  });
  const copy = byId('fen-copy');
  copy.addEventListener('click', async () => {
    fenInput.value = ctrl.fen;
    const ok = await copyText(fenInput);
    text(copy, ok ? 'Copied!' : 'Press Ctrl+C');
    setTimeout(() => text(copy, 'Copy'), 2000);
  });

  const gameSource = byId('game-source');
  byId('game-source-form').addEventListener('submit', (e) => {
    e.preventDefault(); // found: the board shows it here; not found: the position stays
    ctrl.loadGame(gameSource.value);
  });
  gameSource.addEventListener('input', () => {
    if (ctrl.gameError) {
      ctrl.gameError = null;
      redraw();
    }
  });

  redraw();
  const params = new URLSearchParams(window.location.search); // before show() rewrites the address
  ctrl.show(config.fen).then(() => {
    if (!config.error) return;
    // Why the page's ?fen= or ?game= was not used: shown next to its box, with the text to fix.
    if (params.get('game') && !params.get('fen')) {
      gameSource.value = params.get('game');
      const id = gameIdFrom(params.get('game'));
      ctrl.gameError = id ? `No game “${id}” was found. Check the link for a typo.` : config.error;
    } else {
      ctrl.fenError = plainFenError(config.error);
      if (params.get('fen')) fenInput.value = params.get('fen');
    }
    redraw();
  });
  window.analysis = { ctrl, board };
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
