// What a seat may do now, read from the server's state: offer a draw, propose a takeback, abort,
// ask for a rematch, and how near the forty-move rule is. The actions panel (view/actions.js) and
// the forty-move warning (view/table.js) show their buttons and notes from these; the server
// decides every action. `state` is the server's state (null before the first snapshot), `you`
// the viewer's seat (null for a spectator), `fixedPlies` the plies a 3-move ballot played at the
// start (config.fixedPlies).

import { BLACK, WHITE, opposite } from './fen.js';

/** From this many plies without a capture or man move on, the page warns that the forty-move rule is near. */
export const NO_PROGRESS_WARN = 60;

/** True when a seat holds a player: a person with a name, or the computer. */
function seated(seat) {
  return !!(seat && (seat.computer || seat.name));
}

/** Both seats taken (a rematch needs an opponent), and the opponent's account not deleted. */
export function hasOpponent(state, you) {
  const seats = (state && state.seats) || {};
  const other = you ? seats[opposite(you)] : null;
  return seated(seats[BLACK]) && seated(seats[WHITE]) && !(other && other.deleted);
}

/** The ply from which the viewer may offer a draw again (0: any time). */
export function drawAllowedAt(state, you) {
  const at = state && state.draw_allowed_at && you ? state.draw_allowed_at[you] : 0;
  return Number(at) || 0;
}

/** The ply from which the viewer may propose a takeback again (0: any time). */
export function takebackAllowedAt(state, you) {
  const at = state && state.takeback_allowed_at && you ? state.takeback_allowed_at[you] : 0;
  return Number(at) || 0;
}

/** The computer's level in the opponent's seat, or null when the opponent is a person. */
export function opponentComputer(state, you) {
  const seat = you && state && state.seats ? state.seats[opposite(you)] : null;
  return seat && seat.computer ? Number(seat.computer) : null;
}

/**
 * True when the viewer has a move of their own to take back: the takeback removes one ply on the
 * opponent's turn and two on the viewer's own; the first `fixedPlies` plies never go.
 */
export function hasTakeback(state, you, fixedPlies) {
  if (!state || state.status !== 'active' || !you) return false;
  const plies = state.turn === you ? 2 : 1;
  return state.ply - plies >= (Number(fixedPlies) || 0);
}

/** True while the viewer may abort: before both sides made a move of their own (a 3-move
 *  ballot's plies are the site's). */
export function abortable(state, you, fixedPlies) {
  if (!state || !you || state.status === 'finished' || state.status === 'aborted') return false;
  const own = state.ply - (Number(fixedPlies) || 0);
  return state.status === 'waiting' || (state.status === 'active' && own < 2);
}

/** Plies left before the forty-move rule draws the game (`limit` plies: config.protocol.noProgressLimit),
 *  or null when not worth a warning. */
export function noProgressLeft(state, limit) {
  if (!state || state.status !== 'active') return null;
  const n = Number(state.no_progress) || 0;
  if (n < NO_PROGRESS_WARN) return null;
  return Math.max(0, limit - n);
}

/**
 * The viewer's offer that the opponent's move declined ('draw' or 'takeback'; null: none): the
 * opponent played on instead of answering it. `before`: the state before the move, `state` after.
 */
export function offerPlayedOn(before, state, you) {
  const over = state.status === 'finished' || state.status === 'aborted';
  if (!before || !you || over) return null;
  if (before.draw_offer === you && !state.draw_offer) return 'draw';
  if (before.takeback_offer === you && !state.takeback_offer && before.turn !== you) return 'takeback';
  return null;
}
