// The board: 8x8 cells from the viewer's side, pieces, highlights, and input (click/tap, drag
// and drop with pointer events: board-drag.js; keyboard cursor). The route being picked is
// the controller's `input` (a RouteInput, input.js); while the opponent thinks, the game page's
// premove route (`ctrl.premoves`, premove.js) takes its place and is drawn apart. The last move
// shows its route and the pieces it captured (ghosts on their squares); a move waiting for
// confirmation (`ctrl.confirming`) is drawn as a route. Clicks and drops go to the controller.
// Coordinates (files and ranks on the edges) and square numbers are settings (settings.js).

import { BLACK, squareToRowCol, rowColToSquare, jumpedSquare, parseFen } from '../fen.js';
import { movePath } from '../notation.js';
import { gettext, interpolate } from '../i18n.js';
import { BoardPointer } from './board-drag.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

function el(tag, className, attrs = {}) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

function pieceLabel(piece) {
  if (!piece) return gettext('empty');
  if (piece.color === BLACK) return piece.king ? gettext('black king') : gettext('black man');
  return piece.king ? gettext('white king') : gettext('white man');
}

/** Dark square n's classes, from its piece and the board's marks (BoardView.marks). */
function squareClasses(n, piece, m) {
  const classes = ['sq', 'dark'];
  const add = (cls, on) => {
    if (on) classes.push(cls);
  };
  if (m.movable.has(n) && !m.path.length) classes.push('movable');
  else if (m.movable.has(n)) classes.push('movable-other');
  add('must-capture', m.mustCapture && m.movable.has(n));
  if (m.premoving) {
    add('premove-from', n === m.selected);
    add('premove-route', m.routeSet.has(n));
    add('premove-tip', n === m.tip && m.path.length > 1);
    add('premove-dest', m.dests.has(n));
  } else {
    add('selected', n === m.selected);
    add('lifted', n === m.selected && m.path.length > 1);
    add('jumped', m.jumped.has(n));
    add('route', m.routeSet.has(n));
    add('route-tip', n === m.tip && m.path.length > 1);
  }
  add('dest', m.dests.has(n));
  add('confirm-from', m.confirming.length && n === m.confirming[0]);
  add('confirm-to', m.confirming.length && n === m.confirming[m.confirming.length - 1]);
  add('captured', m.captured.has(n));
  add('occupied', m.dests.has(n) && piece);
  add('last-from', n === m.lastFrom);
  add('last-to', n === m.lastTo);
  add('last-via', m.lastVia.has(n));
  add('cursor', n === m.cursorSq);
  add('drag-origin', n === m.dragFrom);
  return classes.join(' ');
}

/** Dark square n's label for screen readers: its number, its piece and its marks. */
function squareLabel(n, piece, m) {
  const label = [interpolate(gettext('square %(n)s, %(piece)s'), { n, piece: pieceLabel(piece) }, true)];
  if (n === m.selected) label.push(gettext('selected'));
  if (m.jumped.has(n)) label.push(gettext('jumped'));
  if (m.dests.has(n)) label.push(gettext('move here'));
  else if (m.movable.has(n) && !m.path.length) label.push(m.mustCapture ? gettext('can capture') : gettext('can move'));
  if (n === m.lastFrom || n === m.lastTo) label.push(gettext('last move'));
  if (m.captured.has(n)) label.push(gettext('captured by the last move'));
  if (m.premoving && n === m.selected) label.push(gettext('premove from here'));
  if (m.premoving && m.routeSet.has(n)) label.push(gettext('premove to here'));
  return label.join(', ');
}

