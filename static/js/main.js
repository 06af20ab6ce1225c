// Boot: read the page's game-config, build the controller and the views, open the socket.

import { GameAnnouncer } from './view/announce.js';
import { Ctrl } from './ctrl.js';
import { GameSocket, socketUrl } from './socket.js';
import { BoardView } from './view/board.js';
import { TableView } from './view/table.js';
import { ActionsView } from './view/actions.js';
import { ClockView } from './view/clocks.js';
import { ChatView } from './view/chat.js';
import { ForecastView } from './view/forecast.js';
import { renderAnalyseLink } from './view/analyse-link.js';
import { wireReplay } from './view/replay.js';
import { gettext } from './i18n.js';
import { Settings } from './settings.js';
import { SoundPlayer, SoundCues } from './sound.js';

function readConfig() {
  const node = document.getElementById('game-config');
  if (!node) return null;
  try {
    return JSON.parse(node.textContent);
  } catch (err) {
    console.error('checkers: unreadable game-config', err);
    return null;
  }
}

async function copyText(input) {
  const value = input.value;
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(value);
      return true;
    } catch (err) {
      /* fall back below */
    }
  }
  input.focus();
  input.select();
  input.setSelectionRange(0, value.length);
  try {
    return document.execCommand('copy');
  } catch (err) {
    return false;
  }
}

function wireInvite() {
  const button = document.getElementById('copy-invite');
  const input = document.getElementById('invite-url');
  if (!button || !input) return;
  const label = button.textContent;
  let timer = null;
  input.addEventListener('focus', () => input.select());
  button.addEventListener('click', async () => {
    const ok = await copyText(input);
    button.textContent = ok ? gettext('Copied!') : gettext('Press Ctrl+C');
    button.classList.toggle('copied', ok);
    if (!ok) input.select();
    clearTimeout(timer);
    timer = setTimeout(() => {
      button.textContent = label;
      button.classList.remove('copied');
    }, 2000);
  });
}

