// The chat's lines (docs/protocol.md, "Chat"): the rooms this viewer reads, each line once by id.
// Lines carry no version: they are applied as they come, and a snapshot's are merged with the
// ones here, so a resync neither shows a line twice nor drops one. The controller owns one
// (ctrl.chat) and hands it the snapshot's chat, the `chat` messages and the chat's refusals;
// view/chat.js shows it.

const KEEP = 200; // chat lines kept per room on the page

export class ChatCtrl {
  /** @param {Ctrl} ctrl  the game page's controller (ctrl.js): its socket, seat, protocol and redraw */
  constructor(ctrl) {
    this.ctrl = ctrl;
    this.rooms = {}; // room -> its lines, by id, for the rooms this viewer reads
    this.revision = 0; // counts changes to this.rooms, for the chat view
    this.error = null; // the last refusal of a line ({code, message}), for the chat view
    this.notice = null; // what the chat view says under the lines (view/chat.js)
  }

  /** True when this viewer reads `room`. */
  reads(room) {
    return !!this.rooms[room];
  }

  /** The lines of `room` this page holds, oldest first ([] for a room it does not read). */
  lines(room) {
    return this.rooms[room] || [];
  }

  /** A snapshot's chat ({room: [line, ...]}): its rooms are the ones this viewer reads; lines
   *  already here are kept (merged by id). */
  merge(rooms) {
    const next = {};
    for (const room of this.ctrl.protocol.chatRooms) {
      const lines = rooms && Array.isArray(rooms[room]) ? rooms[room] : null;
      if (!lines) continue;
      const byId = new Map((this.rooms[room] || []).map((line) => [line.id, line]));
      for (const line of lines) if (line && typeof line.id === 'number') byId.set(line.id, line);
      next[room] = [...byId.values()].sort((a, b) => a.id - b.id).slice(-KEEP);
    }
    this.rooms = next;
    this.revision += 1;
  }

  /** A `chat` message: one line, applied once per id. */
  onLine(msg) {
    const line = msg && msg.line;
    const ctrl = this.ctrl;
    if (!line || typeof line.id !== 'number') return;
    if (!this.rooms[line.room]) {
      // The spectators' room opens to the players at the end; its history comes with the sync.
      if (!(line.room === 'spectators' && ctrl.you && ctrl.isOver)) return;
      this.rooms.spectators = [];
    }
    const lines = this.rooms[line.room];
    if (lines.some((known) => known.id === line.id)) return;
    lines.push(line);
    lines.sort((a, b) => a.id - b.id);
    if (lines.length > KEEP) lines.splice(0, lines.length - KEEP);
    this.revision += 1;
    ctrl.redraw();
  }

  /** Send a line to `room`; false when not connected. The line shows when the server sends it back. */
  send(room, text) {
    const socket = this.ctrl.socket;
    return !!(socket && socket.send({ type: 'chat', room, text }));
  }

  /** An `error` message: true when it refuses a chat line (the chat view says it; a move in flight
   *  is not disturbed), false when it is not the chat's. */
  onError(msg) {
    if (typeof msg.code !== 'string' || !msg.code.startsWith(this.ctrl.protocol.errors.chatPrefix)) return false;
    this.error = msg;
    this.ctrl.redraw();
    return true;
  }
}
