// The game websocket: one handler per server message type, keep-alive pings,
// automatic reconnect with exponential backoff (a few spaced tries only after a refusal for
// too many sockets; none when the game does not exist). The server sends a snapshot on every
// (re)connect, so nothing needs replaying from here. The close codes and the ping interval are
// the server's (docs/protocol.md, "The page's constants"): the game page passes its config's.

// A network can vanish without a close frame (a laptop lid, a tunnel): the page pings every
// pingEveryMs (3 s) and, having heard nothing for 5 s (a pong is due within a second), takes the
// connection for dead, so "Reconnecting…" shows within about 6 s. The server likewise closes a
// socket it has heard nothing from for 10 s (docs/protocol.md, "ping").
const SILENCE_LIMIT_MS = 5000;
// A connection attempt that neither opens nor fails (a network that swallows packets) is given up.
const CONNECT_TIMEOUT_MS = 8000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15000;
// Refused because this browser (or its address) holds as many sockets of the site as it may
// (docs/protocol.md): a tab just closed, or a server process that died, frees its place within
// seconds, so the page tries again a few times, spaced, then gives up and says why (detail
// 'too_many_sockets'; while it still tries: 'crowded').
const CROWDED_RETRY_MS = [3000, 8000, 20000];
// The lobby's page has no config to pass: its socket goes by the values game.round.protocol
// defines, the ones the game page is given (page_constants).
const LOBBY_PROTOCOL = { closeCodes: { noSuchGame: 4404, tooManySockets: 4429 }, pingEveryMs: 3000 };

export function socketUrl(path, loc = window.location) {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${loc.host}${path}`;
}

export class GameSocket {
  /**
   * @param {string} url  ws:// or wss:// URL of the game socket
   * @param {object} handlers  {snapshot, move, seats, error, pong}: one function per message type
   * @param {object} hooks  {onState(state, detail)}: "connecting" | "open" | "closed"
   * @param {object} protocol  the server's constants: {closeCodes: {noSuchGame, tooManySockets},
   *   pingEveryMs} (the game page's config.protocol)
   */
  constructor(url, handlers, hooks = {}, protocol = LOBBY_PROTOCOL) {
    this.url = url;
    this.handlers = handlers;
    this.hooks = hooks;
    this.closeCodes = protocol.closeCodes;
    this.pingEveryMs = protocol.pingEveryMs;
    this.ws = null;
    this.attempts = 0;
    this.refusals = 0; // closes for too many sockets in a row (reset by any frame: the socket was let in)
    this.retryTimer = null;
    this.pingTimer = null;
    this.connectTimer = null;
    this.pongTimer = null;
    this.lastPing = 0;
    this.lastHeard = 0;
    this.stopped = false;
    this.state = 'closed';
    this.onOnline = () => this.reconnectNow();
    this.onVisible = () => {
      if (document.visibilityState === 'visible') this.reconnectNow();
    };
  }

  connect() {
    this.stopped = false;
    window.addEventListener('online', this.onOnline);
    document.addEventListener('visibilitychange', this.onVisible);
    this.open();
  }

  /** Close for good (no reconnect). */
  stop(reason = 'stopped') {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.dropSocket();
    window.removeEventListener('online', this.onOnline);
    document.removeEventListener('visibilitychange', this.onVisible);
    this.setState('closed', reason);
  }

  /** Send one message; returns false when the socket is not open. */
  send(message) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  setState(state, detail = null) {
    this.state = state;
    if (this.hooks.onState) this.hooks.onState(state, detail);
  }

  open() {
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.dropSocket();
    this.setState('connecting');
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch (err) {
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    this.connectTimer = setTimeout(() => {
      if (ws !== this.ws || ws.readyState !== WebSocket.CONNECTING) return;
      this.dropSocket();
      this.scheduleReconnect();
    }, CONNECT_TIMEOUT_MS);
    ws.onopen = () => {
      if (ws !== this.ws) return;
      clearTimeout(this.connectTimer);
      this.lastHeard = Date.now();
      this.setState('open');
      this.startPings();
    };
    ws.onmessage = (event) => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      this.refusals = 0;
      this.dispatch(event.data);
    };
    ws.onclose = (event) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.stopPings();
      if (event.code === this.closeCodes.noSuchGame) {
        this.stop('no_such_game');
        return;
      }
      if (event.code === this.closeCodes.tooManySockets) {
        this.retryCrowded();
        return;
      }
      this.scheduleReconnect();
    };
    ws.onerror = () => {
      // onclose follows; nothing to do here.
    };
  }

  dispatch(data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch (err) {
      console.warn('checkers: ignoring a frame that is not JSON', data);
      return;
    }
    if (!message || typeof message !== 'object') return;
    if (message.type === 'snapshot') this.attempts = 0; // a working connection: reset the backoff
    if (message.type === 'pong') {
      clearTimeout(this.pongTimer); // the next beat, set from a message: see startPings
      this.pongTimer = setTimeout(() => this.beat(), this.pingEveryMs);
    }
    const handler = this.handlers[message.type];
    if (handler) handler(message);
    else console.warn('checkers: no handler for message type', message.type);
  }

  dropSocket() {
    this.stopPings();
    clearTimeout(this.connectTimer);
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      try {
        ws.close();
      } catch (err) {
        /* already closed */
      }
    }
  }

  scheduleReconnect() {
    if (this.stopped) return;
    this.setState('closed', 'reconnecting');
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempts);
    const delay = base / 2 + Math.random() * (base / 2); // jitter
    this.attempts += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  /** Refused for too many sockets: try again after the next of CROWDED_RETRY_MS, or give up after the last. */
  retryCrowded() {
    if (this.stopped) return;
    if (this.refusals >= CROWDED_RETRY_MS.length) {
      this.refusals = 0;
      this.stop('too_many_sockets');
      return;
    }
    const delay = CROWDED_RETRY_MS[this.refusals];
    this.refusals += 1;
    this.setState('closed', 'crowded');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  /** The browser came back online or the tab became visible: retry at once if we are down. */
  reconnectNow() {
    if (this.stopped) return;
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return;
    if (this.refusals) return; // refused for too many sockets: the spaced retries go on
    this.attempts = 0;
    this.open();
  }

  startPings() {
    this.stopPings();
    this.lastPing = 0;
    // Two timers beat: this interval, and one set again from each pong (dispatch). A tab hidden for
    // minutes has its chained timers, such as this interval, woken once a minute only (Chrome's
    // intensive throttling), which the server would take for a dropped network; a timer set from
    // a message's handler is not throttled so, and the pongs keep the pings going.
    this.pingTimer = setInterval(() => this.beat(), this.pingEveryMs);
  }

  /** One beat: dead after SILENCE_LIMIT_MS without a frame, else a ping (at most one per pingEveryMs). */
  beat() {
    if (!this.ws) return;
    if (Date.now() - this.lastHeard > SILENCE_LIMIT_MS) {
      // Dead connection (the close frame may never come): drop it and retry.
      this.dropSocket();
      this.scheduleReconnect();
      return;
    }
    if (Date.now() - this.lastPing < this.pingEveryMs - 500) return;
    this.lastPing = Date.now();
    this.send({ type: 'ping' });
  }

  stopPings() {
    clearInterval(this.pingTimer);
    clearTimeout(this.pongTimer);
    this.pingTimer = null;
  }
}
