// A tournament's page, live (an arena's; a Swiss event's or round robin's standings with their
// tie-breaks and the round's pairing board): the countdown, the standings and top games pushed over the tournament's
// socket (at most once a second), and the page going to the player's new game by itself, with a
// sound, when the player is paired.

import { gettext, interpolate } from './i18n.js';
import { follow, send } from './arena_socket.js';
import { SoundPlayer } from './sound.js';
import { wireCopy } from './copy.js';

const config = JSON.parse(document.getElementById('tournament-config').textContent);
const sounds = new SoundPlayer();
let secondsLeft = config.secondsLeft;
let status = config.status;

/** `s` seconds as h:mm:ss or m:ss. */
export function countdownText(s) {
  const total = Math.max(0, Math.floor(s));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

function tickCountdown() {
  const clock = document.getElementById('clock');
  if (!clock) return;
  clock.textContent = countdownText(secondsLeft);
  if (secondsLeft > 0) secondsLeft -= 1;
  else if (status === 'created' || status === 'started') setTimeout(() => window.location.reload(), 1500);
}

function cell(text, tag = 'td') {
  const el = document.createElement(tag);
  el.textContent = text;
  if (tag === 'th') el.scope = 'row';
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';
const FLAME = 'M6 0C7 4 11 6 11 10.5A5 5 0 0 1 1 10.5C1 8 2.5 6.5 3.5 5.5 3.5 7.5 4.5 8.5 5.5 8.5 4.5 6 5 3 6 0Z';

/** The streak's flame, as the page's template draws it: an icon, and its words for screen readers. */
function flame() {
  const words = gettext('On fire: the next win counts double');
  const fire = document.createElement('span');
  fire.className = 'fire';
  fire.title = words;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 12 16');
  svg.setAttribute('width', '12');
  svg.setAttribute('height', '16');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('d', FLAME);
  svg.append(path);
  const hidden = document.createElement('span');
  hidden.className = 'visually-hidden';
  hidden.textContent = words;
  fire.append(svg, hidden);
  return fire;
}

function renderStandings(rows) {
  const body = document.getElementById('standings-body');
  body.replaceChildren(...rows.map((r) => {
    const tr = document.createElement('tr');
    if (r.player === config.you) tr.className = 'you';
    if (r.withdrawn) tr.dataset.withdrawn = '';
    const score = cell(String(r.score));
    if (r.fire) score.append(' ', flame());
    if ('buchholz' in r) {
      tr.append(cell(String(r.rank)), cell(r.name, 'th'), score, cell(String(r.buchholz)),
        cell(String(r.sonneborn_berger)), cell(String(r.games)));
    } else {
      tr.append(cell(String(r.rank)), cell(r.name, 'th'), score, cell(String(r.games)), cell(String(r.performance)));
    }
    return tr;
  }));
  document.getElementById('standings-empty').hidden = rows.length > 0;
}

function renderTop(games) {
  const list = document.getElementById('top-games');
  list.replaceChildren(...games.map((g) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = `/g/${g.game}/`;
    a.textContent = `${g.black} – ${g.white}`;
    li.append(a);
    return li;
  }));
  document.getElementById('top-empty').hidden = games.length > 0;
}

/** A Swiss event's or round robin's pairing board: board (a ballot pair's return game marked),
 * Black (a link to the game), White or a bye, result; and the round's 3-move ballot. */
function renderBoard(rows, round, rounds, ballot) {
  const body = document.getElementById('board-body');
  body.replaceChildren(...rows.map((b) => {
    const tr = document.createElement('tr');
    const black = cell(b.game ? '' : b.black, 'th');
    if (b.game) {
      const a = document.createElement('a');
      a.href = `/g/${b.game}/`;
      a.textContent = b.black;
      black.append(a);
    }
    const number = cell(String(b.board));
    if (b.leg === 2) {
      const leg = document.createElement('span');
      leg.className = 'leg';
      leg.textContent = gettext('(return)');
      number.append(' ', leg);
    }
    tr.append(number, black, cell(b.white ?? gettext('Bye')), cell(b.result));
    return tr;
  }));
  const ballotLine = document.getElementById('round-ballot');
  if (ballotLine) {
    ballotLine.hidden = !ballot;
    if (ballot) ballotLine.textContent = interpolate(gettext('Ballot %s: %s'), [ballot.number, ballot.moves]);
  }
  document.getElementById('board-empty').hidden = rows.length > 0;
  const title = document.getElementById('board-round');
  if (title && round) title.textContent = interpolate(gettext('(round %s)'), [round]);
  const roundText = document.getElementById('round-text');
  if (roundText && round) roundText.textContent = interpolate(gettext('Round %s of %s'), [round, rounds]);
}

function onStandings(msg) {
  renderStandings(msg.standings);
  if (msg.board) renderBoard(msg.board, msg.round, msg.rounds, msg.ballot);
  else renderTop(msg.top);
  document.getElementById('players-count').textContent = `(${msg.players})`;
  secondsLeft = msg.seconds_left;
  if (msg.status !== status) window.location.reload();
  document.body.dataset.standingsAt = String(Date.now());
}

function onPaired(msg) {
  sounds.play('gameStart');
  document.getElementById('tournament-live').textContent = gettext('You are paired: to your game!');
  setTimeout(() => window.location.assign(msg.url), 300);
}

/** New lines of the tournament's chat, each shown once (merged by id), the newest in view. */
function onChat(msg) {
  const list = document.getElementById('tournament-chat-lines');
  const seen = new Set([...list.children].map((li) => li.dataset.id));
  for (const line of msg.lines) {
    if (seen.has(String(line.id))) continue;
    const li = document.createElement('li');
    li.dataset.id = String(line.id);
    const name = document.createElement('span');
    name.className = 'chat-name';
    name.textContent = line.name;
    const text = document.createElement('span');
    text.className = 'chat-text';
    text.textContent = line.text;
    li.append(name, ' ', text);
    list.append(li);
  }
  document.getElementById('tournament-chat-empty').hidden = list.children.length > 0;
  list.scrollTop = list.scrollHeight;
}

/** A refusal of this page's line: its message, shown under the form. */
function onError(msg) {
  const error = document.getElementById('tournament-chat-error');
  if (error) error.textContent = msg.message;
}

const chatForm = document.getElementById('tournament-chat-form');
chatForm?.addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('tournament-chat-text');
  const error = document.getElementById('tournament-chat-error');
  if (send({ type: 'chat', text: input.value })) {
    input.value = '';
    error.textContent = '';
  } else {
    error.textContent = gettext('Not connected: try again in a moment.');
  }
});

wireCopy(document.getElementById('copy-tournament-invite'), document.getElementById('tournament-invite-url'));
tickCountdown();
setInterval(tickCountdown, 1000);
if (status === 'created' || status === 'started') follow(config.wsPath, {
  standings: onStandings, paired: onPaired, chat: onChat, error: onError,
});
