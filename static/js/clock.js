// Clocks on the page: the server's numbers (state.clock, docs/protocol.md) counted
// down locally between events. The page never decides a game on time: when the
// running clock reaches zero it only asks the server (`clock_check`).

import { gettext, ngettext, interpolate } from './i18n.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function pad2(n) {
  return String(n).padStart(2, '0');
}

/** True for a correspondence control ("1d", "3d", "7d"). */
export function isCorrespondence(clock) {
  return !!(clock && typeof clock.control === 'string' && /^\d+d$/.test(clock.control));
}

/**
 * A remaining time as people read it.
 *
 * Live: "4:59", "1:02:03" from an hour up, "0:09.3" (tenths) under 10 s.
 * Correspondence: "2d 23h" (or "3d") from a day up, else "23:59:10".
 * Times are rounded down: a clock shows 0 only when it is really out.
 */
export function formatClock(ms, correspondence = false) {
  const left = Math.max(0, Math.floor(Number(ms) || 0));
  if (correspondence && left >= DAY) {
    const days = Math.floor(left / DAY);
    const hours = Math.floor((left % DAY) / HOUR);
    return hours
      ? interpolate(gettext('%(days)sd %(hours)sh'), { days, hours }, true)
      : interpolate(gettext('%(days)sd'), { days }, true);
  }
  const hours = Math.floor(left / HOUR);
  const minutes = Math.floor((left % HOUR) / MINUTE);
  const seconds = Math.floor((left % MINUTE) / SECOND);
  if (correspondence || hours) return `${hours}:${pad2(minutes)}:${pad2(seconds)}`;
  if (left < 10 * SECOND) return `0:${pad2(seconds)}.${Math.floor((left % SECOND) / 100)}`;
  return `${minutes}:${pad2(seconds)}`;
}

/**
 * A time control in words, in the page's language: "5+3" as it is, "3 days a move", "Untimed".
 * `fallback`: the server's (English) label, for a control this page cannot read.
 */
export function controlLabel(control, fallback = '') {
  const text = String(control || '');
  const days = /^(\d+)d$/.exec(text);
  if (days) {
    const n = Number(days[1]);
    return interpolate(ngettext('%(days)s day a move', '%(days)s days a move', n), { days: n }, true);
  }
  if (/^\d+\+\d+$/.test(text)) return text;
  if (text === 'untimed' || text === '') return gettext('Untimed');
  return fallback || text;
}

/** The low-time mark of a live clock never goes under this (ms). */
export const LOW_TIME_FLOOR_MS = 20_000;
/** ... and is otherwise this share of the start time. */
export const LOW_TIME_SHARE = 0.1;

/**
 * The low-time mark of a game's clock (state.clock), in ms: a live clock ("M+S") is low below 10 %
 * of its start time or below 20 s, whichever is more (5+3: 30 s; 3+2: 20 s); a correspondence
 * clock below an hour. Null for an untimed game or a control this page cannot read.
 */
export function lowTimeMs(clock) {
  if (!clock || typeof clock.control !== 'string') return null;
  const live = /^(\d+)\+(\d+)$/.exec(clock.control);
  if (live) return Math.max(LOW_TIME_FLOOR_MS, Number(live[1]) * 60_000 * LOW_TIME_SHARE);
  if (/^\d+d$/.test(clock.control)) return 3_600_000;
  return null;
}

/** Whole seconds shown by the first-move countdown (rounded up: "1 s" until it is out). */
export function firstMoveSeconds(ms) {
  return Math.max(0, Math.ceil((Number(ms) || 0) / SECOND));
}

/**
 * The clocks now: {B, W, running, firstMove, correspondence, label} with the running side's
 * time (and the first-move allowance) counted down by the `elapsedMs` since the state came.
 * Null in an untimed game. Nothing runs unless the game is active.
 */
export function clockNow(state, elapsedMs) {
  const clock = state && state.clock;
  if (!clock) return null;
  const active = state.status === 'active';
  const spent = active ? Math.max(0, Number(elapsedMs) || 0) : 0;
  const running = active && (clock.running === 'B' || clock.running === 'W') ? clock.running : null;
  const out = {
    B: Math.max(0, Number(clock.B) || 0),
    W: Math.max(0, Number(clock.W) || 0),
    running,
    firstMove: null,
    correspondence: isCorrespondence(clock),
    label: clock.label || clock.control || '',
  };
  if (running) out[running] = Math.max(0, out[running] - spent);
  if (active && clock.first_move_ms !== null && clock.first_move_ms !== undefined) {
    out.firstMove = Math.max(0, Number(clock.first_move_ms) - spent);
  }
  return out;
}

/** True when the page's countdown says the side to move is out of time (or of first-move time). */
export function atZero(now) {
  if (!now) return false;
  if (now.running && now[now.running] <= 0) return true;
  return now.firstMove !== null && now.firstMove <= 0;
}
