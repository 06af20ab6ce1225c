// An arena's page, live: the countdown, the standings and top games pushed over the tournament's
// socket (at most once a second), and the page going to the player's new game by itself, with a
// sound, when the player is paired.

import { gettext } from './i18n.js';
import { follow } from './arena_socket.js';
import { SoundPlayer } from './sound.js';

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

function renderStandings(rows) {
  const body = document.getElementById('standings-body');
  body.replaceChildren(...rows.map((r) => {
    const tr = document.createElement('tr');
    if (r.player === config.you) tr.className = 'you';
    if (r.withdrawn) tr.dataset.withdrawn = '';
    const score = cell(String(r.score));
    if (r.fire) {
      const fire = document.createElement('span');
      fire.className = 'fire';
      fire.title = gettext('On fire: the next win counts double');
      fire.textContent = ' 🔥';
      score.append(fire);
    }
    tr.append(cell(String(r.rank)), cell(r.name, 'th'), score, cell(String(r.games)), cell(String(r.performance)));
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

function onStandings(msg) {
  renderStandings(msg.standings);
  renderTop(msg.top);
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


tickCountdown();
setInterval(tickCountdown, 1000);
if (status === 'created' || status === 'started') follow(config.wsPath, { standings: onStandings, paired: onPaired });
