// The board: 8x8 cells from the viewer's side, pieces, highlights, and input
// (click/tap, drag and drop with pointer events, keyboard cursor). The route being picked is
// the controller's `input` (a RouteInput, input.js); while the opponent thinks, the game page's
// premove route (`ctrl.premoves`, premove.js) takes its place and is drawn apart. The last move
// shows its route and the pieces it captured (ghosts on their squares); a move waiting for
// confirmation (`ctrl.confirming`) is drawn as a route. Clicks and drops go to the controller.
// Coordinates (files and ranks on the edges) and square numbers are settings (settings.js).

import { BLACK, squareToRowCol, rowColToSquare, jumpedSquare, parseFen } from '../fen.js';
import { movePath } from '../notation.js';
import { gettext, interpolate } from '../i18n.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const DRAG_THRESHOLD_PX = 5;

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

export class BoardView {
  constructor(root, ctrl) {
    this.root = root;
    this.ctrl = ctrl;
    this.orientation = null;
    this.cells = new Map(); // square number -> {cell, piece, num}
    this.grid = []; // display [row][col] -> cell element
    this.cursor = null; // {row, col} in display coordinates
    this.drag = null;
    // The keyboard cursor shows only after keyboard use (Tab onto the board, arrows, Enter);
    // any pointer press on the board hides it again, so a click or a drag never leaves an
    // outline behind that looks like a selection.
    this.keyboard = false;
    this.pointerFocus = false; // true while the board focuses itself on a pointer press

    root.setAttribute('role', 'grid');
    root.setAttribute('tabindex', '0');
    root.addEventListener('pointerdown', (e) => this.onPointerDown(e));
    root.addEventListener('pointermove', (e) => this.onPointerMove(e));
    root.addEventListener('pointerup', (e) => this.onPointerUp(e));
    root.addEventListener('pointercancel', () => this.endDrag());
    root.addEventListener('lostpointercapture', () => this.endDrag());
    root.addEventListener('keydown', (e) => this.onKeyDown(e));
    root.addEventListener('focus', () => {
      if (!this.pointerFocus && root.matches(':focus-visible')) {
        this.keyboard = true;
        if (!this.cursor) this.cursor = this.initialCursor();
      }
      this.render();
    });
    root.addEventListener('blur', () => this.render());
    root.addEventListener('contextmenu', (e) => {
      if (this.drag) e.preventDefault();
    });
    document.addEventListener('pointerdown', (e) => {
      // A click elsewhere on the page cancels the route, a premove or a move awaiting
      // confirmation; the confirmation's own buttons ([data-keeps-route]) do not.
      const keep = e.target instanceof Element && e.target.closest('[data-keeps-route]');
      if (!root.contains(e.target) && !keep) ctrl.cancel();
    });
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') ctrl.cancel();
    });
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
    const input = this.routeInput(); // the route being picked (see input.js): a move or a premove
    const premoving = input !== ctrl.input;
    const movable = premoving ? new Set() : input.movable();
    const mustCapture = !premoving && input.mustCapture; // every legal move captures: ring the pieces that can
    const dests = input.destinations();
    const path = input.path;
    const confirming = ctrl.confirming ? movePath(ctrl.confirming) : [];
    const selected = path.length ? path[0] : null;
    const tip = path.length ? path[path.length - 1] : null;
    const shownLast = ctrl.shownLastMove;
    const last = shownLast ? movePath(shownLast) : [];
    const lastFrom = last.length ? last[0] : null;
    const lastTo = last.length ? last[last.length - 1] : null;
    const lastVia = new Set(last.slice(1, -1));
    const captured = this.capturedBy(last); // square -> the piece the last move took there
    const routeSet = new Set(path.slice(1));
    const jumped = new Set();
    for (let i = 1; i < path.length; i++) {
      const mid = jumpedSquare(path[i - 1], path[i]);
      if (mid) jumped.add(mid);
    }
    const showCursor = !!(this.cursor && this.keyboard && document.activeElement === this.root);
    const cursorSq = showCursor ? this.squareAtDisplay(this.cursor.row, this.cursor.col) : null;
    const dragFrom = this.drag && this.drag.active ? this.drag.from : null;

    const root = this.root;
    root.classList.toggle('keyboard-focus', !!(this.keyboard && document.activeElement === root));
    root.classList.toggle('show-numbers', ctrl.showNumbers);
    root.classList.toggle('show-coords', !!ctrl.showCoords);
    root.classList.toggle('premoving', premoving && path.length > 0);
    root.classList.toggle('confirming', confirming.length > 0);
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

    for (const [n, entry] of this.cells) {
      const piece = pieces.get(n) || null;
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
      const classes = ['sq', 'dark'];
      if (movable.has(n) && !path.length) classes.push('movable');
      else if (movable.has(n)) classes.push('movable-other');
      if (mustCapture && movable.has(n)) classes.push('must-capture');
      if (premoving) {
        if (n === selected) classes.push('premove-from');
        if (routeSet.has(n)) classes.push('premove-route');
        if (n === tip && path.length > 1) classes.push('premove-tip');
        if (dests.has(n)) classes.push('premove-dest');
      } else {
        if (n === selected) classes.push('selected');
        if (n === selected && path.length > 1) classes.push('lifted');
        if (jumped.has(n)) classes.push('jumped');
        if (routeSet.has(n)) classes.push('route');
        if (n === tip && path.length > 1) classes.push('route-tip');
      }
      if (dests.has(n)) classes.push('dest');
      if (confirming.length && n === confirming[0]) classes.push('confirm-from');
      if (confirming.length && n === confirming[confirming.length - 1]) classes.push('confirm-to');
      if (captured.has(n)) classes.push('captured');
      if (dests.has(n) && piece) classes.push('occupied');
      if (n === lastFrom) classes.push('last-from');
      if (n === lastTo) classes.push('last-to');
      if (lastVia.has(n)) classes.push('last-via');
      if (n === cursorSq) classes.push('cursor');
      if (n === dragFrom) classes.push('drag-origin');
      const cls = classes.join(' ');
      if (entry.cell.className !== cls) entry.cell.className = cls;

      const label = [interpolate(gettext('square %(n)s, %(piece)s'), { n, piece: pieceLabel(piece) }, true)];
      if (n === selected) label.push(gettext('selected'));
      if (jumped.has(n)) label.push(gettext('jumped'));
      if (dests.has(n)) label.push(gettext('move here'));
      else if (movable.has(n) && !path.length) label.push(mustCapture ? gettext('can capture') : gettext('can move'));
      if (n === lastFrom || n === lastTo) label.push(gettext('last move'));
      if (captured.has(n)) label.push(gettext('captured by the last move'));
      if (premoving && n === selected) label.push(gettext('premove from here'));
      if (premoving && routeSet.has(n)) label.push(gettext('premove to here'));
      const aria = label.join(', ');
      if (entry.cell.getAttribute('aria-label') !== aria) entry.cell.setAttribute('aria-label', aria);
      entry.cell.setAttribute('aria-selected', n === selected ? 'true' : 'false');
    }

    // Light squares can carry the cursor too.
    for (let row = 0; row < 8; row++) {
      for (let col = 0; col < 8; col++) {
        const cell = this.grid[row][col];
        if (cell.dataset.square) continue;
        const on = showCursor && this.cursor.row === row && this.cursor.col === col;
        cell.classList.toggle('cursor', on);
      }
    }

    // The pieces the last move captured, ghosted on their squares until the next move.
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

    // Ghost of the selected piece on the tip of an unfinished multi-jump (or of a premove route).
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

    this.renderArrows(last, premoving ? [] : path, premoving ? path : [], confirming);

    if (showCursor) {
      root.setAttribute('aria-activedescendant', this.grid[this.cursor.row][this.cursor.col].id);
    } else {
      root.removeAttribute('aria-activedescendant');
    }

    const overlayText =
      ctrl.connection === 'open'
        ? ctrl.syncing
          ? gettext('Updating…')
          : ''
        : ctrl.connectionDetail === 'no_such_game'
          ? gettext('This game does not exist')
          : ctrl.connectionDetail === 'too_many_sockets'
            ? gettext('Too many pages open')
            : ctrl.v === null
            ? gettext('Connecting…')
            : gettext('Reconnecting…');
    this.overlay.textContent = overlayText;
    this.overlay.hidden = !overlayText;
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

  // ---- pointer input -------------------------------------------------------

  squareFromEvent(e) {
    const target = e.target instanceof Element ? e.target.closest('[data-square]') : null;
    return target && this.root.contains(target) ? Number(target.dataset.square) : null;
  }

  squareAtPoint(x, y) {
    const hit = document.elementFromPoint(x, y);
    const target = hit ? hit.closest('[data-square]') : null;
    return target && this.root.contains(target) ? Number(target.dataset.square) : null;
  }

  onPointerDown(e) {
    if (e.button !== undefined && e.button !== 0) return;
    this.keyboard = false;
    this.cursor = null; // the next arrow key shows the cursor afresh (on the selected piece)
    if (document.activeElement !== this.root) {
      // Arrows work after a click; this focus is the pointer's, not the keyboard's.
      this.pointerFocus = true;
      try {
        this.root.focus({ preventScroll: true });
      } finally {
        this.pointerFocus = false;
      }
    }
    const n = this.squareFromEvent(e);
    const ctrl = this.ctrl;
    if (n === null) {
      ctrl.cancel();
      return;
    }
    const route = this.routeInput();
    const { path, tip } = route;
    const premoving = route !== ctrl.input;
    const canPick = ctrl.canInput || (premoving && ctrl.premoves.active);
    // A premove may go onto a square one's own piece holds now (it may be taken meanwhile): a
    // press there extends the route instead of picking that piece.
    const onDest = path.length > 0 && route.destinations().has(n);
    const draggable = canPick && !onDest && (route.movable().has(n) || (path.length > 1 && n === tip));
    this.drag = { from: n, x: e.clientX, y: e.clientY, active: false, draggable, pointerId: e.pointerId, floater: null, selectedOnDown: false };
    if (draggable) {
      // Select on press, as lichess does, so the destinations show while dragging.
      const alreadySelected = (path.length === 1 && path[0] === n) || (path.length > 1 && n === tip);
      if (!alreadySelected) this.drag.selectedOnDown = ctrl.select(n);
      e.preventDefault(); // no text selection, no touch scrolling from a piece
      try {
        this.root.setPointerCapture(e.pointerId);
      } catch (err) {
        /* synthetic events */
      }
    }
  }

  onPointerMove(e) {
    const d = this.drag;
    if (!d || !d.draggable || e.pointerId !== d.pointerId) return;
    if (!d.active) {
      if (Math.hypot(e.clientX - d.x, e.clientY - d.y) < DRAG_THRESHOLD_PX) return;
      d.active = true;
      this.startFloater(d);
      this.render();
    }
    this.moveFloater(d, e.clientX, e.clientY);
    const over = this.squareAtPoint(e.clientX, e.clientY);
    for (const entry of this.cells.values()) entry.cell.classList.toggle('drag-over', Number(entry.cell.dataset.square) === over);
  }

  onPointerUp(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.pointerId) return;
    const wasActive = d.active;
    this.endDrag();
    if (wasActive) {
      this.ctrl.drop(d.from, this.squareAtPoint(e.clientX, e.clientY));
    } else if (!d.selectedOnDown) {
      this.ctrl.clickSquare(d.from);
    }
  }

  startFloater(d) {
    const entry = this.cells.get(d.from);
    const ctrl = this.ctrl;
    const { path, tip } = this.routeInput();
    const onTip = path.length > 1 && d.from === tip;
    const piece = ctrl.position.pieces.get(onTip ? path[0] : d.from);
    if (!piece) return;
    const cellRect = entry.cell.getBoundingClientRect();
    const side = cellRect.width * 0.82;
    const rect = { width: side, height: side };
    const f = el('div', `piece ${piece.color === BLACK ? 'black' : 'white'} ${piece.king ? 'king' : 'man'} dragging`, {
      'aria-hidden': 'true',
    });
    f.style.width = `${rect.width}px`;
    f.style.height = `${rect.height}px`;
    d.floater = f;
    d.size = rect.width;
    document.body.appendChild(f);
  }

  moveFloater(d, x, y) {
    if (!d.floater) return;
    d.floater.style.transform = `translate(${x - d.size / 2}px, ${y - d.size / 2}px)`;
  }

  endDrag() {
    const d = this.drag;
    if (!d) return;
    this.drag = null;
    if (d.floater) d.floater.remove();
    for (const entry of this.cells.values()) entry.cell.classList.remove('drag-over');
    try {
      if (this.root.hasPointerCapture && this.root.hasPointerCapture(d.pointerId)) this.root.releasePointerCapture(d.pointerId);
    } catch (err) {
      /* nothing */
    }
    if (d.active) this.render();
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
