// Everything around the board: player bars, whose turn, status line, result
// banner, connection state, forty-move warning, move list with the replay
// controls, invite and join panels. (The game actions live in actions.js.)

import { BLACK, WHITE, colorName, opposite } from '../fen.js';
import { noProgressLeft } from '../game.js';
import { firstMover, plyText, resultWords } from '../notation.js';
import { MoveListView } from './move-list.js';
import { gettext, ngettext, interpolate } from '../i18n.js';

const fmt = (format, values) => interpolate(format, values, true);

function text(node, value) {
  if (node && node.textContent !== value) node.textContent = value;
}

function show(node, visible) {
  if (node) node.hidden = !visible;
}

/** A <span> with class `className` and text `value`. */
function span(className, value) {
  const node = document.createElement('span');
  node.className = className;
  node.textContent = value;
  return node;
}

// A seat's rating in a rated game ("1512", "1500?" while provisional), or '' for none.
export function ratingText(seat) {
  if (!seat || typeof seat.rating !== 'number') return '';
  return `${seat.rating}${seat.provisional ? '?' : ''}`;
}

// A rating change as shown: "+8", "−8" (a minus sign), "+0".
export function diffText(diff) {
  return diff < 0 ? `\u2212${-diff}` : `+${diff}`;
}

/** Why a rated game's end changed no ratings (the state's `unrated`: its players' accounts linked,
 *  docs/ratings.md, "Results that count"), or '' when it counted. */
function unratedText(reason) {
  if (reason === 'sign_up') return gettext('Not rated: both accounts were created from the same network address.');
  if (reason === 'browser') return gettext('Not rated: both accounts were used in the same browser.');
  return '';
}

export class TableView {
  constructor(els, ctrl) {
    this.els = els;
    this.ctrl = ctrl;
    this.moveList = new MoveListView(els.moveList);
    this.baseTitle = document.title;
  }

  /** The page shows another game now (TV): the page's marks of this one go. */
  stop() {
    for (const key of ['version', 'ply', 'status', 'turn', 'you', 'shownPly']) delete document.body.dataset[key];
  }

  render() {
    const ctrl = this.ctrl;
    this.renderPlayers();
    this.renderTurn();
    this.renderStatus();
    this.renderResult();
    this.renderConnection();
    this.renderAudience();
    this.renderNoProgress();
    this.renderMoves();
    this.renderReplay();
    this.renderPanels();
    if (this.els.numbersToggle) this.els.numbersToggle.checked = ctrl.showNumbers;

    const body = document.body.dataset;
    body.version = ctrl.v === null ? '' : String(ctrl.v);
    body.ply = ctrl.state ? String(ctrl.state.ply) : '';
    body.status = ctrl.status;
    body.turn = ctrl.state ? ctrl.state.turn : '';
    body.you = ctrl.you || '';
    body.shownPly = String(ctrl.shownPly);
    document.title = (ctrl.isMyTurn && !ctrl.isOver ? `● ${gettext('Your turn')} · ` : '') + this.baseTitle;
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
    const seat = ctrl.state && ctrl.state.seats ? ctrl.state.seats[color] : null;
    const computer = !!(seat && seat.computer); // the computer is always there
    const online = computer ? true : ctrl.audience && ctrl.audience.online ? ctrl.audience.online[color] : undefined;
    const rating = ratingText(seat);
    const key = JSON.stringify([color, name, rating, isYou, toMove, won, !!ctrl.state, online]);
    if (node.dataset.key === key) return;
    node.dataset.key = key;
    node.dataset.color = color === BLACK ? 'black' : 'white';
    node.classList.toggle('to-move', toMove);
    node.classList.toggle('winner', won);
    node.replaceChildren(...this.playerParts({ color, name, seat, rating, online, isYou, toMove, won }));
    let label = fmt(gettext('%(side)s: %(name)s'), { side: colorName(color), name: name || gettext('seat free') });
    if (rating) label += ` (${rating})`;
    if (isYou) label += ` ${gettext('(you)')}`;
    if (toMove) label += gettext(', to move');
    node.setAttribute('aria-label', label);
  }

