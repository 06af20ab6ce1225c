// The tournament's socket: `standings`, `paired`, `chat` and `error` messages
// (docs/tournaments.md, "Live"), followed again after a drop; `send` writes on the open one.

import { socketUrl } from './socket.js';

let current = null;

/** Follow the tournament's socket at `path`: each message to `handlers[msg.type]`. */
export function follow(path, handlers, delay = 1000) {
  const ws = new WebSocket(socketUrl(path));
  current = ws;
  ws.addEventListener('open', () => { document.body.dataset.tournamentSocket = 'open'; delay = 1000; });
  ws.addEventListener('message', (event) => {
    const msg = JSON.parse(event.data);
    handlers[msg.type]?.(msg);
  });
  ws.addEventListener('close', (event) => {
    document.body.dataset.tournamentSocket = 'closed';
    if (event.code === 4404) return;
    setTimeout(() => follow(path, handlers, Math.min(delay * 2, 15000)), delay);
  });
}

/** Send `msg` (an object, as JSON) on the open socket; false when none is open. */
export function send(msg) {
  if (!current || current.readyState !== WebSocket.OPEN) return false;
  current.send(JSON.stringify(msg));
  return true;
}
