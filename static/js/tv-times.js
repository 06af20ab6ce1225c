// The TV's timings, shared by the TV page (tv.js) and the home page's TV board (tv-mini.js).

/** Milliseconds the ended game stays shown before the next one, plus up to JITTER_MS at random: the
 *  watchers of one channel do not all ask at the same moment. */
export const PAUSE_MS = 2000;
export const JITTER_MS = 1500;
/** Milliseconds between two questions for a game while a channel has none. */
export const EMPTY_POLL_MS = 10000;