export class BoardView {
  /** `signal` (an AbortSignal, optional) ends the board's listeners on the document. */
  constructor(root, ctrl, signal = undefined) {
    this.root = root;
    this.ctrl = ctrl;
    this.orientation = null;
    this.cells = new Map(); // square number -> {cell, piece, num}
    this.grid = []; // display [row][col] -> cell element
    this.cursor = null; // {row, col} in display coordinates
    this.pointer = new BoardPointer(this); // clicks, taps and drags (board-drag.js)
    // The keyboard cursor shows only after keyboard use (Tab onto the board, arrows, Enter);
    // any pointer press on the board hides it again, so a click or a drag never leaves an
    // outline behind that looks like a selection.
    this.keyboard = false;
    this.pointerFocus = false; // true while the board focuses itself on a pointer press

    root.setAttribute('role', 'grid');
    root.setAttribute('tabindex', '0');
    this.pointer.listen();
    root.addEventListener('keydown', (e) => this.onKeyDown(e));
    root.addEventListener('focus', () => {
      if (!this.pointerFocus && root.matches(':focus-visible')) {
        this.keyboard = true;
        if (!this.cursor) this.cursor = this.initialCursor();
      }
      this.render();
    });
    root.addEventListener('blur', () => this.render());
    document.addEventListener('pointerdown', (e) => {
      // A click elsewhere on the page cancels the route, a premove or a move awaiting
      // confirmation; the confirmation's own buttons ([data-keeps-route]) do not.
      const keep = e.target instanceof Element && e.target.closest('[data-keeps-route]');
      if (!root.contains(e.target) && !keep) ctrl.cancel();
    }, { signal });
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') ctrl.cancel();
    }, { signal });
  }

  // ---- geometry ------------------------------------------------------------

  /** Display {row, col} of square n for the current orientation. */
  displayOf(n) {
    const { row, col } = squareToRowCol(n);
    return this.orientation === BLACK ? { row: 7 - row, col: 7 - col } : { row, col };
  }

  squareAtDisplay(row, col) {
    return this.orientation === BLACK ? rowColToSquare(7 - row, 7 - col) : rowColToSquare(row, col);
  }

  // ---- building ------------------------------------------------------------

  build() {
    this.orientation = this.ctrl.orientation;
    this.root.textContent = '';
    this.cells.clear();
    this.grid = [];
    this.root.dataset.orientation = this.orientation === BLACK ? 'black' : 'white';
    const files = 'abcdefgh';
    for (let row = 0; row < 8; row++) {
      const rowEl = el('div', 'board-row', { role: 'row' });
      this.grid.push([]);
      for (let col = 0; col < 8; col++) {
        const n = this.squareAtDisplay(row, col);
        const cell = el('div', n ? 'sq dark' : 'sq light', { role: 'gridcell' });
        const rc = this.orientation === BLACK ? { r: 7 - row, c: 7 - col } : { r: row, c: col };
        cell.dataset.name = files[rc.c] + String(8 - rc.r);
        cell.id = n ? `sq-${n}` : `cell-${files[rc.c]}${8 - rc.r}`;
        if (row === 7) {
          // Drawn by CSS from data-coord: no text in the square, whose label names it (axe: a
          // square's visible text must be part of its accessible name).
          const file = el('span', 'coord coord-file', { 'aria-hidden': 'true' });
          file.dataset.coord = files[rc.c];
          cell.appendChild(file);
        }
        if (col === 0) {
          const rank = el('span', 'coord coord-rank', { 'aria-hidden': 'true' });
          rank.dataset.coord = String(8 - rc.r);
          cell.appendChild(rank);
        }
        if (n) {
          cell.dataset.square = String(n);
          const num = el('span', 'sq-num', { 'aria-hidden': 'true' });
          num.textContent = String(n);
          cell.appendChild(num);
          this.cells.set(n, { cell, piece: null, pieceKey: '', num });
        } else {
          // Named, not hidden: the keyboard cursor (aria-activedescendant) may rest on it.
          cell.setAttribute('aria-label', interpolate(gettext('%(name)s, light square'), { name: cell.dataset.name }, true));
        }
        rowEl.appendChild(cell);
        this.grid[row].push(cell);
      }
      this.root.appendChild(rowEl);
    }
    this.svg = document.createElementNS(SVG_NS, 'svg');
    this.svg.setAttribute('class', 'board-arrows');
    this.svg.setAttribute('viewBox', '0 0 8 8');
    this.svg.setAttribute('aria-hidden', 'true');
    this.svg.innerHTML =
      '<defs><marker id="arrowhead" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="3" markerHeight="3" orient="auto-start-reverse">' +
      '<path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>';
    this.root.appendChild(this.svg);
    this.overlay = el('div', 'board-overlay', { 'aria-hidden': 'true' });
    this.root.appendChild(this.overlay);
  }

  // ---- rendering -------------------------------------------------------------

  render() {
    const ctrl = this.ctrl;
    if (this.orientation !== ctrl.orientation) {
      this.build();
      this.cursor = null;
    }
    const pieces = ctrl.shownPosition.pieces;
    const marks = this.marks();
    this.renderRoot(marks);
    for (const [n, entry] of this.cells) this.renderSquare(n, entry, pieces.get(n) || null, marks);
    this.renderLightCursor(marks.showCursor);
    this.renderCaptured(pieces, marks.captured);
    this.renderRouteGhost(pieces, marks);
    const { premoving, path } = marks;
    this.renderArrows(marks.last, premoving ? [] : path, premoving ? path : [], marks.confirming);
    if (marks.showCursor) {
      this.root.setAttribute('aria-activedescendant', this.grid[this.cursor.row][this.cursor.col].id);
    } else {
      this.root.removeAttribute('aria-activedescendant');
    }
    const overlayText = this.overlayText();
    this.overlay.textContent = overlayText;
    this.overlay.hidden = !overlayText;
  }

  /** What the squares show besides their pieces: the route being picked (a move or a premove), the
   *  move awaiting confirmation, the last move and what it captured, the cursor, a drag's origin. */
  marks() {
    const ctrl = this.ctrl;
    const input = this.routeInput(); // the route being picked (see input.js): a move or a premove
    const premoving = input !== ctrl.input;
    const movable = premoving ? new Set() : input.movable();
    const path = input.path;
    const shownLast = ctrl.shownLastMove;
    const last = shownLast ? movePath(shownLast) : [];
    const jumped = new Set();
    for (let i = 1; i < path.length; i++) {
      const mid = jumpedSquare(path[i - 1], path[i]);
      if (mid) jumped.add(mid);
    }
    const showCursor = !!(this.cursor && this.keyboard && document.activeElement === this.root);
    return {
      input,
      premoving,
      movable,
      mustCapture: !premoving && input.mustCapture, // every legal move captures: ring the pieces that can
      dests: input.destinations(),
      path,
      confirming: ctrl.confirming ? movePath(ctrl.confirming) : [],
      selected: path.length ? path[0] : null,
      tip: path.length ? path[path.length - 1] : null,
      last,
      lastFrom: last.length ? last[0] : null,
      lastTo: last.length ? last[last.length - 1] : null,
      lastVia: new Set(last.slice(1, -1)),
      captured: this.capturedBy(last), // square -> the piece the last move took there
      routeSet: new Set(path.slice(1)),
      jumped,
      showCursor,
      cursorSq: showCursor ? this.squareAtDisplay(this.cursor.row, this.cursor.col) : null,
      dragFrom: this.pointer.origin,
    };
  }

  /** The board's own classes and data: focus, settings, whose turn, the game's and the socket's state. */
  renderRoot(marks) {
    const { ctrl, root } = this;
    const { premoving, path, input } = marks;
    root.classList.toggle('keyboard-focus', !!(this.keyboard && document.activeElement === root));
    root.classList.toggle('show-numbers', ctrl.showNumbers);
    root.classList.toggle('show-coords', !!ctrl.showCoords);
    root.classList.toggle('premoving', premoving && path.length > 0);
    root.classList.toggle('confirming', marks.confirming.length > 0);
    root.dataset.premove = premoving && path.length > 1 ? input.text : '';
    root.classList.toggle('interactive', ctrl.canInput);
    root.classList.toggle('my-turn', ctrl.isMyTurn);
    root.classList.toggle('over', ctrl.isOver);
    root.classList.toggle('syncing', ctrl.syncing);
    root.classList.toggle('pending', !!ctrl.pending);
    root.classList.toggle('replaying', ctrl.replaying);
    root.dataset.shownPly = String(ctrl.shownPly);
    root.dataset.state = ctrl.connection;
    root.setAttribute('aria-readonly', ctrl.canInput ? 'false' : 'true');
  }

  /** Dark square n: its piece, its classes and its label. */
  renderSquare(n, entry, piece, marks) {
    const key = piece ? `${piece.color}${piece.king ? 'K' : 'M'}` : '';
    if (key !== entry.pieceKey) {
      if (entry.piece) entry.piece.remove();
      entry.piece = null;
      if (piece) {
        entry.piece = el('div', `piece ${piece.color === BLACK ? 'black' : 'white'} ${piece.king ? 'king' : 'man'}`, {
          'aria-hidden': 'true',
        });
        entry.cell.appendChild(entry.piece);
      }
      entry.pieceKey = key;
    }
    const cls = squareClasses(n, piece, marks);
    if (entry.cell.className !== cls) entry.cell.className = cls;
    const aria = squareLabel(n, piece, marks);
    if (entry.cell.getAttribute('aria-label') !== aria) entry.cell.setAttribute('aria-label', aria);
    entry.cell.setAttribute('aria-selected', n === marks.selected ? 'true' : 'false');
  }

  /** Light squares can carry the cursor too. */
  renderLightCursor(showCursor) {
    for (let row = 0; row < 8; row++) {
      for (let col = 0; col < 8; col++) {
        const cell = this.grid[row][col];
        if (cell.dataset.square) continue;
        const on = showCursor && this.cursor.row === row && this.cursor.col === col;
        cell.classList.toggle('cursor', on);
      }
    }
  }

  /** The pieces the last move captured, ghosted on their squares until the next move. */
  renderCaptured(pieces, captured) {
    for (const [n, entry] of this.cells) {
      const took = captured.get(n);
      const key = took && !pieces.get(n) ? `${took.color}${took.king ? 'K' : 'M'}` : '';
      if (key === (entry.capturedKey || '')) continue;
      if (entry.capturedGhost) entry.capturedGhost.remove();
      entry.capturedGhost = null;
      entry.capturedKey = key;
      if (key) {
        entry.capturedGhost = el('div', `captured-ghost ${took.color === BLACK ? 'ghost-black' : 'ghost-white'}${took.king ? ' ghost-king' : ''}`, {
          'aria-hidden': 'true',
        });
        entry.cell.appendChild(entry.capturedGhost);
      }
    }
  }

  /** Ghost of the selected piece on the tip of an unfinished multi-jump (or of a premove route). */
  renderRouteGhost(pieces, { path, selected, tip, premoving }) {
    if (this.ghost) {
      this.ghost.remove();
      this.ghost = null;
    }
    if (path.length > 1 && pieces.get(selected)) {
      const p = pieces.get(selected);
      this.ghost = el('div', `route-ghost${premoving ? ' premove-ghost' : ''} ${p.color === BLACK ? 'ghost-black' : 'ghost-white'}${p.king ? ' ghost-king' : ''}`, {
        'aria-hidden': 'true',
      });
      this.cells.get(tip).cell.appendChild(this.ghost);
    }
  }

  /** What covers the board: the socket's state, or '' when it is in play. */
  overlayText() {
    const ctrl = this.ctrl;
    if (ctrl.connection === 'open') return ctrl.syncing ? gettext('Updating…') : '';
    if (ctrl.connectionDetail === 'no_such_game') return gettext('This game does not exist');
    if (ctrl.connectionDetail === 'too_many_sockets') return gettext('Too many pages open');
    return ctrl.v === null ? gettext('Connecting…') : gettext('Reconnecting…');
  }

  renderArrows(last, path, premove = [], confirming = []) {
    const svg = this.svg;
    for (const node of Array.from(svg.querySelectorAll('polyline'))) node.remove();
    const line = (squares, cls) => {
      if (squares.length < 2) return;
      const points = squares
        .map((n) => {
          const { row, col } = this.displayOf(n);
          return `${col + 0.5},${row + 0.5}`;
        })
        .join(' ');
      const pl = document.createElementNS(SVG_NS, 'polyline');
      pl.setAttribute('points', points);
      pl.setAttribute('class', cls);
      pl.setAttribute('marker-end', 'url(#arrowhead)');
      svg.appendChild(pl);
    };
    line(last, 'arrow-last');
    line(path, 'arrow-route');
    line(premove, 'arrow-premove');
    line(confirming, 'arrow-confirm');
  }

  /** The route input the board shows and feeds: the game's move, or its premove while the opponent thinks. */
  routeInput() {
    const ctrl = this.ctrl;
    const premoves = ctrl.premoves;
    if (!ctrl.canInput && premoves && (premoves.active || premoves.path.length)) return premoves.input;
    return ctrl.input;
  }

  /**
   * The pieces the move along `last` (its squares) captured: square -> {color, king}. Each hop of
   * two diagonal squares jumped the square between (American checkers has no long jumps); what
   * stood there comes from the position before the move when the controller knows it (fenAt), else
   * it is taken for a man of the other side than the piece that moved.
   */
  capturedBy(last) {
    const out = new Map();
    if (last.length < 2) return out;
    const ctrl = this.ctrl;
    let before = null;
    const fen = typeof ctrl.fenAt === 'function' && ctrl.shownPly > 0 ? ctrl.fenAt(ctrl.shownPly - 1) : null;
    if (fen) {
      if (this.beforeFen !== fen) {
        try {
          this.beforePieces = parseFen(fen).pieces;
        } catch (err) {
          this.beforePieces = null;
        }
        this.beforeFen = fen;
      }
      before = this.beforePieces;
    }
    const mover = ctrl.shownPosition.pieces.get(last[last.length - 1]);
    for (let i = 1; i < last.length; i++) {
      const mid = jumpedSquare(last[i - 1], last[i]);
      if (!mid) continue;
      const was = before ? before.get(mid) : null;
      out.set(mid, was || { color: mover ? (mover.color === BLACK ? 'W' : BLACK) : 'W', king: false });
    }
    return out;
  }

  // ---- keyboard ------------------------------------------------------------

  onKeyDown(e) {
    const ctrl = this.ctrl;
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && !this.selecting()) {
      return; // not choosing a move: the page's replay keys take Left and Right
    }
    if (moves[e.key]) {
      e.preventDefault();
      if (!this.keyboard || !this.cursor) {
        // The cursor was hidden (pointer input since): this key only shows it.
        this.keyboard = true;
        if (!this.cursor) this.cursor = this.initialCursor();
      } else {
        const [dr, dc] = moves[e.key];
        this.cursor = {
          row: Math.min(7, Math.max(0, this.cursor.row + dr)),
          col: Math.min(7, Math.max(0, this.cursor.col + dc)),
        };
      }
      this.render();
      return;
    }
    if (e.key === 'Enter' || e.key === ' ' || e.key === 'Spacebar') {
      e.preventDefault();
      const hidden = !this.keyboard;
      this.keyboard = true;
      if (!this.cursor || hidden) {
        if (!this.cursor) this.cursor = this.initialCursor();
        this.render();
        return;
      }
      const n = this.squareAtDisplay(this.cursor.row, this.cursor.col);
      if (n) ctrl.clickSquare(n);
      else ctrl.cancel();
      this.render();
      return;
    }
    if (e.key === 'Escape') {
      ctrl.cancel();
    }
  }

  /**
   * True while Left/Right belong to the board's cursor: a piece is selected, or a seated player
   * is using the keyboard cursor in a game in play (on either turn, so that waiting for the
   * opponent never turns arrow presses into replay steps). Otherwise they step through the moves.
   */
  selecting() {
    const ctrl = this.ctrl;
    if (ctrl.input.path.length > 0) return true;
    return (
      this.keyboard &&
      document.activeElement === this.root &&
      !!ctrl.you &&
      ctrl.status === 'active' &&
      !ctrl.replaying
    );
  }

  /** Where the cursor starts: the selected piece, else the first movable piece, else bottom-left dark square. */
  initialCursor() {
    const ctrl = this.ctrl;
    const start = ctrl.input.tip || [...ctrl.input.movable()][0];
    if (start) return this.displayOf(start);
    return { row: 7, col: 0 };
  }
}
