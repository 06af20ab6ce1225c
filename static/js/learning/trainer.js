// A board to learn on: the puzzle page and the lessons. It shows a position with the moves the
// server says are legal, lets the learner pick one as on the game page (the game's BoardView and
// RouteInput: click or drag), and hands the move's text to `onMove`; the server judges it.

import { BoardView } from '../view/board.js';
import { RouteInput } from '../input.js';
import { parseFen, BLACK, WHITE } from '../fen.js';
import { loadChoice, saveFlag } from '../storage.js';

// The learning boards show the square numbers the lessons and puzzles speak of ("9-14", "the man on
// 22") unless the learner turns them off (the box under the board), remembered apart from the game
// page's own setting, which is off by default.
const NUMBERS_KEY = 'checkers.learning.showNumbers';

export class Trainer {
  /**
   * @param {HTMLElement} boardEl  the board's element (role grid)
   * @param {function(string)} onMove  called with a legal move in full notation
   */
  constructor(boardEl, onMove) {
    this.onMove = onMove;
    this.fen = null;
    this.position = { pieces: new Map(), turn: BLACK };
    this.legalMoves = [];
    this.lastMove = null;
    this.side = WHITE;
    this.locked = false;
    this.input = new RouteInput(() => this.legal);
    // What the board view reads of a game controller.
    this.connection = 'open';
    this.connectionDetail = null;
    this.v = 0;
    this.syncing = false;
    this.pending = null;
    this.you = null;
    this.replaying = false;
    this.shownPly = 0;
    this.status = 'active';
    this.isOver = false;
    this.showNumbers = loadChoice(NUMBERS_KEY, true);
    this.showCoords = false;
    this.confirming = null;
    this.premoves = null;
    this.board = new BoardView(boardEl, this);
    this.wireNumbers(document.getElementById('board-numbers'));
  }

  /** The page's "Show square numbers" box (#board-numbers), if it has one. */
  wireNumbers(box) {
    if (!box) return;
    box.checked = this.showNumbers;
    box.addEventListener('change', () => {
      this.showNumbers = box.checked;
      saveFlag(NUMBERS_KEY, this.showNumbers);
      this.redraw();
    });
  }

  /** Show `fen` with `legal` moves to pick from (none: the board is read only), `lastMove` marked,
   *  from the side of `orientation` ('B' or 'W'). */
  show({ fen, legal = [], lastMove = null, orientation = null }) {
    this.fen = fen;
    this.position = parseFen(fen);
    this.legalMoves = legal;
    this.lastMove = lastMove;
    if (orientation) this.side = orientation;
    this.input.clear();
    this.redraw();
  }

  lock(on = true) {
    this.locked = on;
    this.input.clear();
    this.redraw();
  }

  get orientation() {
    return this.side;
  }

  get shownPosition() {
    return this.position;
  }

  get shownLastMove() {
    return this.lastMove;
  }

  get canInput() {
    return !this.locked && this.legalMoves.length > 0;
  }

  get isMyTurn() {
    return this.canInput;
  }

  get legal() {
    return this.canInput ? this.legalMoves : [];
  }

  cancel() {
    if (this.input.clear()) this.redraw();
  }

  select(n) {
    if (!this.canInput || !this.input.select(n)) return false;
    this.redraw();
    return true;
  }

  clickSquare(n) {
    if (this.canInput) this.follow(this.input.click(n));
  }

  drop(from, to) {
    if (this.canInput) this.follow(this.input.drop(from, to));
  }

  follow(step) {
    if (step.move) {
      this.input.clear();
      this.onMove(step.move);
    } else if (step.changed) this.redraw();
  }

  redraw() {
    this.board.render();
  }
}

/** The page's CSRF token (every page has the language form's). */
export function csrfToken() {
  const input = document.querySelector('input[name="csrfmiddlewaretoken"]');
  return input ? input.value : '';
}

/** POST `body` as JSON to `url`; resolves to {ok, status, data}. */
export async function postJson(url, body) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRFToken': csrfToken() },
    credentials: 'same-origin',
    body: JSON.stringify(body),
  });
  let data = {};
  try {
    data = await response.json();
  } catch (err) {
    data = {};
  }
  return { ok: response.ok, status: response.status, data };
}
