// The tournament's socket, which only listens: `standings` and `paired` messages
// (docs/tournaments.md, "Live"), followed again after a drop.

import { socketUrl } from './socket.js';

/** Follow the tournament's socket at `path`: `standings` and `paired` messages to `handlers`. */
export function follow(path, handlers, delay = 1000) {
  const ws = new WebSocket(socketUrl(path));
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
