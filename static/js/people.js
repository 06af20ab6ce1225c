// Challenges by name, on every page of a signed-in player (#challenge-inbox in base.html): one people
// socket (/ws/people/, docs/protocol.md "People socket"). Incoming challenges show with Accept and
// Decline (with a reason); an accepted one sends every page of both players to the game. On a
// profile, #challenge-form sends a challenge to that player. Stable hooks for tests:
// #challenge-inbox .challenge-card[data-challenge], .challenge-accept, .challenge-decline,
// .challenge-reason, #challenge-form, #challenge-status; #follow-button (a profile), #following-list
// (My games: who is online and playing, with a link to watch), #turn-badge (games waiting for you).

import { GameSocket, socketUrl } from './socket.js';
import { fmt, gettext, ngettext } from './i18n.js';

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

/** Only a path on this site is followed. */
function isSitePath(url) {
  return typeof url === 'string' && url.startsWith('/') && !url.startsWith('//');
}

class People {
  constructor(inbox, form) {
    this.inbox = inbox;
    this.form = form;
    this.status = document.getElementById('challenge-status');
    this.sent = null;
    this.socket = new GameSocket(socketUrl(inbox.dataset.wsPath || '/ws/people/'), {
      challenges: (msg) => { this.inbox.replaceChildren(); (msg.incoming || []).forEach((c) => this.add(c)); },
      challenge: (msg) => this.add(msg),
      challenge_sent: (msg) => this.onSent(msg),
      challenge_gone: (msg) => this.onGone(msg),
      go: (msg) => { if (isSitePath(msg.url)) window.location.assign(msg.url); },
      error: (msg) => this.say(msg.message || gettext('Something went wrong.')),
      following: (msg) => this.onFollowing(msg),
      turns: (msg) => showTurns(Number(msg.count) || 0),
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

  /** The Send button works only while the socket is open (a click before would be lost). */
  onState(state) {
    const button = document.getElementById('challenge-send');
    if (button) button.disabled = state !== 'open';
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

  onSent(msg) {
    this.sent = msg.id;
    this.say(fmt(gettext('Challenge sent to %(name)s; it stays open 10 minutes.'), { name: msg.to }));
  }

  onGone(msg) {
    const card = this.inbox.querySelector(`[data-challenge="${CSS.escape(msg.id)}"]`);
    if (card) card.remove();
    if (msg.status === 'declined' && !card) {
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
    if (this.inbox.querySelector(`[data-challenge="${CSS.escape(c.id)}"]`)) return;
    const card = document.createElement('div');
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
    accept.addEventListener('click', () => this.socket.send({ type: 'accept', id: c.id }));
    const reason = document.createElement('select');
    reason.className = 'challenge-reason';
    reason.setAttribute('aria-label', gettext('Reason for declining'));
    for (const [code, words] of Object.entries(REASONS)) reason.append(new Option(words, code));
    const decline = document.createElement('button');
    decline.type = 'button';
    decline.className = 'button challenge-decline';
    decline.textContent = gettext('Decline');
    decline.addEventListener('click', () => this.socket.send({ type: 'decline', id: c.id, reason: reason.value }));
    card.append(text, accept, reason, decline);
    this.inbox.append(card);
    const left = Number(c.expires_ms) - Date.now();
    if (left > 0) setTimeout(() => card.remove(), left);
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
  const people = new People(inbox, document.getElementById('challenge-form'));
  people.socket.connect();
  window.checkersPeople = people;
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
