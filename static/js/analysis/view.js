// The analysis board's rendering: the board (with the engine's move), the side panel (status,
// set-up tools, legal moves, the engine's answer, the FEN and "Load" boxes) and a loaded game's
// moves with the buttons that step through them.

import { BoardView } from '../view/board.js';
import { MoveListView } from '../view/move-list.js';
import { BLACK, WHITE, colorName, opposite, jumpedSquare } from '../fen.js';
import { movePath, moveText, plyText, resultWords } from '../notation.js';
import { gettext, ngettext, interpolate, language } from '../i18n.js';

const fmt = (format, values) => interpolate(format, values, true);

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Below this many hundredths of a man either way, the engine calls the position equal. */
const EQUAL_WITHIN = 10;

/** A game's status as the game panel says it. */
function gameStatus(status) {
  switch (status) {
    case 'waiting':
      return gettext('waiting for an opponent');
    case 'active':
      return gettext('in play');
    case 'finished':
      return gettext('finished');
    case 'aborted':
      return gettext('aborted');
    default:
      return '';
  }
}

/**
 * The engine's verdict in words. `score` is in hundredths of a man from the side to move's view;
 * the text names the side that is better and gives the evaluation in men from Black's side
 * (Black moves first): "Equal", "Black is better (+1.25)", "White is better (−0.50)",
 * "White wins (a forced win in 3 moves)".
 */
