// The chat panel: the players' room and the spectators' room (docs/protocol.md, "Chat"). The
// controller keeps the lines of the rooms this viewer reads (ctrl.chat, chat.js); this view shows
// one room at a time, sends lines and the quick lines, and keeps two choices in the browser: mute
// the opponent, hide the chat. Every name and line is put in with textContent, never as markup.

import { BLACK } from '../fen.js';
import { gettext, interpolate } from '../i18n.js';
import { loadFlag, saveFlag } from '../storage.js';

export const MUTE_KEY = 'checkers.chat.muteOpponent';
export const HIDE_KEY = 'checkers.chat.hidden';
const NOTE_MS = 5000; // a refusal stays shown this long

/** The quick lines, one click away: sent as the sender's page words them. */
export function quickLines() {
  return [gettext('Hello'), gettext('Good luck'), gettext('Good game'), gettext('Thanks')];
}

/** A line the computer says is one of these English texts: shown in the reader's language. */
function computerText(text) {
  const known = { 'Good game': gettext('Good game') };
  return Object.prototype.hasOwnProperty.call(known, text) ? known[text] : text;
}

function show(node, visible) {
  if (node && node.hidden === visible) node.hidden = !visible;
}

function text(node, value) {
  if (node && node.textContent !== value) node.textContent = value;
}

export class ChatView {
  /**
   * @param {object} els  {panel, title, tabs, tabPlayers, tabSpectators, hide, body, lines,
   *                       note, quick, form, input, muteRow, mute} (templates/game.html)
   * @param {Ctrl} ctrl
   */
  constructor(els, ctrl) {
    this.els = els;
    this.ctrl = ctrl;
    this.room = null; // the room shown
    this.chosen = false; // whether the viewer picked that room (a tab click)
    this.muted = loadFlag(MUTE_KEY);
    this.hidden = loadFlag(HIDE_KEY);
    this.shown = null; // what the list shows: "room|revision|muted", to redraw only on change
    this.seen = { players: 0, spectators: 0 }; // the newest line id read in each room
    this.noteTimer = null;
    this.lastSent = null;

    const on = (node, kind, handler) => {
      if (node) node.addEventListener(kind, handler);
    };
    on(els.tabPlayers, 'click', () => this.choose('players'));
    on(els.tabSpectators, 'click', () => this.choose('spectators'));
    on(els.hide, 'click', () => this.setHidden(!this.hidden));
    on(els.mute, 'change', () => this.setMuted(els.mute.checked));
    on(els.form, 'submit', (e) => {
      e.preventDefault();
      if (this.send(els.input.value)) els.input.value = '';
    });
    if (els.quick) {
      for (const line of quickLines()) {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'button small chat-quick-line';
        button.textContent = line;
        button.addEventListener('click', () => this.send(line));
        els.quick.appendChild(button);
      }
    }
  }

  // ---- what the viewer may do -------------------------------------------------

  /** The rooms shown as tabs: those the viewer reads, less a players' room with the computer
   *  that has nothing in it (there is no chat with the computer). */
  get rooms() {
    const chat = this.ctrl.chat;
    return this.ctrl.protocol.chatRooms.filter((room) => {
      if (!chat.reads(room)) return false;
      if (room === 'players' && this.againstComputer) return chat.lines('players').length > 0;
      return true;
    });
  }

  get againstComputer() {
    const seats = this.ctrl.state && this.ctrl.state.seats;
    return !!(seats && ((seats.B && seats.B.computer) || (seats.W && seats.W.computer)));
  }

  /** Whether the viewer may write in `room` now (the server decides; this only shapes the form). */
  canWrite(room) {
    if (!this.ctrl.chat.reads(room)) return false;
    if (room === 'players') return !!this.ctrl.you && !this.againstComputer;
    return !this.ctrl.you || this.ctrl.isOver;
  }

  choose(room) {
    if (!this.rooms.includes(room) || this.room === room) return;
    this.room = room;
    this.chosen = true;
    this.render();
  }

  setHidden(hidden) {
    this.hidden = !!hidden;
    saveFlag(HIDE_KEY, this.hidden);
    this.render();
  }

  setMuted(muted) {
    this.muted = !!muted;
    saveFlag(MUTE_KEY, this.muted);
    this.render();
  }

  /** Send `value` to the room shown; returns true when it went out. */
  send(value) {
    const line = String(value || '').trim();
    if (!line || !this.room || !this.canWrite(this.room)) return false;
    // The longest line, in characters (the server counts the same: code points after trimming).
    const max = this.ctrl.protocol.chatMaxChars;
    if ([...line].length > max) {
      this.note(interpolate(gettext('A chat line holds at most %(max)s characters.'), { max }, true));
      return false;
    }
    if (!this.ctrl.chat.send(this.room, line)) {
      this.note(gettext('Not connected: the line was not sent.'));
      return false;
    }
    this.lastSent = line;
    return true;
  }

