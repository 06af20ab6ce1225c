// The board's pointer input: a click or a tap on a square, and a piece dragged to another square
// (pointer events, so a mouse, a pen and a finger alike). A press on a piece that can move
// selects it at once, as lichess does, so its destinations show while it is dragged; a piece
// moved past a few pixels is dragged, drawn under the pointer, and dropped where the pointer is
// let go. What a click or a drop means is the controller's (ctrl.clickSquare, ctrl.drop).

import { BLACK } from '../fen.js';

const DRAG_THRESHOLD_PX = 5;

export class BoardPointer {
  /** @param {BoardView} view  the board (board.js): its squares, its route input and its keyboard cursor */
  constructor(view) {
    this.view = view;
    this.drag = null; // the press in progress: {from, x, y, active, draggable, pointerId, floater, selectedOnDown}
  }

  /** Listen to the board's pointer events. */
  listen() {
    const root = this.view.root;
    root.addEventListener('pointerdown', (e) => this.onPointerDown(e));
    root.addEventListener('pointermove', (e) => this.onPointerMove(e));
    root.addEventListener('pointerup', (e) => this.onPointerUp(e));
    root.addEventListener('pointercancel', () => this.end());
    root.addEventListener('lostpointercapture', () => this.end());
    root.addEventListener('contextmenu', (e) => {
      if (this.drag) e.preventDefault();
    });
  }

  /** The square a piece is being dragged from (null: no drag under way). */
  get origin() {
    return this.drag && this.drag.active ? this.drag.from : null;
  }

  squareFromEvent(e) {
    const target = e.target instanceof Element ? e.target.closest('[data-square]') : null;
    return target && this.view.root.contains(target) ? Number(target.dataset.square) : null;
  }

  squareAtPoint(x, y) {
    const hit = document.elementFromPoint(x, y);
    const target = hit ? hit.closest('[data-square]') : null;
    return target && this.view.root.contains(target) ? Number(target.dataset.square) : null;
  }

  onPointerDown(e) {
    if (e.button !== undefined && e.button !== 0) return;
    const view = this.view;
    view.keyboard = false;
    view.cursor = null; // the next arrow key shows the cursor afresh (on the selected piece)
    if (document.activeElement !== view.root) {
      // Arrows work after a click; this focus is the pointer's, not the keyboard's.
      view.pointerFocus = true;
      try {
        view.root.focus({ preventScroll: true });
      } finally {
        view.pointerFocus = false;
      }
    }
    const n = this.squareFromEvent(e);
    const ctrl = view.ctrl;
    if (n === null) {
      ctrl.cancel();
      return;
    }
    const route = view.routeInput();
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
        view.root.setPointerCapture(e.pointerId);
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
      this.view.render();
    }
    this.moveFloater(d, e.clientX, e.clientY);
    const over = this.squareAtPoint(e.clientX, e.clientY);
    for (const entry of this.view.cells.values()) entry.cell.classList.toggle('drag-over', Number(entry.cell.dataset.square) === over);
  }

  onPointerUp(e) {
    const d = this.drag;
    if (!d || e.pointerId !== d.pointerId) return;
    const wasActive = d.active;
    this.end();
    if (wasActive) {
      this.view.ctrl.drop(d.from, this.squareAtPoint(e.clientX, e.clientY));
    } else if (!d.selectedOnDown) {
      this.view.ctrl.clickSquare(d.from);
    }
  }

  /** The dragged piece, drawn under the pointer (the piece stays on its square, marked as the drag's origin). */
  startFloater(d) {
    const view = this.view;
    const entry = view.cells.get(d.from);
    const { path, tip } = view.routeInput();
    const onTip = path.length > 1 && d.from === tip;
    const piece = view.ctrl.position.pieces.get(onTip ? path[0] : d.from);
    if (!piece) return;
    const cellRect = entry.cell.getBoundingClientRect();
    const side = cellRect.width * 0.82;
    const rect = { width: side, height: side };
    const f = document.createElement('div');
    f.className = `piece ${piece.color === BLACK ? 'black' : 'white'} ${piece.king ? 'king' : 'man'} dragging`;
    f.setAttribute('aria-hidden', 'true');
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

  /** The press is over (let go, cancelled, or the capture lost): drop the floater and the marks. */
  end() {
    const d = this.drag;
    if (!d) return;
    const root = this.view.root;
    this.drag = null;
    if (d.floater) d.floater.remove();
    for (const entry of this.view.cells.values()) entry.cell.classList.remove('drag-over');
    try {
      if (root.hasPointerCapture && root.hasPointerCapture(d.pointerId)) root.releasePointerCapture(d.pointerId);
    } catch (err) {
      /* nothing */
    }
    if (d.active) this.view.render();
  }
}
