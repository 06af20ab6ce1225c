// Conditional moves in a correspondence game (docs/protocol.md, "Conditional moves"): the lines
// this seat holds, as the server last said (its snapshot's `forecast`, then `forecast` messages),
// and sending new ones. The controller owns one (ctrl.forecast) and hands it those messages and
// the refusals that concern it; view/forecast.js shows it and edits the lines.

export class ForecastCtrl {
  /** @param {Ctrl} ctrl  the game page's controller (ctrl.js): its socket, protocol and redraw */
  constructor(ctrl) {
    this.ctrl = ctrl;
    this.lines = null; // lines of moves; null: none offered (not a seat of a correspondence game in play)
    this.revision = 0; // counts changes to this.lines, for the forecast view
    this.error = null; // the last refusal ({code, message}), for the forecast view
    this.pending = false; // lines sent, their answer not come yet
  }

  /** The lines the server holds for this seat (null: none offered). */
  set(lines) {
    this.lines = lines;
    this.revision += 1;
  }

  /** A `forecast` message: our conditional moves now. */
  onForecast(msg) {
    this.pending = false;
    this.error = null;
    this.set(Array.isArray(msg.lines) ? msg.lines : []);
    this.ctrl.redraw();
  }

  /** Send our conditional moves (a list of lines, each a list of move texts; [] clears them);
   *  false when not connected. The answer is a `forecast` message, or an error. */
  send(lines) {
    const socket = this.ctrl.socket;
    this.error = null;
    this.pending = true;
    return !!(socket && socket.send({ type: 'forecast', lines }));
  }

  /** An `error` message: true when it refuses our conditional moves (the forecast panel says it;
   *  a move in flight is not disturbed), false when it is not theirs. A refusal any message may
   *  get is theirs while their answer is due. */
  onError(msg) {
    const { errors } = this.ctrl.protocol;
    const code = msg.code;
    if (typeof code !== 'string') return false;
    if (!code.startsWith(errors.forecastPrefix) && !(this.pending && errors.shared.includes(code))) return false;
    this.pending = false;
    this.error = msg;
    this.ctrl.redraw();
    return true;
  }
}
