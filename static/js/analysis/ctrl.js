// The analysis board's state and actions: set up any position, play legal moves on it, load a
// game and step through its moves (game.js), and ask the engine for its best move, evaluation
// and line. The server is the judge of every position (GET /analysis/position), gives a game's
// moves (GET /analysis/game/<id>, or POST /analysis/pdn for a pasted record), and runs the
// engine (POST /analysis/search); this page only keeps what they answer (a refusal in plain
// words: load.js). The address names what is shown: ?game=<id>&ply=<n> on a stored game's
// position, ?fen= elsewhere.

import { BLACK, WHITE, parseFen } from '../fen.js';
import { RouteInput } from '../input.js';
import { loadFlag, saveFlag } from '../storage.js';
import { gettext, interpolate } from '../i18n.js';
import { csrfToken, plainFenError } from './load.js';
import { GameLoader } from './game.js';

const fmt = (format, values) => interpolate(format, values, true);

const NUMBERS_KEY = 'checkers.showNumbers';
const AUTO_KEY = 'checkers.analyseEveryPosition';
/** With "analyse every position" on, the engine starts once the board has stayed this long. */
const AUTO_DELAY_MS = 250;

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

/** A whole move number from the page's address or config (null when absent or not a number). */
function moveNumberFrom(value) {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n < 10000 ? n : null;
}

export class AnalysisCtrl {
  /**
   * @param {object} config  {fen, error, game, positionUrl, searchUrl, gameUrl, defaultMs, maxMs, initialFen}
   * @param {function} redraw  called after every change
   */
  constructor(config, redraw) {
    this.config = config;
    this.redraw = redraw || (() => {});
    this.fen = config.fen;
    this.position = parseFen(config.fen);
    this.info = null; // the server's view of this.fen: {fen, turn, legal, over, winner, reason, verdict}
    // What went wrong, each shown where it belongs: `fenError` (a position refused: next to the
    // FEN box), `gameError` (the "Load" box), `error` (the engine or a move: at the top).
    this.error = null;
    this.fenError = null;
    this.gameError = null;
    this.gameLoading = false;
    this.mode = 'play';
    this.tool = 'b';
    this.flipped = false;
    this.input = new RouteInput(() => this.legal);
    this.lastMove = null;
    this.undoStack = []; // earlier positions of the moves played here: [{fen, lastMove, moveNumber, gamePly}]
    this.best = null; // the engine's answer for this.fen
    // A game loaded from the server: {id, startFen, moves, fens, fen, status, first} (first: the
    // side that played ply 1). `gamePly`: the game's ply whose position the board shows (null: the
    // board has left the game, by moves played here); `branchPly`: the last of the game's plies
    // shown, from which the game is stepped through.
    this.game = null;
    this.gamePly = null;
    this.branchPly = null;
    this.loader = new GameLoader(this); // loads a game and steps through it (game.js)
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
    this.autoAnalyse = loadFlag(AUTO_KEY);
    this.autoTimer = null;
    // A FEN refused from the box: the box shows the board's position again (the refused text is
    // quoted in the error), told to the view once by this flag.
    this.fenBoxReset = false;
    this.loading = false;
    this.requests = 0; // answers to older requests are dropped
    this.typedIn = false; // whether the newest request is a position typed in (ask)
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

  // ---- input from the board ------------------------------------------------

  cancel() {
    if (this.input.clear()) this.redraw();
  }

  select(n) {
    if (!this.input.select(n)) return false;
    this.redraw();
    return true;
  }

  clickSquare(n) {
    if (this.mode === 'edit') {
      this.edit(n);
      return;
    }
    if (!this.canInput) return;
    this.follow(this.input.click(n));
  }

  drop(from, to) {
    if (!this.canInput) return;
    this.follow(this.input.drop(from, to));
  }

  /** Act on what a click or a drop did (see RouteInput). */
  follow(step) {
    if (step.move) this.play(step.move);
    else if (step.changed) this.redraw();
  }

  setMode(mode) {
    this.mode = mode === 'edit' ? 'edit' : 'play';
    this.input.clear();
    this.redraw();
  }

  setTool(tool) {
    this.tool = tool;
    this.redraw();
  }

  flip() {
    this.flipped = !this.flipped;
    this.redraw();
  }

  // ---- changing the position -------------------------------------------------

  /** A position not from the loaded game (set up, typed in): the game's moves no longer apply. */
  leaveGame() {
    this.game = null;
    this.gamePly = null;
    this.branchPly = null;
  }

  /** Start afresh from `fen`: nothing to take back, no last move, move `moveNumber`, no game. */
  restart(fen, moveNumber = 1) {
    this.leaveGame();
    this.undoStack = [];
    this.lastMove = null;
    this.moveNumber = moveNumber;
    return this.show(fen);
  }

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
    this.restart(toFen(this.position.turn, pieces));
  }

  setTurn(turn) {
    if (turn !== BLACK && turn !== WHITE) return;
    this.restart(toFen(turn, this.position.pieces));
  }

  clear() {
    this.mode = 'edit';
    this.restart(toFen(this.position.turn, new Map()));
  }

  reset() {
    this.restart(this.config.initialFen);
  }

  undo() {
    const previous = this.undoStack.pop();
    if (!previous) return;
    this.lastMove = previous.lastMove;
    this.moveNumber = previous.moveNumber || 1;
    this.gamePly = this.game ? previous.gamePly : null;
    if (this.gamePly !== null) this.branchPly = this.gamePly;
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
    this.input.clear();
    this.redraw();
    return this.ask(fen, null);
  }