  note(message) {
    this.ctrl.chat.notice = message;
    clearTimeout(this.noteTimer);
    this.noteTimer = setTimeout(() => {
      this.ctrl.chat.notice = null;
      this.render();
    }, NOTE_MS);
    this.render();
  }

  // ---- drawing -----------------------------------------------------------------

  /** The name shown for a line: the computer's in the page's language, else the one stored. */
  nameOf(line) {
    const seats = this.ctrl.state && this.ctrl.state.seats;
    if (line.seat && seats && seats[line.seat] && seats[line.seat].computer) return this.ctrl.seatName(line.seat);
    return line.name;
  }

  textOf(line) {
    const seats = this.ctrl.state && this.ctrl.state.seats;
    if (line.seat && seats && seats[line.seat] && seats[line.seat].computer) return computerText(line.text);
    return line.text;
  }

  /** Lines of the opponent, hidden while muted (in either room). */
  visible(line) {
    return !(this.muted && this.ctrl.you && line.seat && line.seat !== this.ctrl.you && !this.againstComputer);
  }

  render() {
    const { els, ctrl } = this;
    if (ctrl.chat.error) {
      // A refusal of our own line: say why, and give the text back to edit.
      const error = ctrl.chat.error;
      ctrl.chat.error = null;
      if (els.input && !els.input.value && this.lastSent) els.input.value = this.lastSent;
      this.note(error.message || error.code);
      return;
    }
    const rooms = this.rooms;
    show(els.panel, rooms.length > 0);
    if (!rooms.length) return;
    // The viewer's own room until they pick a tab: a room that appears later (the computer's
    // "Good game" after the spectators' room opened at the end) is shown when it is theirs.
    const own = ctrl.you ? 'players' : 'spectators';
    if (!rooms.includes(this.room) || (!this.chosen && this.room !== own && rooms.includes(own))) {
      this.room = rooms.includes(own) ? own : rooms[0];
    }
    els.panel.classList.toggle('chat-hidden', this.hidden);
    show(els.body, !this.hidden);
    text(els.hide, this.hidden ? gettext('Show chat') : gettext('Hide chat'));
    if (els.hide) els.hide.setAttribute('aria-expanded', String(!this.hidden));
    show(els.tabs, rooms.length > 1);
    for (const [room, tab] of [['players', els.tabPlayers], ['spectators', els.tabSpectators]]) {
      if (!tab) continue;
      show(tab, rooms.includes(room));
      const active = room === this.room;
      tab.classList.toggle('active', active);
      tab.setAttribute('aria-selected', String(active));
      const lines = ctrl.chat.lines(room);
      const newest = lines.length ? lines[lines.length - 1].id : 0;
      if (active && !this.hidden) this.seen[room] = Math.max(this.seen[room], newest);
      const unread = !active && lines.some((line) => line.id > this.seen[room] && this.visible(line));
      tab.classList.toggle('unread', unread);
    }
    text(els.title, this.room === 'players' ? gettext("Players' chat") : gettext("Spectators' chat"));
    if (this.hidden) return;
    this.renderLines();
    const writable = this.canWrite(this.room);
    show(els.form, writable);
    show(els.quick, writable);
    const opponentSeat = ctrl.you && !this.againstComputer;
    show(els.muteRow, !!opponentSeat);
    if (els.mute && els.mute.checked !== this.muted) els.mute.checked = this.muted;
    let note = ctrl.chat.notice;
    if (!note && !writable) {
      if (this.room === 'players' && this.againstComputer) note = gettext('There is no chat with the computer.');
      else if (this.room === 'players') note = gettext('Only the two players write here.');
    }
    if (!note && this.muted && opponentSeat) note = gettext("Your opponent's lines are hidden.");
    text(els.note, note || '');
    show(els.note, !!note);
    if (els.note) els.note.classList.toggle('error', !!ctrl.chat.notice);
  }

  renderLines() {
    const { els, ctrl } = this;
    const lines = ctrl.chat.lines(this.room);
    const key = `${this.room}|${ctrl.chat.revision}|${this.muted}|${ctrl.you}`;
    if (this.shown === key || !els.lines) return;
    this.shown = key;
    const list = els.lines;
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    const items = [];
    for (const line of lines) {
      if (!this.visible(line)) continue;
      const item = document.createElement('li');
      item.className = 'chat-line';
      item.dataset.id = String(line.id);
      if (line.seat) {
        item.classList.add('by-player', line.seat === BLACK ? 'by-black' : 'by-white');
        if (line.seat === ctrl.you) item.classList.add('mine');
      }
      const name = document.createElement('span');
      name.className = 'chat-name';
      name.textContent = this.nameOf(line);
      const body = document.createElement('span');
      body.className = 'chat-text';
      body.textContent = this.textOf(line);
      item.append(name, ': ', body);
      items.push(item);
    }
    list.replaceChildren(...items);
    list.classList.toggle('empty', !items.length);
    if (!items.length) list.dataset.empty = gettext('No messages yet.');
    if (atBottom || items.length <= 1) list.scrollTop = list.scrollHeight;
  }
}
