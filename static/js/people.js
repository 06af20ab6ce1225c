// Challenges by name, on every page of a signed-in player (#challenge-inbox in base.html): one people
// socket (/ws/people/, docs/protocol.md "People socket"). Incoming challenges show with Accept and
// Decline (with a reason); an accepted one sends every page of both players to the game. On a
// profile, #challenge-form sends a challenge to that player. Stable hooks for tests:
// #challenge-inbox .challenge-card[data-challenge], .challenge-accept, .challenge-decline,
// .challenge-reason, #challenge-form, #challenge-status; #follow-button (a profile), #following-list
// (My games: who is online and playing, with a link to watch), #turn-badge (games waiting for you),
// #my-challenges (My games: the open challenges received and sent, with Accept, Decline, Cancel;
// there the received ones show in it rather than in the inbox). The bell is bell.js. A challenge
// received sounds (sound.js's "challenge" cue, at the volume and mute of the game page's settings).

import { GameSocket, socketUrl } from './socket.js';
import { fmt, gettext, ngettext } from './i18n.js';
import { Bell } from './bell.js';
import { KEYS } from './settings.js';
import { SoundPlayer } from './sound.js';
import { loadChoice, loadNumber } from './storage.js';

const PROTOCOL = { closeCodes: { noSuchGame: 4401, tooManySockets: 4429 }, pingEveryMs: 3000 };

export const REASONS = {
  not_now: gettext('Not now'),
  too_fast: gettext('Too fast'),
  too_slow: gettext('Too slow'),
  casual_only: gettext('Casual games only'),
  rated_only: gettext('Rated games only'),
};

/** "5+3, rated, 3-move ballot, you play White": a challenge's settings in words, for its receiver. */
export function describe(c) {
  const parts = [c.control === 'untimed' ? gettext('Untimed') : c.control];
  parts.push(c.rated ? gettext('rated') : gettext('casual'));
  if (c.ballot) parts.push(gettext('3-move ballot'));
  if (c.color === 'B') parts.push(gettext('you play White'));
  else if (c.color === 'W') parts.push(gettext('you play Black'));
  else parts.push(gettext('colours drawn at random'));
  return parts.join(', ');
}

/** "5+3, rated, you play Black": a challenge's settings in words, for its sender. */
export function describeSent(c) {
  const parts = [c.control === 'untimed' ? gettext('Untimed') : c.control];
  parts.push(c.rated ? gettext('rated') : gettext('casual'));
  if (c.ballot) parts.push(gettext('3-move ballot'));
  if (c.color === 'B') parts.push(gettext('you play Black'));
  else if (c.color === 'W') parts.push(gettext('you play White'));
  else parts.push(gettext('colours drawn at random'));
  return parts.join(', ');
}

/** Made with the page, so that the viewer's first touch opens its audio (browsers allow no sound before). */
let sound = null;

/** The "challenge" cue, at the game page's volume and mute (read now: another tab may have changed them). */
function ring() {
  if (!sound) return;
  sound.setVolume(loadNumber(KEYS.volume, 70, 0, 100) / 100);
  sound.setMuted(loadChoice(KEYS.muted, false));
  sound.play('challenge');
}

/** Only a path on this site is followed. */
function isSitePath(url) {
  return typeof url === 'string' && url.startsWith('/') && !url.startsWith('//');
}

