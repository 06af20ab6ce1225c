// Small preferences kept in localStorage ("1"/"0", or a number); private browsing keeps them for
// the page only.

/** The flag stored under `key` (false when absent or storage is unavailable). */
export function loadFlag(key) {
  try {
    return window.localStorage.getItem(key) === '1';
  } catch (err) {
    return false;
  }
}

/** Store the flag `value` under `key` (ignored when storage is unavailable). */
export function saveFlag(key, value) {
  try {
    window.localStorage.setItem(key, value ? '1' : '0');
  } catch (err) {
    /* private mode: keep it for this page only */
  }
}

/** The flag stored under `key`, or `fallback` when none was ever stored (or storage is unavailable). */
export function loadChoice(key, fallback) {
  try {
    const value = window.localStorage.getItem(key);
    if (value === '1') return true;
    if (value === '0') return false;
  } catch (err) {
    /* unavailable */
  }
  return fallback;
}

/** The number stored under `key`, clamped to [min, max]; `fallback` when absent or unreadable. */
export function loadNumber(key, fallback, min = -Infinity, max = Infinity) {
  try {
    const raw = window.localStorage.getItem(key);
    if (raw !== null && raw !== '') {
      const value = Number(raw);
      if (Number.isFinite(value)) return Math.min(max, Math.max(min, value));
    }
  } catch (err) {
    /* unavailable */
  }
  return fallback;
}

/** Store the number `value` under `key` (ignored when storage is unavailable). */
export function saveNumber(key, value) {
  try {
    window.localStorage.setItem(key, String(value));
  } catch (err) {
    /* private mode */
  }
}

/** The flag kept for this tab only (sessionStorage) under `key`: survives a reload, not a new tab. */
export function loadTabFlag(key) {
  try {
    return window.sessionStorage.getItem(key) === '1';
  } catch (err) {
    return false;
  }
}

/** Keep the flag `value` for this tab only under `key`. */
export function saveTabFlag(key, value) {
  try {
    if (value) window.sessionStorage.setItem(key, '1');
    else window.sessionStorage.removeItem(key);
  } catch (err) {
    /* unavailable */
  }
}
