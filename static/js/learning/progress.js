// The lessons a browser has finished, kept in its localStorage (an account's are kept by the server too).

const KEY = 'checkers.lessonsDone';

/** The keys of the lessons finished in this browser. */
export function finishedLessons() {
  try {
    const list = JSON.parse(window.localStorage.getItem(KEY) || '[]');
    return new Set(Array.isArray(list) ? list.filter((k) => typeof k === 'string') : []);
  } catch (err) {
    return new Set();
  }
}

/** Note that the lesson `key` is finished in this browser. */
export function markFinished(key) {
  const done = finishedLessons();
  done.add(key);
  try {
    window.localStorage.setItem(KEY, JSON.stringify([...done]));
  } catch (err) {
    /* storage full or refused: the server keeps an account's */
  }
}
