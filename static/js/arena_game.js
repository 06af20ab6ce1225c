// An arena game's page: when the player is paired again (their game over), the page goes to the new
// game by itself, with a sound, as the tournament's own page does.  The Berserk button goes as soon
// as berserk stops being possible: the game over (or aborted), or the player's own first move made
// (the ply the page was given, data-until-ply), as the page's table marks them on the body.

import { follow } from './arena_socket.js';
import { SoundPlayer } from './sound.js';

const panel = document.getElementById('arena-panel');
if (panel && panel.dataset.wsPath) {
  const sounds = new SoundPlayer();
  follow(panel.dataset.wsPath, {
    paired(msg) {
      if (msg.game === panel.dataset.game) return;
      sounds.play('gameStart');
      setTimeout(() => window.location.assign(msg.url), 300);
    },
  });
}

const berserkForm = document.getElementById('game-berserk-form');
if (berserkForm) {
  const untilPly = Number(berserkForm.dataset.untilPly);
  const check = () => {
    const body = document.body.dataset;
    const over = body.status === 'finished' || body.status === 'aborted';
    const moved = body.ply !== undefined && body.ply !== '' && Number(body.ply) >= untilPly;
    if (!over && !moved) return;
    const hadFocus = berserkForm.contains(document.activeElement);
    berserkForm.remove();
    observer.disconnect();
    if (hadFocus) document.getElementById('arena-link')?.focus();
  };
  const observer = new MutationObserver(check);
  observer.observe(document.body, { attributes: true, attributeFilter: ['data-ply', 'data-status'] });
  check();
}