  /** A player bar's contents: colour marker, name, rating, colour, presence dot and tags. */
  playerParts({ color, name, seat, rating, online, isYou, toMove, won }) {
    const marker = span(`color-marker ${color === BLACK ? 'black' : 'white'}`, '');
    marker.setAttribute('aria-hidden', 'true');
    const who = span('player-name', name || (this.ctrl.state ? gettext('Waiting for a player…') : '…'));
    if (!name) who.classList.add('empty');
    const parts = [marker, who];
    if (rating) {
      // A rated game: the rating the player had when it started, "?" while provisional.
      const r = span('player-rating', `(${rating})`);
      if (seat.provisional) r.title = gettext('Provisional rating: not enough rated games yet');
      parts.push(r);
    }
    parts.push(span('player-color', colorName(color)));
    if (name && online !== undefined) {
      const presence = span(`presence ${online ? 'online' : 'away'}`, '');
      presence.title = online ? gettext('On the page') : gettext('Not on the page');
      presence.setAttribute('role', 'img'); // a dot with a name: a span may not carry aria-label
      presence.setAttribute('aria-label', presence.title);
      parts.push(presence);
    }
    if (isYou) parts.push(span('tag you', gettext('you')));
    if (toMove) parts.push(span('tag to-move-tag', gettext('to move')));
    if (won) parts.push(span('tag winner-tag', gettext('winner')));
    return parts;
  }

  turnText() {
    const ctrl = this.ctrl;
    const s = ctrl.state;
    if (!s) return gettext('Loading…');
    if (s.status === 'waiting') return gettext('Waiting for an opponent');
    if (ctrl.isOver) return s.status === 'aborted' ? gettext('Game aborted') : gettext('Game over');
    if (ctrl.you) {
      if (s.turn === ctrl.you) return ctrl.pending ? gettext('Your move is on its way…') : gettext('Your turn');
      const other = ctrl.seatName(s.turn);
      const seat = s.seats ? s.seats[s.turn] : null;
      if (other && seat && seat.computer) return fmt(gettext('%(name)s is thinking…'), { name: other });
      if (other) return fmt(gettext("%(name)s's turn"), { name: other });
      return s.turn === BLACK ? gettext("Black's turn") : gettext("White's turn");
    }
    return s.turn === BLACK ? gettext('Black to move') : gettext('White to move');
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
      if (ctrl.you) return gettext('The game starts as soon as your friend joins.');
      return gettext('A seat is free: join to play, or stay and watch.');
    }
    // Draw offers and rematch proposals show in the actions panel; the forty-move count in #no-progress.
    if (s.status === 'active') {
      if (ctrl.replaying && ctrl.isMyTurn) return gettext('You are looking at an earlier position: go back to the game to move.');
      if (ctrl.isMyTurn && ctrl.input.path.length > 1) return gettext('Keep jumping: pick the next landing square.');
      if (ctrl.isMyTurn && ctrl.input.path.length === 1) return gettext('Pick a destination square.');
      if (ctrl.input.mustCapture) return gettext('You must capture: the highlighted pieces can.');
      if (ctrl.isMyTurn && s.legal && s.legal.length && s.legal[0].includes('x')) return gettext('You must capture.');
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
    node.classList.toggle('warn', !!(flash && flash.kind === 'warn'));
    // The same warning again (another click on a piece that cannot move): replay its entrance.
    if (flash && flash.kind === 'warn' && flash !== this.shownFlash) {
      node.classList.remove('warn');
      void node.offsetWidth;
      node.classList.add('warn');
    }
    this.shownFlash = flash;
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
    const reasonText = ctrl.endReason;
    const diffs = [BLACK, WHITE].map((c) => (s.seats && s.seats[c] ? s.seats[c].diff : undefined));
    const key = JSON.stringify([s.status, s.winner, s.result, reasonText, s.next_game || null, diffs, s.unrated || null]);
    node.hidden = false;
    if (node.dataset.key === key) return;
    node.dataset.key = key;
    node.dataset.result = s.result || '';
    node.dataset.termination = s.termination || '';
    node.dataset.winner = s.winner === BLACK ? 'black' : s.winner === WHITE ? 'white' : 'none';
    const { headline, personal } = this.resultHeadline(node, s);
    node.textContent = '';
    const h = document.createElement('strong');
    h.className = 'result-headline';
    h.textContent = headline;
    const reason = document.createElement('span');
    reason.className = 'result-reason';
    // An old page's "game aborted" under the headline "Game aborted" would only repeat it.
    reason.textContent = reasonText.toLowerCase() === headline.toLowerCase() ? '' : reasonText;
    // "1-0" in words too: the result's scores are Black's first (How to play, "Writing moves down").
    const score = document.createElement('abbr');
    score.className = 'result-score';
    score.textContent = s.result && s.result !== '*' ? s.result : '';
    if (score.textContent) score.title = resultWords(s.result);
    node.append(h);
    if (personal) {
      const you = document.createElement('span');
      you.className = 'result-personal';
      you.textContent = personal;
      node.append(you);
    }
    node.append(reason, score);
    if (diffs.some((d) => typeof d === 'number')) node.append(this.ratingChanges(s));
    const unrated = unratedText(s.unrated);
    if (unrated) {
      const why = document.createElement('p');
      why.className = 'result-unrated';
      why.textContent = unrated;
      node.append(why);
    }
    if (s.next_game) {
      // Players are taken there automatically when the rematch starts; this link is for spectators
      // (and for a player who comes back to this page later).
      const link = document.createElement('a');
      link.id = 'rematch-link';
      link.className = 'button primary';
      link.href = `/g/${encodeURIComponent(s.next_game)}/`;
      link.textContent = ctrl.you ? gettext('Go to the rematch') : gettext('Watch the rematch');
      node.append(link);
    }
  }

