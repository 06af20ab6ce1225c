// The language picker in the header (#language-form): choosing a language submits the form
// (Django's set_language, which remembers it in a cookie). Without scripts the "Change" button does.

function boot() {
  const form = document.getElementById('language-form');
  const select = document.getElementById('language-select');
  const button = document.getElementById('language-submit');
  if (!form || !select) return;
  if (button) button.hidden = true;
  select.addEventListener('change', () => form.submit());
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