export function describeScore(result, turn) {
  if (result.mate !== null && result.mate !== undefined) {
    const winner = result.mate > 0 ? turn : opposite(turn);
    const moves = Math.ceil(Math.abs(result.mate) / 2);
    const format =
      winner === BLACK
        ? ngettext('Black wins (a forced win in %(count)s move)', 'Black wins (a forced win in %(count)s moves)', moves)
        : ngettext('White wins (a forced win in %(count)s move)', 'White wins (a forced win in %(count)s moves)', moves);
    return fmt(format, { count: moves });
  }
  const forBlack = turn === BLACK ? result.score : -result.score;
  if (Math.abs(forBlack) < EQUAL_WITHIN) return gettext('Equal');
  const ahead = forBlack > 0 ? BLACK : WHITE;
  const men = (Math.abs(forBlack) / 100).toLocaleString(language(), { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const score = `${forBlack > 0 ? '+' : '\u2212'}${men}`; // + Black is ahead, − (minus sign) White
  return fmt(ahead === BLACK ? gettext('Black is better (%(score)s)') : gettext('White is better (%(score)s)'), { score });
}

/**
 * The endgame database's exact result in words: `verdict` is {result, winner: 'B'|'W'|null, plies}
 * (as the server gives it): "White wins (in 31 plies with best play)", "Draw with best play".
 */
export function describeVerdict(verdict) {
  if (!verdict.winner) return gettext('Draw with best play');
  const plies = verdict.plies;
  const format =
    verdict.winner === BLACK
      ? ngettext('Black wins (in %(count)s ply with best play)', 'Black wins (in %(count)s plies with best play)', plies)
      : ngettext('White wins (in %(count)s ply with best play)', 'White wins (in %(count)s plies with best play)', plies);
  return fmt(format, { count: plies });
}

function byId(id) {
  return document.getElementById(id);
}

function text(node, value) {
  if (node && node.textContent !== value) node.textContent = value;
}

/** A line of moves ("1. 1-6 32-27 2. 5-1 ..."): each numbered pair kept on one row (a long line wraps
 *  between pairs, never inside a move); the text stays the same. */
function lineText(node, value) {
  if (!node || node.textContent === value) return;
  const pairs = [];
  for (const token of value.split(' ')) {
    if (!pairs.length || /^\d+\.$/.test(token)) pairs.push([token]);
    else pairs[pairs.length - 1].push(token);
  }
  const children = [];
  pairs.forEach((pair, i) => {
    if (i) children.push(document.createTextNode(' '));
    const span = document.createElement('span');
    span.className = 'line-pair';
    span.textContent = pair.join(' ');
    children.push(span);
  });
  node.replaceChildren(...children);
}

export class AnalysisView {
  constructor(boardEl, ctrl) {
    this.ctrl = ctrl;
    this.boardEl = boardEl;
    this.board = new BoardView(boardEl, ctrl);
    this.moveList = new MoveListView(byId('move-list'));
  }

  render() {
    const ctrl = this.ctrl;
    this.board.render();
    this.boardEl.classList.toggle('editing', ctrl.mode === 'edit');
    this.renderBest();
    this.renderPanel();
    this.renderGame();
  }

  /** The engine's move on the board: highlighted squares and an arrow. */
  renderBest() {
    const board = this.board;
    const best = this.ctrl.best;
    const path = best && best.move ? movePath(best.move) : [];
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
    line.setAttribute(
      'points',
      path
        .map((n) => {
          const { row, col } = board.displayOf(n);
          return `${col + 0.5},${row + 0.5}`;
        })
        .join(' '),
    );
    line.setAttribute('class', 'arrow-best');
    line.setAttribute('marker-end', 'url(#arrowhead)');
    board.svg.appendChild(line);
  }

  renderPanel() {
    const ctrl = this.ctrl;
    const info = ctrl.valid ? ctrl.info : null;
    this.renderStatus(info);
    this.renderErrors();
    this.renderTools();
    this.renderLegalMoves(info);
    this.renderEngine(info);
    const turn = ctrl.position.turn;
    const bottom = ctrl.orientation;
    const toMove = ` · ${gettext('to move')}`;
    text(byId('caption-bottom'), `${colorName(bottom)}${turn === bottom ? toMove : ''}`);
    text(byId('caption-top'), `${colorName(opposite(bottom))}${turn !== bottom ? toMove : ''}`);
    document.body.dataset.fen = ctrl.fen;
    document.body.dataset.valid = info ? '1' : '0';
  }

  /** The position in words (who is to move, how many legal moves, the game's end), and the
   *  endgame database's exact result. `info`: the server's view of the position, null until it is known. */
  renderStatus(info) {
    const ctrl = this.ctrl;
    let status;
    if (ctrl.loading) status = gettext('Checking the position…');
    else if (!info) status = ctrl.fenError ? `${gettext('This position cannot be analysed.')} ${ctrl.fenError}` : '';
    else if (info.over) {
      const reason = `${info.reason[0].toUpperCase()}${info.reason.slice(1)}`;
      status = fmt(info.winner === BLACK ? gettext('%(reason)s: Black wins.') : gettext('%(reason)s: White wins.'), { reason });
    } else {
      const parts = [];
      if (ctrl.moveNumber > 1) parts.push(fmt(gettext('Move %(number)s'), { number: ctrl.moveNumber }));
      parts.push(info.turn === BLACK ? gettext('Black to move') : gettext('White to move'));
      const n = info.legal.length;
      let legal = fmt(ngettext('%(count)s legal move', '%(count)s legal moves', n), { count: n });
      if (info.legal[0].includes('x')) legal += ` ${gettext('(a capture is compulsory)')}`;
      parts.push(legal);
      status = parts.join(' · ');
    }
    text(byId('analysis-status'), status);
    // The exact result once few pieces are left (the endgame database); none after the game's end.
    const verdict = info && !info.over && info.verdict ? info.verdict : null;
    const verdictBox = byId('analysis-verdict');
    verdictBox.hidden = !verdict;
    verdictBox.dataset.result = verdict ? verdict.result : '';
    text(byId('analysis-verdict-text'), verdict ? describeVerdict(verdict) : '');
  }

  /** What went wrong: the engine's or a move's at the top, a position's next to the box it came from. */
  renderErrors() {
    const ctrl = this.ctrl;
    const error = byId('analysis-error');
    text(error, ctrl.error || '');
    error.hidden = !ctrl.error;
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
    text(loadGame, ctrl.gameLoading ? gettext('Loading…') : gettext('Load'));
  }

  /** The mode, the set-up tools, the side to move, the board's buttons and the FEN box. */
  renderTools() {
    const ctrl = this.ctrl;
    const turn = ctrl.position.turn;
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
    if (ctrl.fenBoxReset) {
      ctrl.fenBoxReset = false; // a refused FEN: the box shows the board's position again
      delete fenInput.dataset.shown;
      fenInput.value = ctrl.fen;
    }
    if (document.activeElement !== fenInput && fenInput.dataset.shown !== ctrl.fen) {
      fenInput.value = ctrl.fen;
      fenInput.dataset.shown = ctrl.fen;
    }
  }

  /** The legal moves, one button each. */
  renderLegalMoves(info) {
    const list = byId('legal-moves');
    const legalKey = info ? info.legal.join(' ') : '';
    if (list.dataset.key !== legalKey) {
      list.dataset.key = legalKey;
      list.replaceChildren(
        ...(info ? info.legal : []).map((move) => {
          const li = document.createElement('li');
          const button = document.createElement('button');
          button.type = 'button';
          button.className = 'legal-move';
          button.textContent = move;
          button.dataset.move = move;
          li.append(button);
          return li;
        }),
      );
    }
    for (const button of list.querySelectorAll('button')) button.disabled = this.ctrl.loading;
  }

  /** The engine's buttons and its answer: best move, evaluation, line, depth. */
  renderEngine(info) {
    const ctrl = this.ctrl;
    byId('auto-analyse').checked = ctrl.autoAnalyse;
    const analyse = byId('analyse');
    analyse.disabled = !info || info.over || ctrl.thinking || ctrl.loading;
    text(analyse, ctrl.thinking ? gettext('Thinking…') : gettext('Best move'));

    const result = byId('engine-result');
    const best = ctrl.best;
    result.hidden = !best;
    if (!best) return;
    text(byId('engine-move'), best.move || '—');
    // An exact result from the endgame database says more than the search's evaluation.
    text(byId('engine-eval'), best.verdict ? describeVerdict(best.verdict) : describeScore(best, best.turn));
    lineText(byId('engine-pv'), best.pv.length ? moveText(best.pv, best.turn, best.moveNumber || 1) : '—');
    const seconds = (best.elapsed_ms / 1000).toLocaleString(language(), { minimumFractionDigits: 1, maximumFractionDigits: 1 });
    text(
      byId('engine-info'),
      fmt(gettext('depth %(depth)s · %(nodes)s positions · %(seconds)s s'), {
        depth: best.depth,
        nodes: best.nodes.toLocaleString(language()),
        seconds,
      }),
    );
    result.dataset.move = best.move || '';
    result.dataset.fen = best.fen || '';
    result.dataset.score = String(best.score);
    byId('play-best').disabled = !best.move || ctrl.loading;
  }

  /** A loaded game: its moves (the ply shown marked), where the board is in it, and the step buttons. */
  renderGame() {
    const ctrl = this.ctrl;
    const game = ctrl.game;
    const panel = byId('game-panel');
    panel.hidden = !game;
    document.body.dataset.gamePly = game && ctrl.gamePly !== null ? String(ctrl.gamePly) : '';
    if (!game) return;
    const n = game.moves.length;
    const ply = ctrl.gamePly;
    const link = byId('game-link');
    const href = `/g/${encodeURIComponent(game.id)}/`;
    if (game.id && link.getAttribute('href') !== href) link.setAttribute('href', href);
    link.hidden = !game.id; // a pasted record has no page
    const status = gameStatus(game.status);
    if (game.id) {
      text(link, status ? fmt(gettext('Game %(id)s (%(status)s)'), { id: game.id, status }) : fmt(gettext('Game %(id)s'), { id: game.id }));
    }
    const players = byId('game-players');
    const names = game.black || game.white
      ? fmt(gettext('%(black)s (Black) – %(white)s (White)'), { black: game.black || '?', white: game.white || '?' })
      : '';
    text(players, names);
    const result = byId('game-result');
    const words = resultWords(game.result);
    text(result, words ? game.result : '');
    if (words) result.title = words;
    else result.removeAttribute('title');
    text(byId('game-result-words'), words);
    // A record from elsewhere goes on past a repetition or the forty-move count: over the board they are claimed.
    const note = byId('game-site-draw');
    if (note) {
      const draw = game.siteDraw;
      note.hidden = !draw;
      if (draw) {
        text(note, draw.termination === 'forty_moves'
          ? fmt(gettext('The site would have declared a draw by the forty-move rule after ply %(ply)s; over the board a draw is claimed, and this game went on.'), { ply: draw.ply })
          : fmt(gettext('The site would have declared a draw by threefold repetition after ply %(ply)s; over the board a draw is claimed, and this game went on.'), { ply: draw.ply }));
      }
    }
    this.moveList.render(game.moves, game.first, ply, ply !== null && ply < n);
    let where;
    if (ply !== null) {
      // Plies, not moves: a move is a pair of plies, Black's and White's.
      where = `${plyText(game.moves, game.first, ply)} · ${fmt(ngettext('ply %(shown)s of %(count)s', 'ply %(shown)s of %(count)s', n), { shown: ply, count: n })}`;
    } else if (!ctrl.branchPly) where = gettext("Moves played here, from the game's start position");
    else {
      where = fmt(gettext("Moves played here, from the game's position %(position)s"), {
        position: plyText(game.moves, game.first, ctrl.branchPly).toLowerCase(),
      });
    }
    text(byId('game-place'), where);
    const disable = (id, off) => {
      const node = byId(id);
      if (node.disabled !== off) node.disabled = off;
    };
    disable('replay-first', ply === 0);
    disable('replay-prev', ply === 0);
    disable('replay-next', ply === n);
    disable('replay-last', ply === n);
  }
}