  /** The result banner's headline ("Black wins (alice)") and, for a player, "You won!" or "You lost."
   *  (also marked on `node` for the styles). */
  resultHeadline(node, s) {
    const ctrl = this.ctrl;
    let headline;
    let personal = '';
    if (s.winner) {
      const name = ctrl.seatName(s.winner);
      headline = s.winner === BLACK ? gettext('Black wins') : gettext('White wins');
      if (name) headline += ` (${name})`;
      if (ctrl.you) personal = ctrl.you === s.winner ? gettext('You won!') : gettext('You lost.');
      node.dataset.personal = ctrl.you ? (ctrl.you === s.winner ? 'won' : 'lost') : '';
    } else if (s.status === 'aborted') headline = gettext('Game aborted');
    else headline = gettext('Draw');
    return { headline, personal };
  }

  // A rated game's end: each player's name with the points the game gave or took ("+8", "−8").
  ratingChanges(s) {
    const list = document.createElement('ul');
    list.className = 'result-ratings';
    list.setAttribute('aria-label', gettext('Rating changes'));
    for (const color of [BLACK, WHITE]) {
      const seat = s.seats[color];
      if (!seat || typeof seat.diff !== 'number') continue;
      const item = document.createElement('li');
      item.dataset.color = color === BLACK ? 'black' : 'white';
      const who = document.createElement('span');
      who.className = 'result-rating-name';
      who.textContent = `${this.ctrl.seatName(color) || colorName(color)} (${ratingText(seat)})`;
      const diff = document.createElement('span');
      diff.className = `rating-diff ${seat.diff > 0 ? 'up' : seat.diff < 0 ? 'down' : 'same'}`;
      diff.textContent = diffText(seat.diff);
      item.append(who, ' ', diff);
      list.append(item);
    }
    return list;
  }

