// Everything around the board: player bars, whose turn, status line, result
// banner, connection state, move list, invite and join panels.

import { BLACK, WHITE, colorName, opposite } from '../fen.js';
import { movePairs, firstMover } from '../notation.js';

function text(node, value) {
  if (node && node.textContent !== value) node.textContent = value;
}

function show(node, visible) {
  if (node) node.hidden = !visible;
}

export class TableView {
  constructor(els, ctrl) {
    this.els = els;
    this.ctrl = ctrl;
    this.renderedMoves = null;
    this.baseTitle = document.title;
  }

  render() {
    const ctrl = this.ctrl;
    this.renderPlayers();
    this.renderTurn();
    this.renderStatus();
    this.renderResult();
    this.renderConnection();
    this.renderAudience();
    this.renderMoves();
    this.renderPanels();
    if (this.els.numbersToggle) this.els.numbersToggle.checked = ctrl.showNumbers;

    const body = document.body.dataset;
    body.version = ctrl.v === null ? '' : String(ctrl.v);
    body.ply = ctrl.state ? String(ctrl.state.ply) : '';
    body.status = ctrl.status;
    body.turn = ctrl.state ? ctrl.state.turn : '';
    body.you = ctrl.you || '';
    document.title = (ctrl.isMyTurn && !ctrl.isOver ? '● Your turn · ' : '') + this.baseTitle;
  }

  renderPlayers() {
    const ctrl = this.ctrl;
    const bottom = ctrl.orientation;
    this.renderPlayer(this.els.playerBottom, bottom);
    this.renderPlayer(this.els.playerTop, opposite(bottom));
  }

  renderPlayer(node, color) {
    if (!node) return;
    const ctrl = this.ctrl;
    const name = ctrl.seatName(color);
    const isYou = ctrl.you === color;
    const toMove = !!(ctrl.state && ctrl.state.status === 'active' && ctrl.state.turn === color);
    const won = !!(ctrl.state && ctrl.isOver && ctrl.state.winner === color);
    const online = ctrl.audience && ctrl.audience.online ? ctrl.audience.online[color] : undefined;
    const key = JSON.stringify([color, name, isYou, toMove, won, !!ctrl.state, online]);
    if (node.dataset.key === key) return;
    node.dataset.key = key;
    node.dataset.color = color === BLACK ? 'black' : 'white';
    node.classList.toggle('to-move', toMove);
    node.classList.toggle('winner', won);
    node.textContent = '';
    const marker = document.createElement('span');
    marker.className = `color-marker ${color === BLACK ? 'black' : 'white'}`;
    marker.setAttribute('aria-hidden', 'true');
    const who = document.createElement('span');
    who.className = 'player-name';
    who.textContent = name || (ctrl.state ? 'Waiting for a player…' : '…');
    if (!name) who.classList.add('empty');
    const side = document.createElement('span');
    side.className = 'player-color';
    side.textContent = colorName(color);
    node.append(marker, who, side);
    if (name && online !== undefined) {
      const presence = document.createElement('span');
      presence.className = `presence ${online ? 'online' : 'away'}`;
      presence.title = online ? 'On the page' : 'Not on the page';
      presence.setAttribute('aria-label', presence.title);
      node.append(presence);
    }
    if (isYou) {
      const you = document.createElement('span');
      you.className = 'tag you';
      you.textContent = 'you';
      node.append(you);
    }
    if (toMove) {
      const tag = document.createElement('span');
      tag.className = 'tag to-move-tag';
      tag.textContent = 'to move';
      node.append(tag);
    }
    if (won) {
      const tag = document.createElement('span');
      tag.className = 'tag winner-tag';
      tag.textContent = 'winner';
      node.append(tag);
    }
    node.setAttribute('aria-label', `${colorName(color)}: ${name || 'seat free'}${isYou ? ' (you)' : ''}${toMove ? ', to move' : ''}`);
  }

  turnText() {
    const ctrl = this.ctrl;
    const s = ctrl.state;
    if (!s) return 'Loading…';
    if (s.status === 'waiting') return 'Waiting for an opponent';
    if (ctrl.isOver) return s.status === 'aborted' ? 'Game aborted' : 'Game over';
    if (ctrl.you) {
      if (s.turn === ctrl.you) return ctrl.pending ? 'Your move is on its way…' : 'Your turn';
      const other = ctrl.seatName(s.turn);
      return other ? `${other}'s turn` : `${colorName(s.turn)}'s turn`;
    }
    return `${colorName(s.turn)} to move`;
  }

  renderTurn() {
    const node = this.els.turn;
    if (!node) return;
    const ctrl = this.ctrl;
    text(node, this.turnText());
    const s = ctrl.state;
    node.dataset.turn = s && s.status === 'active' ? (s.turn === BLACK ? 'black' : 'white') : '';
    node.classList.toggle('mine', ctrl.isMyTurn);
  }

  statusText() {
    const ctrl = this.ctrl;
    const s = ctrl.state;
    if (!s) return '';
    if (s.status === 'waiting') {
      if (ctrl.you) return 'The game starts as soon as your friend joins.';
      return 'A seat is free: join to play, or stay and watch.';
    }
    const offerer = (seat) => (seat === ctrl.you ? 'You' : ctrl.seatName(seat) || colorName(seat));
    if (s.status === 'active' && s.draw_offer) {
      return s.draw_offer === ctrl.you ? 'You offered a draw.' : `${offerer(s.draw_offer)} offers a draw.`;
    }
    if (ctrl.isOver && s.rematch_offer && !s.next_game) {
      return s.rematch_offer === ctrl.you ? 'You proposed a rematch.' : `${offerer(s.rematch_offer)} proposes a rematch.`;
    }
    if (s.status === 'active') {
      const left = 80 - (s.no_progress || 0);
      if (s.no_progress >= 40 && left > 0) {
        return `Forty-move rule: a draw in ${left} plies without a capture or a man move.`;
      }
      if (ctrl.isMyTurn && ctrl.path.length > 1) return 'Keep jumping: pick the next landing square.';
      if (ctrl.isMyTurn && ctrl.path.length === 1) return 'Pick a destination square.';
      if (ctrl.isMyTurn && s.legal && s.legal.length && s.legal[0].includes('x')) return 'You must capture.';
    }
    return '';
  }