class People {
  constructor(inbox, form) {
    this.open = false; // the socket is open (onState)
    this.inbox = inbox;
    this.form = form;
    this.status = document.getElementById('challenge-status');
    this.sent = null;
    this.mine = document.getElementById('my-challenges');
    const bellRoot = document.getElementById('bell');
    this.bell = bellRoot ? new Bell(bellRoot, (msg) => this.socket.send(msg)) : null;
    this.socket = new GameSocket(socketUrl(inbox.dataset.wsPath || '/ws/people/'), {
      challenges: (msg) => this.onChallenges(msg),
      challenge: (msg) => { this.add(msg); ring(); },
      challenge_sent: (msg) => this.onSent(msg),
      challenge_gone: (msg) => this.onGone(msg),
      go: (msg) => { if (isSitePath(msg.url)) window.location.assign(msg.url); },
      error: (msg) => this.say(msg.message || gettext('Something went wrong.')),
      following: (msg) => this.onFollowing(msg),
      turns: (msg) => showTurns(Number(msg.count) || 0),
      notifications: (msg) => this.bell && this.bell.onList(msg),
      notification: (msg) => this.bell && this.bell.onNew(msg),
      unread: (msg) => this.bell && this.bell.setUnread(msg.count),
      pong: () => {},
    }, { onState: (state) => this.onState(state) }, PROTOCOL);
    this.follow = document.getElementById('follow-button');
    if (this.follow) {
      this.follow.addEventListener('click', () => this.socket.send({
        type: this.follow.dataset.following === '1' ? 'unfollow' : 'follow', name: this.follow.dataset.name,
      }));
    }
    if (form) form.addEventListener('submit', (event) => { event.preventDefault(); this.send(); });
  }

  /** The buttons that send on the socket (Send, Accept, Decline, Cancel, Follow) work only while it
   * is open: a click while it connects or reconnects would be lost. */
  onState(state) {
    this.open = state === 'open';
    for (const button of document.querySelectorAll('.needs-socket')) button.disabled = !this.open;
  }

  /** `button` marked as sending on the socket, enabled only while it is open (see onState). */
  needsSocket(button) {
    button.classList.add('needs-socket');
    button.disabled = !this.open;
    return button;
  }

  say(text) {
    if (this.status) this.status.textContent = text;
    else this.note(text);
  }

  /** A short line in the inbox (for news about one's own challenges away from the profile). */
  note(text) {
    const p = document.createElement('p');
    p.className = 'challenge-note';
    p.textContent = text;
    this.inbox.append(p);
  }

  send() {
    const value = (id) => document.getElementById(id);
    const ok = this.socket.send({
      type: 'challenge', to: this.form.dataset.to, control: value('challenge-control').value,
      color: value('challenge-color').value, rated: value('challenge-rated').checked,
      ballot: value('challenge-ballot').checked,
    });
    this.say(ok ? gettext('Sending…') : gettext('Not connected yet; try again in a moment.'));
  }

  /** `challenges`: the open ones received (the inbox, or My games' list) and sent (My games' list). */
  onChallenges(msg) {
    this.inbox.replaceChildren();
    if (this.mine) this.mine.querySelectorAll('[data-challenge]').forEach((el) => el.remove());
    (msg.incoming || []).forEach((c) => this.add(c));
    (msg.outgoing || []).forEach((c) => this.addSent(c));
    this.showMine();
  }

  /** My games' list: the empty line shows when no challenge is open. */
  showMine() {
    if (!this.mine) return;
    const empty = document.getElementById('my-challenges-empty');
    if (empty) empty.hidden = this.mine.querySelector('[data-challenge]') !== null;
  }

  /** A challenge this player sent, in My games' list, with Cancel. */
  addSent(c) {
    if (!this.mine || this.mine.querySelector(`[data-challenge="${CSS.escape(c.id)}"]`)) return;
    const li = document.createElement('li');
    li.className = 'challenge-card sent';
    li.dataset.challenge = c.id;
    const text = document.createElement('p');
    const who = document.createElement('strong');
    who.textContent = c.to;
    text.append(gettext('Your challenge to'), ' ', who, ': ', describeSent(c));
    const cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.className = 'button challenge-cancel';
    cancel.textContent = gettext('Cancel');
    this.needsSocket(cancel).addEventListener('click', () => this.socket.send({ type: 'cancel', id: c.id }));
    li.append(text, cancel);
    this.mine.append(li);
    this.expire(li, c);
  }

  /** Drop `el` once its challenge has expired. */
  expire(el, c) {
    const left = Number(c.expires_ms) - Date.now();
    if (left > 0) {
      setTimeout(() => { el.remove(); this.showMine(); }, left);
    }
  }

  onSent(msg) {
    this.addSent(msg);
    this.showMine();
    this.sent = msg.id;
    this.say(fmt(gettext('Challenge sent to %(name)s; it stays open 10 minutes.'), { name: msg.to }));
  }

