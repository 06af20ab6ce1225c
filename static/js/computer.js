// Home page, "Play the computer": the game is played under the name typed in the
// "Play a friend" form above (when there is one), like "Play online".

function start() {
  const form = document.getElementById('computer-form');
  const hidden = document.getElementById('computer-name');
  if (!form || !hidden) return;
  form.addEventListener('submit', () => {
    const typed = document.getElementById('id_name');
    if (typed) hidden.value = typed.value.trim(); // empty: the guest name, as on every form
  });
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
