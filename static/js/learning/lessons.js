// The lessons' index: a guest's finished lessons are kept in its browser (localStorage); the
// server marks an account's.

import { finishedLessons } from './progress.js';

function boot() {
  const done = finishedLessons();
  for (const item of document.querySelectorAll('[data-lesson]')) {
    if (done.has(item.dataset.lesson)) {
      item.dataset.done = '1';
      const mark = item.querySelector('[data-done-mark]');
      if (mark) mark.hidden = false;
    }
  }
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