  onGone(msg) {
    const card = document.querySelector(`[data-challenge="${CSS.escape(msg.id)}"]`);
    if (card) card.remove();
    this.showMine();
    if (msg.status === 'declined' && (!card || card.classList.contains('sent'))) {
      this.say(fmt(gettext('%(name)s declined: %(reason)s'), { name: msg.by, reason: REASONS[msg.reason] || msg.reason }));
    }
  }

  /** The players followed: the profile's Follow button and the My games list (online, playing, watch). */
  onFollowing(msg) {
    const players = msg.players || [];
    if (this.follow) {
      const name = this.follow.dataset.name.toLowerCase();
      const following = players.some((p) => String(p.name).toLowerCase() === name);
      this.follow.dataset.following = following ? '1' : '0';
      this.follow.textContent = following ? gettext('Unfollow') : gettext('Follow');
      this.follow.hidden = false;
    }
    const list = document.getElementById('following-list');
    if (!list) return;
    const items = players.map((p) => {
      const li = document.createElement('li');
      li.dataset.player = p.name;
      const link = document.createElement('a');
      link.href = `/@/${encodeURIComponent(p.name)}`;
      link.textContent = p.name;
      const state = document.createElement('span');
      state.className = p.online ? 'following-state online' : 'following-state';
      state.textContent = p.online ? gettext('online') : gettext('offline');
      li.append(link, ' ', state);
      if (p.url && isSitePath(p.url)) {
        const watch = document.createElement('a');
        watch.className = 'button small watch-link';
        watch.href = p.url;
        watch.textContent = gettext('Playing: watch');
        li.append(' ', watch);
      }
      return li;
    });
    list.replaceChildren(...items);
    const empty = document.getElementById('following-empty');
    if (empty) empty.hidden = items.length > 0;
  }

  add(c) {
    if (document.querySelector(`[data-challenge="${CSS.escape(c.id)}"]`)) return;
    const card = document.createElement(this.mine ? 'li' : 'div');
    card.className = 'challenge-card';
    card.dataset.challenge = c.id;
    const text = document.createElement('p');
    const who = document.createElement('strong');
    who.textContent = c.from;
    text.append(who, ' ', gettext('challenges you:'), ' ', describe(c));
    const accept = document.createElement('button');
    accept.type = 'button';
    accept.className = 'button primary challenge-accept';
    accept.textContent = gettext('Accept');
    this.needsSocket(accept).addEventListener('click', () => this.socket.send({ type: 'accept', id: c.id }));
    const reason = document.createElement('select');
    reason.className = 'challenge-reason';
    reason.setAttribute('aria-label', gettext('Reason for declining'));
    for (const [code, words] of Object.entries(REASONS)) reason.append(new Option(words, code));
    const decline = document.createElement('button');
    decline.type = 'button';
    decline.className = 'button challenge-decline';
    decline.textContent = gettext('Decline');
    this.needsSocket(decline).addEventListener('click', () => this.socket.send({ type: 'decline', id: c.id, reason: reason.value }));
    card.append(text, accept, reason, decline);
    (this.mine || this.inbox).append(card);
    this.showMine();
    this.expire(card, c);
  }
}

/** The "My games (N)" badge: games waiting for your move, kept up to date by the people socket. */
export function showTurns(count) {
  const link = document.getElementById('my-games-link');
  if (!link) return;
  let badge = document.getElementById('turn-badge');
  if (!count) {
    if (badge) badge.remove();
    return;
  }
  if (!badge) {
    badge = document.createElement('span');
    badge.className = 'turn-badge';
    badge.id = 'turn-badge';
    link.append(' ', badge);
  }
  badge.textContent = String(count);
  badge.title = fmt(ngettext('%(n)s game waits for your move', '%(n)s games wait for your move', count), { n: count });
}

function boot() {
  const inbox = document.getElementById('challenge-inbox');
  if (!inbox) return;
  sound = new SoundPlayer();
  const people = new People(inbox, document.getElementById('challenge-form'));
  people.socket.connect();
  window.checkersPeople = people;
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