  renderConnection() {
    const node = this.els.connection;
    if (!node) return;
    const ctrl = this.ctrl;
    node.dataset.state = ctrl.connection;
    let label = '';
    if (ctrl.connection === 'connecting') label = ctrl.v === null ? gettext('Connecting…') : gettext('Reconnecting…');
    else if (ctrl.connection === 'closed')
      label =
        ctrl.connectionDetail === 'no_such_game'
          ? gettext('This game does not exist.')
          : ctrl.connectionDetail === 'too_many_sockets'
            ? gettext('Too many pages of this site are open in this browser: close one, then reload this page.')
            : ctrl.connectionDetail === 'crowded'
              ? gettext('Too many pages of this site are open in this browser; trying again…')
              : gettext('Connection lost. Reconnecting…');
    else if (ctrl.linkDownAt !== null) label = gettext('Live updates interrupted, reconnecting…');
    text(node, label);
    node.hidden = !label;
  }

  renderAudience() {
    const node = this.els.audience;
    if (!node) return;
    const a = this.ctrl.audience;
    const n = a ? a.spectators : 0;
    text(node, n ? fmt(ngettext('%(count)s spectator watching', '%(count)s spectators watching', n), { count: n }) : '');
    node.hidden = !n;
  }

  renderNoProgress() {
    const node = this.els.noProgress;
    if (!node) return;
    const left = noProgressLeft(this.ctrl.state, this.ctrl.protocol.noProgressLimit);
    if (left === null) {
      node.hidden = true;
      return;
    }
    const moves = Math.ceil(left / 2);
    text(
      node,
      fmt(
        ngettext(
          'Forty-move rule: draw in %(count)s move unless a capture or man move',
          'Forty-move rule: draw in %(count)s moves unless a capture or man move',
          moves,
        ),
        { count: moves },
      ),
    );
    node.dataset.plies = String(left);
    node.classList.toggle('urgent', left <= 10);
    node.hidden = false;
  }

  renderMoves() {
    const ctrl = this.ctrl;
    const turn = ctrl.state ? ctrl.state.turn : BLACK;
    this.moveList.render(ctrl.moves, firstMover(ctrl.moves.length, turn), ctrl.shownPly, ctrl.replaying);
  }

  renderReplay() {
    const ctrl = this.ctrl;
    const els = this.els;
    const n = ctrl.moves.length;
    const shown = ctrl.shownPly;
    const disable = (node, off) => {
      if (node && node.disabled !== off) node.disabled = off;
    };
    const prevOk = shown > 0 && !!ctrl.fenAt(shown - 1);
    disable(els.replayFirst, !(shown > 0 && ctrl.fenAt(0)));
    disable(els.replayPrev, !prevOk);
    disable(els.replayNext, !ctrl.replaying);
    disable(els.replayLast, !ctrl.replaying);
    if (els.replayBar) els.replayBar.hidden = n === 0;
    const live = ctrl.state && !ctrl.isOver;
    if (els.replayStatus) {
      let text_ = '';
      if (ctrl.replaying) {
        const first = firstMover(n, ctrl.state ? ctrl.state.turn : BLACK);
        text_ = `${plyText(ctrl.moves, first, shown)} · ${fmt(ngettext('%(shown)s of %(count)s move', '%(shown)s of %(count)s moves', n), { shown, count: n })}`;
      }
      text(els.replayText, text_);
      els.replayStatus.hidden = !ctrl.replaying;
      els.replayStatus.classList.toggle('live', !!live);
    }
    // "Back to the game" while an earlier position is shown in a game that goes on.
    show(els.backToGame, ctrl.replaying && !!live);
  }

  renderPanels() {
    const ctrl = this.ctrl;
    const waiting = ctrl.status === 'waiting';
    show(this.els.invite, waiting && !!ctrl.you);
    // A spectator's join form makes sense only while a seat is free.
    if (this.els.joinForm) show(this.els.joinForm, ctrl.state ? waiting && !ctrl.you : true);
  }
}
