// The header's bell (#bell in base.html): the player's notifications, newest first, with the
// count of unread ones on the button. Opening the panel marks them all read (the people socket's
// read_notifications: every page of the player clears its count); the lines that were unread keep
// their mark until the panel closes. Each line links to what it is about. Stable hooks for tests:
// #bell-button (aria-expanded), #bell-count, #bell-panel, #bell-list li[data-kind] (.unread).

import { fmt, gettext, ngettext } from './i18n.js';

/** Lines the panel keeps (the server lists at most 30; new ones push the oldest out). */
const LISTED = 30;

/** Only a path on this site is followed. */
function isSitePath(url) {
  return typeof url === 'string' && url.startsWith('/') && !url.startsWith('//');
}

/** "5 minutes ago" in the page's language (the browser's own words for it). */
export function ago(ms, now = Date.now()) {
  const seconds = Math.round((Number(ms) - now) / 1000);
  const lang = document.documentElement.lang || undefined;
  let words;
  try {
    const format = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' });
    const steps = [[60, 'second'], [60, 'minute'], [24, 'hour'], [7, 'day'], [Infinity, 'week']];
    let value = seconds;
    for (const [size, unit] of steps) {
      if (Math.abs(value) < size) {
        words = format.format(Math.round(value), unit);
        break;
      }
      value /= size;
    }
  } catch (err) {
    words = '';
  }
  return words || new Date(Number(ms)).toLocaleString(lang);
}

export class Bell {
  /**
   * @param {HTMLElement} root  #bell
   * @param {(msg: object) => boolean} send  sends a message on the people socket
   */
  constructor(root, send) {
    this.root = root;
    this.send = send;
    this.button = root.querySelector('#bell-button');
    this.count = root.querySelector('#bell-count');
    this.panel = root.querySelector('#bell-panel');
    this.list = root.querySelector('#bell-list');
    this.empty = root.querySelector('#bell-empty');
    this.unread = 0;
    this.button.addEventListener('click', () => (this.isOpen ? this.close() : this.open()));
    document.addEventListener('keydown', (event) => {
      if (event.key === 'Escape' && this.isOpen) {
        this.close();
        this.button.focus();
      }
    });
    document.addEventListener('click', (event) => {
      if (this.isOpen && !this.root.contains(event.target)) this.close();
    });
  }

  get isOpen() {
    return !this.panel.hidden;
  }

  open() {
    this.panel.hidden = false;
    this.button.setAttribute('aria-expanded', 'true');
    if (this.unread > 0) this.send({ type: 'read_notifications' });
  }

  close() {
    this.panel.hidden = true;
    this.button.setAttribute('aria-expanded', 'false');
    if (!this.unread) this.list.querySelectorAll('li.unread').forEach((li) => li.classList.remove('unread'));
  }

  /** `notifications`: the newest ones and the unread count (when the socket opens). */
  onList(msg) {
    this.list.replaceChildren(...(msg.items || []).map((item) => this.line(item)));
    this.setUnread(msg.unread);
  }

  /** `notification`: a new one (or one renewed: it moves to the top). */
  onNew(msg) {
    const item = msg.item || {};
    const old = this.list.querySelector(`li[data-id="${CSS.escape(String(item.id))}"]`);
    if (old) old.remove();
    this.list.prepend(this.line(item));
    while (this.list.children.length > LISTED) this.list.lastElementChild.remove();
    this.setUnread(msg.unread);
    if (this.isOpen) this.send({ type: 'read_notifications' });
  }

  /** `unread`: the count alone (read on another page, or a line that no longer holds). */
  setUnread(count) {
    this.unread = Math.max(0, Number(count) || 0);
    this.count.textContent = this.unread > 99 ? '99+' : String(this.unread);
    this.count.hidden = this.unread === 0;
    this.button.setAttribute('aria-label', this.unread
      ? fmt(ngettext('Notifications: %(n)s unread', 'Notifications: %(n)s unread', this.unread), { n: this.unread })
      : gettext('Notifications'));
    this.empty.hidden = this.list.children.length > 0;
    if (!this.unread && !this.isOpen) this.list.querySelectorAll('li.unread').forEach((li) => li.classList.remove('unread'));
  }

  line(item) {
    const li = document.createElement('li');
    li.dataset.id = String(item.id);
    li.dataset.kind = String(item.kind || '');
    if (!item.read) li.className = 'unread';
    const link = document.createElement(isSitePath(item.url) ? 'a' : 'span');
    if (link.tagName === 'A') link.href = item.url;
    link.className = 'bell-text';
    link.textContent = String(item.text || '');
    const time = document.createElement('time');
    time.className = 'bell-time';
    time.dateTime = new Date(Number(item.at_ms) || Date.now()).toISOString();
    time.textContent = ago(item.at_ms);
    li.append(link, time);
    return li;
  }
}
