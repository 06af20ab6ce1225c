// Small preferences kept in localStorage ("1"/"0"); private browsing keeps them for the page only.

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
