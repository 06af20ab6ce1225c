// What happened in the game, in the page's language, for the status line and the result banner:
// why a game ended, a declined offer, a takeback. The server's own words (state.reason) are
// English, so the page words what it knows from the codes (termination, winner, an update's
// `what`) and falls back on the server's text only for a code it does not know.

import { colorName, BLACK, WHITE } from './fen.js';
import { gettext, interpolate } from './i18n.js';

const fmt = (format, values) => interpolate(format, values, true);

/**
 * Why a game ended, in the page's language, from the state's `termination` and `winner` (the
 * server's `reason` is English: it is shown only for a termination this page does not know).
 */
export function endText(termination, winner, fallback = '') {
  const black = winner === WHITE; // the side that lost
  const lost = winner === BLACK || winner === WHITE;
  switch (termination) {
    case 'no_pieces':
      if (lost) return black ? gettext('Black has no pieces left') : gettext('White has no pieces left');
      break;
    case 'no_moves':
      if (lost) return black ? gettext('Black has no legal move') : gettext('White has no legal move');
      break;
    case 'repetition':
      return gettext('draw by threefold repetition');
    case 'forty_moves':
      return gettext('draw by the forty-move rule: 80 plies without a capture or a man move');
    case 'resignation':
      if (lost) return black ? gettext('Black resigned') : gettext('White resigned');
      break;
    case 'agreement':
      return gettext('draw by agreement');
    case 'time_forfeit':
      if (lost) return black ? gettext('Black lost on time') : gettext('White lost on time');
      return gettext('time forfeit');
    case 'abandoned':
      if (lost) return black ? gettext('Black left the game') : gettext('White left the game');
      return gettext('draw: a player left the game');
    case 'aborted':
      return gettext('game aborted');
    default:
      break;
  }
  return fallback || '';
}

/**
 * Why an aborted game this page saw end was aborted: by whom (`by`, a seat; `you`, the viewer's),
 * or that a first move was not made within `firstMoveS` seconds (`by` null). `nameOf(seat)`: a
 * player's name, or null.
 */
export function abortText(by, you, nameOf, firstMoveS) {
  if (by === BLACK || by === WHITE) {
    if (by === you) return gettext('Aborted by you');
    return fmt(gettext('Aborted by %(name)s'), { name: nameOf(by) || colorName(by) });
  }
  return fmt(gettext('Aborted: a first move was not made within %(seconds)s seconds'), { seconds: firstMoveS });
}

/** The opponent (`name`, or null when unknown) moved instead of answering the viewer's offer
 *  (`offer`: 'draw' or 'takeback'), which that declines. */
export function playedOnText(offer, name) {
  if (offer === 'draw') {
    return name
      ? fmt(gettext('%(name)s played on: your draw offer is declined.'), { name })
      : gettext('Your opponent played on: your draw offer is declined.');
  }
  return name
    ? fmt(gettext('%(name)s played on: your takeback proposal is declined.'), { name })
    : gettext('Your opponent played on: your takeback proposal is declined.');
}

/** What a takeback did, in words, for the viewer `you` (`by`: the seat that proposed it). */
export function takebackText(by, plies, you, nameOf) {
  if (by && by === you) return gettext('Takeback accepted: it is your move again.');
  const name = (by && nameOf(by)) || colorName(by);
  if (plies === 2) return fmt(gettext('%(name)s took back a move and its reply.'), { name });
  return fmt(gettext('%(name)s took back a move.'), { name });
}

/**
 * The status line's words for an `update` event `what` done by seat `by`, for the viewer `you`
 * ('' when the actions panel or the result banner says it instead).
 */
export function updateText(what, by, you, nameOf) {
  const name = by && by !== you ? nameOf(by) || colorName(by) : null;
  switch (what) {
    case 'draw_offered':
    case 'rematch_offered':
      return ''; // the actions panel shows the pending offer
    case 'draw_declined':
      if (by && by === you) return gettext('You declined the draw offer.');
      return name ? fmt(gettext('%(name)s declined the draw offer.'), { name }) : gettext('Someone declined the draw offer.');
    case 'rematch_declined':
      if (by && by === you) return gettext('You declined the rematch.');
      return name ? fmt(gettext('%(name)s declined the rematch.'), { name }) : gettext('Someone declined the rematch.');
    case 'rematch_started':
      return gettext('The rematch has started.');
    case 'takeback_offered':
      return ''; // the actions panel shows the pending proposal
    case 'takeback_declined':
      if (by && by === you) return gettext('You declined the takeback.');
      return name ? fmt(gettext('%(name)s declined the takeback.'), { name }) : gettext('Someone declined the takeback.');
    case 'berserk':
      if (by && by === you) return gettext('You went berserk: half your time, for a bonus point if you win.');
      return name ? fmt(gettext('%(name)s went berserk.'), { name }) : gettext('Your opponent went berserk.');
    default:
      return ''; // draw_accepted, resigned, aborted, flagged, claims: the result banner says it
  }
}
