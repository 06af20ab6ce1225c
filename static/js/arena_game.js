// An arena game's page: when the player is paired again (their game over), the page goes to the new
// game by itself, with a sound, as the tournament's own page does.

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
