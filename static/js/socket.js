// The game websocket: one handler per server message type, keep-alive pings,
// automatic reconnect with exponential backoff. The server sends a snapshot on
// every (re)connect, so nothing needs replaying from here.

const PING_EVERY_MS = 20000;
const SILENCE_LIMIT_MS = 45000; // no frame for this long: the connection is dead
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15000;
export const CLOSE_NO_SUCH_GAME = 4404;

export function socketUrl(path, loc = window.location) {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${loc.host}${path}`;
}

export class GameSocket {
  /**
   * @param {string} url  ws:// or wss:// URL of the game socket
   * @param {object} handlers  {snapshot, move, seats, error, pong}: one function per message type
   * @param {object} hooks  {onState(state, detail)}: "connecting" | "open" | "closed"
   */
  constructor(url, handlers, hooks = {}) {
    this.url = url;
    this.handlers = handlers;
    this.hooks = hooks;
    this.ws = null;
    this.attempts = 0;
    this.retryTimer = null;
    this.pingTimer = null;
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
    ws.onopen = () => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      this.setState('open');
      this.startPings();
    };
    ws.onmessage = (event) => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      this.dispatch(event.data);
    };
    ws.onclose = (event) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.stopPings();
      if (event.code === CLOSE_NO_SUCH_GAME) {
        this.stop('no_such_game');
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
    const handler = this.handlers[message.type];
    if (handler) handler(message);
    else console.warn('checkers: no handler for message type', message.type);
  }

  dropSocket() {
    this.stopPings();
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

  /** The browser came back online or the tab became visible: retry at once if we are down. */
  reconnectNow() {
    if (this.stopped) return;
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return;
    this.attempts = 0;
    this.open();
  }

  startPings() {
    this.stopPings();
    this.pingTimer = setInterval(() => {
      if (Date.now() - this.lastHeard > SILENCE_LIMIT_MS) {
        // Dead connection (the close frame may never come): drop it and retry.
        this.dropSocket();
        this.scheduleReconnect();
        return;
      }
      this.send({ type: 'ping' });
    }, PING_EVERY_MS);
  }

  stopPings() {
    clearInterval(this.pingTimer);
    this.pingTimer = null;
  }
}
