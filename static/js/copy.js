// Copying a text box's value (an invite link, a position) to the clipboard, with the page's
// fallback where the Clipboard API is refused (no secure context): the text selected and copied.

import { gettext } from './i18n.js';

/** Copy `input`'s value; true when it was copied. */
export async function copyText(input) {
  const value = input.value;
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(value);
      return true;
    } catch (err) {
      /* fall back below */
    }
  }
  input.focus();
  input.select();
  input.setSelectionRange(0, value.length);
  try {
    return document.execCommand('copy');
  } catch (err) {
    return false;
  }
}

/** `button` copies `input`'s link: it says "Copied!" (or how to copy by hand) for two seconds. */
export function wireCopy(button, input) {
  if (!button || !input) return;
  const label = button.textContent;
  let timer = null;
  input.addEventListener('focus', () => input.select());
  button.addEventListener('click', async () => {
    const ok = await copyText(input);
    button.textContent = ok ? gettext('Copied!') : gettext('Press Ctrl+C');
    button.classList.toggle('copied', ok);
    if (!ok) input.select();
    clearTimeout(timer);
    timer = setTimeout(() => {
      button.textContent = label;
      button.classList.remove('copied');
    }, 2000);
  });
}