function boot() {
  const config = readConfig();
  const boardEl = document.getElementById('board');
  if (!config || !boardEl) return;

  let board = null;
  let table = null;
  let actions = null;
  let clocks = null;
  let chat = null;
  let forecast = null;
  let settings = null;
  let cues = null;
  let announcer = null;
  const redraw = () => {
    if (settings) settings.render();
    if (board) board.render();
    if (table) table.render();
    if (actions) actions.render();
    if (clocks) clocks.render();
    if (chat) chat.render();
    if (forecast) forecast.render();
    if (board) renderAnalyseLink(document.getElementById('analyse-link'), ctrl);
    if (cues) cues.update();
    if (announcer) announcer.update();
  };
  const ctrl = new Ctrl(config, redraw);

  board = new BoardView(boardEl, ctrl);
  announcer = new GameAnnouncer(ctrl);
  table = new TableView(
    {
      playerTop: document.getElementById('player-top'),
      playerBottom: document.getElementById('player-bottom'),
      turn: document.getElementById('turn'),
      status: document.getElementById('status'),
      resultBanner: document.getElementById('result-banner'),
      audience: document.getElementById('audience'),
      connection: document.getElementById('connection'),
      moveList: document.getElementById('move-list'),
      invite: document.getElementById('invite'),
      joinForm: document.getElementById('join-form'),
      numbersToggle: document.getElementById('toggle-numbers'),
      noProgress: document.getElementById('no-progress'),
      replayBar: document.getElementById('replay-bar'),
      replayFirst: document.getElementById('replay-first'),
      replayPrev: document.getElementById('replay-prev'),
      replayNext: document.getElementById('replay-next'),
      replayLast: document.getElementById('replay-last'),
      replayStatus: document.getElementById('replay-status'),
      replayText: document.getElementById('replay-text'),
      backToGame: document.getElementById('back-to-game'),
    },
    ctrl,
  );
  const byId = (id) => document.getElementById(id);
  actions = new ActionsView(
    {
      panel: byId('game-actions'),
      drawOfferBox: byId('draw-offer-box'),
      drawOfferText: byId('draw-offer-text'),
      acceptDraw: byId('accept-draw'),
      declineDraw: byId('decline-draw'),
      drawPending: byId('draw-pending'),
      playActions: byId('play-actions'),
      offerDraw: byId('offer-draw'),
      resign: byId('resign'),
      abort: byId('abort'),
      resignBox: byId('resign-box'),
      resignConfirm: byId('resign-confirm'),
      resignCancel: byId('resign-cancel'),
      abortBox: byId('abort-box'),
      abortConfirm: byId('abort-confirm'),
      abortCancel: byId('abort-cancel'),
      drawHint: byId('draw-hint'),
      rematchOfferBox: byId('rematch-offer-box'),
      rematchOfferText: byId('rematch-offer-text'),
      acceptRematch: byId('accept-rematch'),
      declineRematch: byId('decline-rematch'),
      rematchActions: byId('rematch-actions'),
      rematch: byId('rematch'),
      rematchNote: byId('rematch-note'),
      claimBox: byId('claim-box'),
      claimText: byId('claim-text'),
      claimActions: byId('claim-actions'),
      claimWin: byId('claim-win'),
      claimDraw: byId('claim-draw'),
      proposeTakeback: byId('propose-takeback'),
      takebackOfferBox: byId('takeback-offer-box'),
      takebackOfferText: byId('takeback-offer-text'),
      acceptTakeback: byId('accept-takeback'),
      declineTakeback: byId('decline-takeback'),
      takebackPending: byId('takeback-pending'),
      takebackHint: byId('takeback-hint'),
    },
    ctrl,
  );
  chat = new ChatView(
    {
      panel: byId('chat'),
      title: byId('chat-title'),
      tabs: byId('chat-tabs'),
      tabPlayers: byId('chat-tab-players'),
      tabSpectators: byId('chat-tab-spectators'),
      hide: byId('chat-hide'),
      body: byId('chat-body'),
      lines: byId('chat-lines'),
      note: byId('chat-note'),
      quick: byId('chat-quick'),
      form: byId('chat-form'),
      input: byId('chat-input'),
      muteRow: byId('chat-mute-row'),
      mute: byId('chat-mute'),
    },
    ctrl,
  );
  forecast = new ForecastView(
    {
      panel: byId('forecast'),
      text: byId('forecast-text'),
      save: byId('forecast-save'),
      clear: byId('forecast-clear'),
      note: byId('forecast-note'),
      error: byId('forecast-error'),
      lines: byId('forecast-lines'),
    },
    ctrl,
  );
  clocks = new ClockView(
    {
      clockTop: byId('clock-top'),
      clockBottom: byId('clock-bottom'),
      timeControl: byId('time-control'),
      answerTime: byId('answer-time'),
      firstMoveNote: byId('first-move-note'),
    },
    ctrl,
  );

  const sound = new SoundPlayer();
  settings = new Settings(
    {
      panel: byId('settings'),
      flip: byId('flip-board'),
      coords: byId('toggle-coords'),
      numbers: byId('toggle-numbers'),
      volume: byId('sound-volume'),
      volumeValue: byId('sound-volume-value'),
      mute: byId('sound-mute'),
      test: byId('sound-test'),
      premoves: byId('toggle-premoves'),
      confirm: byId('toggle-confirm'),
      confirmBar: byId('confirm-move'),
      confirmText: byId('confirm-move-text'),
      confirmYes: byId('confirm-move-yes'),
      confirmNo: byId('confirm-move-no'),
    },
    ctrl,
    sound,
  );
  cues = new SoundCues(ctrl, sound);
  wireInvite();
  wireReplay({
    first: () => ctrl.replayFirst(),
    prev: () => ctrl.replayPrev(),
    next: () => ctrl.replayNext(),
    last: () => ctrl.replayLast(),
    goTo: (ply) => ctrl.goTo(ply),
  });

  const socket = new GameSocket(
    socketUrl(config.wsPath),
    {
      snapshot: (msg) => ctrl.onSnapshot(msg),
      move: (msg) => ctrl.onMove(msg),
      seats: (msg) => ctrl.onSeats(msg),
      update: (msg) => ctrl.onUpdate(msg),
      takeback: (msg) => ctrl.onTakeback(msg),
      audience: (msg) => ctrl.onAudience(msg),
      chat: (msg) => ctrl.onChat(msg),
      forecast: (msg) => ctrl.onForecast(msg),
      link: (msg) => ctrl.onLink(msg),
      error: (msg) => ctrl.onError(msg),
      pong: () => {},
    },
    { onState: (state, detail) => ctrl.onConnection(state, detail) },
  );
  ctrl.socket = socket;
  redraw();
  socket.connect();

  // For debugging in the console and for browser tests.
  window.checkers = { ctrl, socket, board, table, actions, clocks, chat, forecast, settings, sound, cues };
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
