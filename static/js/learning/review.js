// The computer review panel of a finished game (templates/learning/review_panel.html): ask for the
// review, follow its progress (the server's state, polled while it is queued or running), show the
// result the server drew (chart, accuracy, marked moves), mark the moves in the move list, and turn
// a click on the chart or on a marked move into that position on the board, through the move list's
// own buttons (the game page's replay: static/js/view/replay.js).

import { gettext, ngettext, interpolate } from '../i18n.js';

const POLL_MS = 1000;
const SYMBOLS = { inaccuracy: '?!', mistake: '?', blunder: '??' };

function csrfToken() {
  const input = document.querySelector('input[name="csrfmiddlewaretoken"]');
  return input ? input.value : '';
}

/** Show the position after `ply` on the board: the move list's button does what a click on it does. */
export function showPly(ply) {
  if (ply === 0) {
    const first = document.getElementById('replay-first');
    if (first) first.click();
    return;
  }
  const button = document.querySelector(`#move-list [data-ply="${ply}"]`);
  if (button) button.click();
}

class ReviewPanel {
  constructor(root) {
    this.root = root;
    this.url = root.dataset.url;
    this.marks = {};
    this.timer = null;
    this.observers = [];
    this.stopped = false;
    // The panel's own elements first: a panel stopped (TV showed another game) writes only to its own.
    this.byId = (id) => root.querySelector(`#${id}`) || document.getElementById(id);
    this.byId('request-review').addEventListener('click', () => this.request());
    root.addEventListener('click', (e) => this.onClick(e));
    const list = this.byId('move-list');
    if (list) this.observe(new MutationObserver(() => this.decorate()), list, { childList: true, subtree: false });
    this.watchEnd();
    const status = root.dataset.status;
    if (status === 'queued' || status === 'running' || status === 'done') this.poll();
  }

  observe(observer, node, options) {
    observer.observe(node, options);
    this.observers.push(observer);
  }

  /** The page shows another game now (TV, tv.js): no more polls, nothing drawn. */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const observer of this.observers) observer.disconnect();
  }

  /** The panel appears when the game ends on this page (the result banner is shown), unless no
   * move was played (an aborted game: nothing to review). */
  watchEnd() {
    const banner = this.byId('result-banner');
    if (!banner || !this.root.hidden) return;
    const list = this.byId('move-list');
    const observer = new MutationObserver(() => {
      if (!banner.hidden && !(list && list.classList.contains('empty'))) {
        this.root.hidden = false;
        observer.disconnect();
      }
    });
    this.observe(observer, banner, { attributes: true, attributeFilter: ['hidden'] });
  }

  async request() {
    this.byId('request-review').disabled = true;
    try {
      const response = await fetch(this.url, {
        method: 'POST',
        headers: { Accept: 'application/json', 'X-CSRFToken': csrfToken() },
        credentials: 'same-origin',
      });
      const data = await response.json();
      if (!response.ok) this.showError(data.message || gettext('The review could not be asked for.'));
      else this.render(data);
    } catch (err) {
      this.showError(gettext('The server cannot be reached; try again in a moment.'));
    } finally {
      this.byId('request-review').disabled = false;
    }
  }

  async poll() {
    clearTimeout(this.timer);
    if (this.stopped) return;
    try {
      const response = await fetch(this.url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
      if (response.ok) this.render(await response.json());
      else this.timer = setTimeout(() => this.poll(), POLL_MS * 3);
    } catch (err) {
      this.timer = setTimeout(() => this.poll(), POLL_MS * 3);
    }
  }

  showError(text) {
    const node = this.byId('review-error');
    node.textContent = text;
    node.hidden = false;
  }

  render(data) {
    if (this.stopped) return;
    this.root.dataset.status = data.status;
    this.byId('review-error').hidden = true;
    const waiting = data.status === 'queued' || data.status === 'running';
    this.byId('review-request').hidden = !(data.status === 'none' || data.status === 'failed');
    this.byId('review-progress').hidden = !waiting;
    if (waiting) {
      const bar = this.byId('review-bar');
      bar.max = data.total;
      bar.value = data.done;
      this.byId('review-progress-text').textContent = data.status === 'queued'
        ? (data.ahead ? interpolate(ngettext('Waiting for the engine: %(ahead)s review before this one.',
            'Waiting for the engine: %(ahead)s reviews before this one.', data.ahead), { ahead: data.ahead }, true)
          : gettext('Waiting for the engine…'))
        : interpolate(gettext('Reviewing: %(done)s of %(total)s positions scored.'), { done: data.done, total: data.total }, true);
      this.timer = setTimeout(() => this.poll(), POLL_MS);
    }
    if (data.status === 'failed') this.showError(gettext('The review failed; you may ask for it again.'));
    if (data.status === 'done' && data.html !== undefined) {
      const result = this.byId('review-result');
      if (!result.firstElementChild) result.innerHTML = data.html;
      this.marks = data.marks || {};
      this.decorate();
    }
  }

  /** The marks beside the moves of the move list, with the better move in the title. */
  decorate() {
    for (const [ply, info] of Object.entries(this.marks)) {
      const button = document.querySelector(`#move-list [data-ply="${ply}"]`);
      if (!button || button.dataset.mark) continue;
      button.dataset.mark = info.mark;
      const symbol = document.createElement('span');
      symbol.className = `review-symbol ${info.mark}`;
      symbol.textContent = SYMBOLS[info.mark] || '';
      button.append(symbol);
      if (info.best) button.title = `${button.title} — ${interpolate(gettext('Better: %(best)s'), { best: info.best }, true)}`;
    }
  }

  onClick(e) {
    const target = e.target instanceof Element ? e.target.closest('[data-ply]') : null;
    if (!target || !this.root.contains(target) || target.closest('a')) return;
    const ply = Number(target.dataset.ply);
    showPly(ply);
    const cursor = this.byId('review-cursor');
    const column = this.root.querySelector(`.chart-column[data-ply="${ply}"]`);
    if (cursor && column) {
      const x = Number(column.getAttribute('x')) + Number(column.getAttribute('width')) / 2;
      cursor.setAttribute('x1', x);
      cursor.setAttribute('x2', x);
      cursor.setAttribute('visibility', 'visible');
    }
  }
}

/** Build the review panel now in the document, first stopping the one built before (the TV page
 *  calls it when it shows another game). */
export function mountReview() {
  if (window.checkersReview) window.checkersReview.stop();
  const root = document.getElementById('review');
  window.checkersReview = root ? new ReviewPanel(root) : null;
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mountReview);
else mountReview();