  renderStatus() {
    const node = this.els.status;
    if (!node) return;
    const flash = this.ctrl.flash;
    const value = flash ? flash.message : this.statusText();
    text(node, value);
    node.dataset.kind = flash ? flash.kind : 'info';
    node.classList.toggle('error', !!(flash && flash.kind === 'error'));
    node.classList.toggle('empty', !value);
  }

  renderResult() {
    const node = this.els.resultBanner;
    if (!node) return;
    const ctrl = this.ctrl;
    const s = ctrl.state;
    if (!s || !ctrl.isOver) {
      node.hidden = true;
      node.dataset.key = '';
      return;
    }
    const key = JSON.stringify([s.status, s.winner, s.result, s.reason, s.next_game || null]);
    node.hidden = false;
    if (node.dataset.key === key) return;
    node.dataset.key = key;
    node.dataset.winner = s.winner === BLACK ? 'black' : s.winner === WHITE ? 'white' : 'none';
    let headline;
    let personal = '';
    if (s.winner) {
      const name = ctrl.seatName(s.winner);
      headline = `${colorName(s.winner)} wins${name ? ` (${name})` : ''}`;
      if (ctrl.you) personal = ctrl.you === s.winner ? 'You won!' : 'You lost.';
      node.dataset.personal = ctrl.you ? (ctrl.you === s.winner ? 'won' : 'lost') : '';
    } else if (s.status === 'aborted') headline = 'Game aborted';
    else headline = 'Draw';
    node.textContent = '';
    const h = document.createElement('strong');
    h.className = 'result-headline';
    h.textContent = headline;
    const reason = document.createElement('span');
    reason.className = 'result-reason';
    reason.textContent = s.reason || '';
    const score = document.createElement('span');
    score.className = 'result-score';
    score.textContent = s.result && s.result !== '*' ? s.result : '';
    node.append(h);
    if (personal) {
      const you = document.createElement('span');
      you.className = 'result-personal';
      you.textContent = personal;
      node.append(you);
    }
    node.append(reason, score);
    if (s.next_game) {
      const link = document.createElement('a');
      link.id = 'rematch-link';
      link.className = 'button primary';
      link.href = `/g/${encodeURIComponent(s.next_game)}/`;
      link.textContent = 'Go to the rematch';
      node.append(link);
    }
  }

  renderConnection() {
    const node = this.els.connection;
    if (!node) return;
    const ctrl = this.ctrl;
    node.dataset.state = ctrl.connection;
    let label = '';
    if (ctrl.connection === 'connecting') label = ctrl.v === null ? 'Connecting…' : 'Reconnecting…';
    else if (ctrl.connection === 'closed')
      label = ctrl.connectionDetail === 'no_such_game' ? 'This game does not exist.' : 'Connection lost. Reconnecting…';
    text(node, label);
    node.hidden = ctrl.connection === 'open';
  }

  renderAudience() {
    const node = this.els.audience;
    if (!node) return;
    const a = this.ctrl.audience;
    const n = a ? a.spectators : 0;
    text(node, n ? `${n} ${n === 1 ? 'spectator' : 'spectators'} watching` : '');
    node.hidden = !n;
  }

  renderMoves() {
    const list = this.els.moveList;
    if (!list) return;
    const ctrl = this.ctrl;
    const turn = ctrl.state ? ctrl.state.turn : BLACK;
    const first = firstMover(ctrl.moves.length, turn);
    const key = `${first}|${ctrl.moves.join(' ')}`;
    if (key === this.renderedMoves) return;
    this.renderedMoves = key;
    list.textContent = '';
    const lastPly = ctrl.moves.length;
    for (const pair of movePairs(ctrl.moves, first)) {
      const li = document.createElement('li');
      const num = document.createElement('span');
      num.className = 'move-number';
      num.textContent = `${pair.number}.`;
      li.append(num, ' ', this.plyNode(pair.black, pair.blackPly, lastPly, BLACK));
      if (pair.white) li.append(' ', this.plyNode(pair.white, pair.whitePly, lastPly, WHITE));
      list.appendChild(li);
    }
    if (!ctrl.moves.length) {
      list.classList.add('empty');
    } else {
      list.classList.remove('empty');
      list.scrollTop = list.scrollHeight;
    }
  }

  plyNode(move, ply, lastPly, color) {
    const span = document.createElement('span');
    span.className = `ply ${color === BLACK ? 'black' : 'white'}`;
    if (move === null) {
      span.classList.add('skipped');
      span.textContent = '...';
      return span;
    }
    span.textContent = move;
    span.dataset.ply = String(ply);
    if (ply === lastPly) span.classList.add('current');
    return span;
  }

  renderPanels() {
    const ctrl = this.ctrl;
    const waiting = ctrl.status === 'waiting';
    show(this.els.invite, waiting && !!ctrl.you);
    // A spectator's join form makes sense only while a seat is free.
    if (this.els.joinForm) show(this.els.joinForm, ctrl.state ? waiting && !ctrl.you : true);
  }
}