  /** A FEN typed or pasted: the board changes only if the server accepts it. */
  load(text) {
    return this.ask(String(text || '').trim(), null, { keepBoard: true });
  }

  // ---- moves and the server's answers ---------------------------------------------

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
  async ask(fen, move, { keepBoard = false, errorTo = 'fen' } = {}) {
    const id = ++this.requests;
    this.typedIn = keepBoard; // the newest request: a position typed in (see below)
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
      data = { message: gettext('The server could not be reached; try again.') };
    }
    if (id !== this.requests) {
      // Overtaken by a position typed in (which may be refused and leave the board as it is):
      // what this answer says of the board's own position is kept, or the board would stay
      // "not yet checked" for good (and its address unwritten). Errors are the later one's to show.
      if (this.typedIn && ok && !move && !keepBoard && fen === this.fen && !this.info) {
        this.info = data;
        this.writeAddress();
        this.redraw();
      }
      return false;
    }
    this.loading = false;
    if (!ok) return this.refused(fen, move, data, { keepBoard, errorTo });
    this.accepted(move, data, keepBoard);
    return true;
  }

  /** The server refused `fen` (after `move`): say why where it belongs (see ask); false. */
  refused(fen, move, data, { keepBoard, errorTo }) {
    const message = data && data.message ? data.message : gettext('Refused.');
    const code = data ? data.error : null;
    if (move) this.error = message;
    else {
      const plain = code === 'bad_fen' ? plainFenError(message) : message;
      if (errorTo === 'game') this.gameError = plain;
      else if (keepBoard) {
        // The box goes back to the board's position; the refused text is quoted with the reason.
        this.fenError = fmt(gettext('“%(fen)s” was not set up: %(reason)s'), { fen: fen.slice(0, 120), reason: plain });
        this.fenBoxReset = true;
      } else this.fenError = plain;
    }
    if (!keepBoard && !move) this.info = null;
    this.redraw();
    return false;
  }

  /** The server accepted the position `data` (after `move`, when given): the board shows it. */
  accepted(move, data, keepBoard) {
    if (move) {
      this.undoStack.push({ fen: this.fen, lastMove: this.lastMove, moveNumber: this.moveNumber, gamePly: this.gamePly });
      this.lastMove = move;
      if (this.position.turn === WHITE) this.moveNumber += 1; // White's reply ends the numbered pair
      // The game's own next move keeps the board on the game; any other leaves it.
      const onGame = this.game && this.gamePly !== null && this.game.moves[this.gamePly] === move;
      this.gamePly = onGame ? this.gamePly + 1 : null;
      if (onGame) this.branchPly = this.gamePly;
    } else if (keepBoard) {
      this.leaveGame();
      this.undoStack = [];
      this.lastMove = null;
      this.moveNumber = 1;
    }
    this.error = null;
    this.fenError = null;
    if (!move) this.gameError = null;
    this.info = data;
    this.fen = data.fen;
    this.position = parseFen(data.fen);
    this.best = null;
    this.input.clear();
    this.writeAddress();
    this.redraw();
    this.scheduleAuto();
  }

  /** The address of what the board shows: a stored game's ply (?game=&ply=), else its FEN. */
  address() {
    const game = this.game;
    if (game && this.gamePly !== null) {
      if (game.id) return `?game=${encodeURIComponent(game.id)}&ply=${this.gamePly}`;
      return window.location.pathname; // a pasted record has no address of its own
    }
    const number = this.moveNumber > 1 ? `&move_number=${this.moveNumber}` : '';
    return `?fen=${encodeURIComponent(this.fen)}${number}`;
  }

  writeAddress() {
    try {
      const next = this.address();
      if (`${window.location.pathname}${window.location.search}` !== next && window.location.search !== next) {
        window.history.replaceState(null, '', next);
      }
    } catch (err) {
      /* a sandboxed page: the address stays */
    }
  }

  // ---- the engine on every position ------------------------------------------------

  setAutoAnalyse(on) {
    this.autoAnalyse = !!on;
    saveFlag(AUTO_KEY, this.autoAnalyse);
    this.redraw();
    this.scheduleAuto();
  }

  /** With "analyse every position" on: ask the engine about the position shown, once it has
   *  stayed AUTO_DELAY_MS (stepping quickly through a game starts no search per step). */
  scheduleAuto() {
    clearTimeout(this.autoTimer);
    this.autoTimer = null;
    if (!this.autoAnalyse || !this.valid || this.info.over || this.best) return;
    const fen = this.fen;
    this.autoTimer = setTimeout(() => {
      this.autoTimer = null;
      if (fen === this.fen && !this.thinking) this.analyse(this.thinkMs ? this.thinkMs() : this.config.defaultMs);
    }, AUTO_DELAY_MS);
  }

  // ---- the engine -------------------------------------------------------------

  async analyse(timeMs) {
    if (!this.valid || this.thinking) return false;
    const fen = this.fen;
    this.thinking = true;
    this.best = null;
    this.redraw();
    let data = null;
    let ok = false;
    try {
      const response = await fetch(this.config.searchUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRFToken': csrfToken() },
        body: JSON.stringify({ fen, time_ms: Number(timeMs) || this.config.defaultMs }),
      });
      data = await response.json();
      ok = response.ok;
    } catch (err) {
      data = { message: gettext('The engine could not be reached; try again.') };
    }
    this.thinking = false;
    if (fen !== this.fen) {
      this.redraw(); // the position changed meanwhile: the answer is for another one
      this.scheduleAuto();
      return false;
    }
    if (!ok) this.error = data && data.message ? data.message : gettext('The engine refused.');
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
