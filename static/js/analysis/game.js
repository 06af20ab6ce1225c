// A game on the analysis board: a stored game (its link or id) or a pasted record (PDN, or its
// moves), loaded from the server with its moves and the position after each, then stepped
// through (view/replay.js wires the buttons, the move list and the keys to first/prev/next/last/
// goTo). Which game and ply the board shows is the controller's (ctrl.game, ctrl.gamePly,
// ctrl.branchPly), as moves played on the board leave the game; the controller owns one loader
// (ctrl.loader).

import { BLACK, WHITE } from '../fen.js';
import { moveNumberAt } from '../notation.js';
import { gettext, interpolate } from '../i18n.js';
import { csrfToken, gameIdFrom, looksLikePdn, noSuchGame } from './load.js';

const fmt = (format, values) => interpolate(format, values, true);

export class GameLoader {
  /** @param {AnalysisCtrl} ctrl  the analysis board's controller (ctrl.js) */
  constructor(ctrl) {
    this.ctrl = ctrl;
  }

  /**
   * The "Load" box: a game's link or id, a game record (PDN, or its moves), or a FEN pasted
   * there. The board changes only when it is found: then it shows the game's position after
   * `ply` plies (default: its current position), with its moves to step through; otherwise the
   * reason shows next to the box and the position stays.
   */
  async load(text, ply = null) {
    const ctrl = this.ctrl;
    const value = String(text || '').trim();
    if (/^[BW]\s*:/i.test(value)) return ctrl.ask(value, null, { keepBoard: true, errorTo: 'game' });
    if (!value) return this.fail(gettext('Paste a game link (…/g/abc123/), a game id or a game record (PDN) first.'));
    if (looksLikePdn(value)) return this.loadPdn(value);
    const id = gameIdFrom(value);
    if (!id) {
      return this.fail(
        fmt(gettext('“%(text)s” is not a game link or id. A link looks like %(example)s.'), {
          text: value,
          example: `${window.location.origin}/g/abc123/`,
        }),
      );
    }
    ctrl.gameLoading = true;
    ctrl.gameError = null;
    ctrl.redraw();
    let status = 0;
    let data = null;
    try {
      const response = await fetch(`${ctrl.config.gameUrl}${encodeURIComponent(id)}`, { headers: { Accept: 'application/json' } });
      status = response.status;
      data = await response.json();
    } catch (err) {
      data = null; // an id no game can have gets the site's 404 page, not JSON
    }
    ctrl.gameLoading = false;
    if (status === 404) return this.fail(noSuchGame(id));
    return this.take(status, data, ply);
  }

  /** A pasted game record (PDN or a list of moves): the server replays it; its moves to step through. */
  async loadPdn(text) {
    const ctrl = this.ctrl;
    ctrl.gameLoading = true;
    ctrl.gameError = null;
    ctrl.redraw();
    let status = 0;
    let data = null;
    try {
      const response = await fetch(ctrl.config.pdnUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRFToken': csrfToken() },
        body: JSON.stringify({ pdn: text }),
      });
      status = response.status;
      data = await response.json();
    } catch (err) {
      data = null;
    }
    ctrl.gameLoading = false;
    if (status === 400 && data && data.message) return this.fail(data.message);
    return this.take(status, data, null);
  }

  /** The server's answer with a game (stored or pasted): show it at `ply` (its last position when null). */
  take(status, data, ply) {
    const ctrl = this.ctrl;
    if (status !== 200 || !data || !Array.isArray(data.moves) || !Array.isArray(data.fens)) {
      return this.fail(gettext('The server could not be reached; try again.'));
    }
    ctrl.game = {
      id: data.id || null,
      startFen: data.start_fen,
      moves: data.moves,
      fens: data.fens,
      fen: data.fen,
      status: data.status || null,
      result: data.result || '*',
      black: data.black || null,
      white: data.white || null,
      siteDraw: data.site_draw || null, // a record from elsewhere played on past a draw the site declares
      first: String(data.start_fen)[0] === WHITE ? WHITE : BLACK,
    };
    ctrl.gamePly = null;
    ctrl.gameError = null;
    return this.goTo(ply === null || ply === undefined ? data.moves.length : ply);
  }

  fail(message) {
    const ctrl = this.ctrl;
    ctrl.gameLoading = false;
    ctrl.gameError = message;
    ctrl.redraw();
    return false;
  }

  /** The loaded game's position after `ply` plies (its start for 0). */
  fenAt(ply) {
    const game = this.ctrl.game;
    if (!game) return null;
    return ply === 0 ? game.startFen : game.fens[ply - 1] || null;
  }

  /** Show the loaded game's position after `ply` plies (clamped to the game). */
  goTo(ply) {
    const ctrl = this.ctrl;
    const game = ctrl.game;
    if (!game) return Promise.resolve(false);
    const target = Math.max(0, Math.min(game.moves.length, Math.floor(Number(ply) || 0)));
    const fen = this.fenAt(target);
    if (target === ctrl.gamePly || !fen) return Promise.resolve(false);
    ctrl.gamePly = target;
    ctrl.branchPly = target;
    ctrl.undoStack = [];
    ctrl.lastMove = target > 0 ? game.moves[target - 1] : null;
    ctrl.moveNumber = moveNumberAt(target, game.first);
    return ctrl.show(fen);
  }

  first() {
    return this.goTo(0);
  }

  /** The game's ply before the one shown; from moves played here, the game's position they left. */
  prev() {
    const { gamePly, branchPly } = this.ctrl;
    if (branchPly === null) return Promise.resolve(false);
    if (gamePly === null) return this.goTo(branchPly);
    return branchPly > 0 ? this.goTo(branchPly - 1) : Promise.resolve(false);
  }

  next() {
    const branchPly = this.ctrl.branchPly;
    return branchPly === null ? Promise.resolve(false) : this.goTo(branchPly + 1);
  }

  last() {
    const game = this.ctrl.game;
    return game ? this.goTo(game.moves.length) : Promise.resolve(false);
  }
}
