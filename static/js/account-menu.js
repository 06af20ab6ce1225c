// The header's account menu (#account-menu in base.html, a <details>): its summary opens and closes
// it (a click, Enter or Space, without scripts too); this closes it on Escape (back to the summary)
// and on a click anywhere else, as the bell's panel does.

function boot() {
  const menu = document.getElementById('account-menu');
  if (!menu) return;
  const summary = menu.querySelector('summary');
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && menu.open) {
      menu.open = false;
      summary.focus();
    }
  });
  document.addEventListener('click', (event) => {
    if (menu.open && !menu.contains(event.target)) menu.open = false;
  });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
