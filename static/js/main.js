// Boot: read the page's game-config, build the controller and the views, open the socket. Each
// view is built from its elements in templates/game.html by a function of its own below; every
// change redraws them all, in the order of VIEWS. The TV page (tv.js) puts another game's part of
// the page in place of this one's and builds it again (mountGame): the game shown before stops
// (its socket, timers and listeners on the document), and the sound player stays.

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
import { wireCopy } from './copy.js';
import { Settings } from './settings.js';
import { SoundPlayer, SoundCues } from './sound.js';

const byId = (id) => document.getElementById(id);

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

/** The views a redraw renders, in this order (a view not built yet is skipped). */
const VIEWS = ['settings', 'board', 'table', 'actions', 'clocks', 'chat', 'forecast'];

/** Everything the page shows from `ctrl`, brought up to date. */
function redrawAll(ctrl, views) {
  for (const name of VIEWS) if (views[name]) views[name].render();
  if (views.board) renderAnalyseLink(byId('analyse-link'), ctrl);
  if (views.cues) views.cues.update();
  if (views.announcer) views.announcer.update();
}

function tableView(ctrl) {
  return new TableView(
    {
      playerTop: byId('player-top'),
      playerBottom: byId('player-bottom'),
      turn: byId('turn'),
      status: byId('status'),
      resultBanner: byId('result-banner'),
      audience: byId('audience'),
      connection: byId('connection'),
      moveList: byId('move-list'),
      invite: byId('invite'),
      joinForm: byId('join-form'),
      numbersToggle: byId('toggle-numbers'),
      noProgress: byId('no-progress'),
      replayBar: byId('replay-bar'),
      replayFirst: byId('replay-first'),
      replayPrev: byId('replay-prev'),
      replayNext: byId('replay-next'),
      replayLast: byId('replay-last'),
      replayStatus: byId('replay-status'),
      replayText: byId('replay-text'),
      backToGame: byId('back-to-game'),
    },
    ctrl,
  );
}

function actionsView(ctrl) {
  return new ActionsView(
    {
      panel: byId('game-actions'),
      status: byId('status'),
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
}

function chatView(ctrl) {
  return new ChatView(
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
}

function forecastView(ctrl) {
  return new ForecastView(
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
}

function clockView(ctrl) {
  return new ClockView(
    {
      clockTop: byId('clock-top'),
      clockBottom: byId('clock-bottom'),
      timeControl: byId('time-control'),
      answerTime: byId('answer-time'),
      firstMoveNote: byId('first-move-note'),
    },
    ctrl,
  );
}

function settingsPanel(ctrl, sound) {
  return new Settings(
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
}

/** The page's one sound player: the audio a gesture opened stays open when TV shows another game. */
let soundPlayer = null;

/** Build every view of the game page into `views`, one by one (a redraw meanwhile shows those built);
 *  `signal` ends their listeners on the document. */
function buildViews(ctrl, boardEl, views, signal) {
  views.board = new BoardView(boardEl, ctrl, signal);
  views.announcer = new GameAnnouncer(ctrl);
  views.table = tableView(ctrl);
  views.actions = actionsView(ctrl);
  views.chat = chatView(ctrl);
  views.forecast = forecastView(ctrl);
  views.clocks = clockView(ctrl);
  soundPlayer = soundPlayer || new SoundPlayer();
  views.sound = soundPlayer;
  views.settings = settingsPanel(ctrl, views.sound);
  views.cues = new SoundCues(ctrl, views.sound);
}

/** The game socket, each server message handed to the controller or the part of it it concerns. */
function gameSocket(ctrl, config) {
  return new GameSocket(
    socketUrl(config.wsPath),
    {
      snapshot: (msg) => ctrl.onSnapshot(msg),
      move: (msg) => ctrl.onMove(msg),
      seats: (msg) => ctrl.onSeats(msg),
      update: (msg) => ctrl.onUpdate(msg),
      takeback: (msg) => ctrl.onTakeback(msg),
      audience: (msg) => ctrl.onAudience(msg),
      chat: (msg) => ctrl.chat.onLine(msg),
      forecast: (msg) => ctrl.forecast.onForecast(msg),
      link: (msg) => ctrl.onLink(msg),
      error: (msg) => ctrl.onError(msg),
      pong: () => {},
    },
    { onState: (state, detail) => ctrl.onConnection(state, detail) },
    config.protocol,
  );
}

/** The game built now: {stop()}, or null. */
let mounted = null;

/**
 * Build the game page from the elements and the game-config now in the document, first stopping
 * the one built before (its socket, controller, timers and document listeners). Returns what
 * window.checkers holds (for debugging in the console and for browser tests), or null when the
 * page shows no game.
 */
export function mountGame() {
  if (mounted) {
    mounted.stop();
    mounted = null;
    window.checkers = null;
  }
  const config = readConfig();
  const boardEl = byId('board');
  if (!config || !boardEl) return null;
  const life = new AbortController();
  const views = {};
  const ctrl = new Ctrl(config, () => redrawAll(ctrl, views));
  buildViews(ctrl, boardEl, views, life.signal);
  wireCopy(byId('copy-invite'), byId('invite-url'));
  wireReplay(ctrl.replay, () => true, life.signal);
  const socket = gameSocket(ctrl, config);
  ctrl.socket = socket;
  ctrl.redraw();
  socket.connect();
  mounted = {
    stop() {
      ctrl.stop(); // first: the socket's closing redraws nothing of this game
      life.abort();
      socket.stop();
      for (const view of [views.clocks, views.actions, views.cues, views.table]) view.stop();
    },
  };
  const { board, table, actions, clocks, chat, forecast, settings, sound, cues } = views;
  window.checkers = { ctrl, socket, board, table, actions, clocks, chat, forecast, settings, sound, cues };
  return window.checkers;
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountGame);
else mountGame();
