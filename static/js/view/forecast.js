// The conditional moves panel of a correspondence game (docs/protocol.md, "Conditional moves"):
// the lines this seat holds, and a text area to edit them, one line per row, moves separated by
// spaces ("22-18 15x22 25x18 8-11": if they play 22-18, I reply 15x22, if then 25x18, I reply 8-11).
// Shown only to a seat of a correspondence game in play (the server sends `forecast` to no one else).
// The lines, their sending and their refusals are the controller's (ctrl.forecast, forecast.js).

import { gettext, ngettext, interpolate } from '../i18n.js';

/** The lines a text area holds: one per non-empty row, moves split on spaces (and commas). */
export function parseLines(text) {
  return String(text || '')
    .split(/\r?\n/)
    .map((row) => row.trim().split(/[\s,]+/).filter(Boolean))
    .filter((line) => line.length > 0);
}

/** The text area's rows for `lines`. */
export function formatLines(lines) {
  return (lines || []).map((line) => line.join(' ')).join('\n');
}

export class ForecastView {
  constructor(els, ctrl) {
    this.els = els;
    this.ctrl = ctrl;
    this.revision = -1;
    if (!els.panel) return;
    els.save.addEventListener('click', () => {
      if (!ctrl.forecast.send(parseLines(els.text.value))) ctrl.showFlash(gettext('Not connected'), 'error');
      this.render();
    });
    els.clear.addEventListener('click', () => {
      els.text.value = '';
      if (!ctrl.forecast.send([])) ctrl.showFlash(gettext('Not connected'), 'error');
      this.render();
    });
  }

  render() {
    const { els, ctrl } = this;
    if (!els.panel) return;
    const state = ctrl.state;
    const forecast = ctrl.forecast;
    const shown = forecast.lines !== null && !!state && state.status === 'active' && !!ctrl.you;
    els.panel.hidden = !shown;
    if (!shown) return;
    const lines = forecast.lines;
    if (this.revision !== forecast.revision) {
      this.revision = forecast.revision;
      if (document.activeElement !== els.text) els.text.value = formatLines(lines);
      els.lines.textContent = '';
      for (const line of lines) {
        const item = document.createElement('li');
        item.textContent = line.join(' ');
        els.lines.appendChild(item);
      }
    }
    els.lines.hidden = lines.length === 0;
    const ourTurn = state.turn === ctrl.you;
    els.save.disabled = ourTurn;
    els.clear.disabled = ourTurn || lines.length === 0;
    els.text.disabled = ourTurn;
    els.note.textContent = ourTurn
      ? gettext('Your move: conditional moves are stored while your opponent is to move.')
      : lines.length
        ? interpolate(ngettext('%(count)s line stored: the server plays your reply as soon as your opponent plays its first move.',
          '%(count)s lines stored: the server plays your reply as soon as your opponent plays a line\'s first move.',
          lines.length), { count: lines.length }, true)
        : gettext('None stored. One line per row: their move, your reply, their next move, your reply...');
    const error = forecast.error;
    els.error.hidden = !error;
    els.error.textContent = error ? error.message || error.code : '';
  }
}
