// The game page's settings panel (#settings in game.html): flip the board, coordinates, square
// numbers, sound volume and mute, premoves, confirming moves. Each is remembered in this browser
// (storage.js): the flip for this game in this tab only (a new game opens from the player's side),
// the others for every game. Confirming moves is remembered apart for correspondence games and
// for the others, and is on by default in correspondence games on touch screens.
// Also the bar that asks to confirm a move (#confirm-move), when that setting is on.

import { isCorrespondence } from './clock.js';
import { loadChoice, loadNumber, saveFlag, saveNumber, loadTabFlag, saveTabFlag } from './storage.js';
import { gettext, interpolate } from './i18n.js';

export const KEYS = {
  coords: 'checkers.showCoords',
  volume: 'checkers.soundVolume',
  muted: 'checkers.soundMuted',
  premoves: 'checkers.premoves',
  confirmCorrespondence: 'checkers.confirmMoves.correspondence',
  confirmOther: 'checkers.confirmMoves.other',
  open: 'checkers.settingsOpen',
};

const DEFAULT_VOLUME = 70;

/** True on a touch screen without a fine pointer (a phone or tablet). */
export function touchScreen() {
  try {
    return window.matchMedia('(hover: none) and (pointer: coarse)').matches;
  } catch (err) {
    return false;
  }
}

export class Settings {
  /**
   * @param {object} els  the panel's controls: {panel, flip, coords, numbers, volume, mute, test,
   *   premoves, confirm, confirmBar, confirmText, confirmYes, confirmNo} (any may be missing)
   * @param {Ctrl} ctrl  the game page's controller
   * @param {SoundPlayer} sound
   */
  constructor(els, ctrl, sound) {
    this.els = els;
    this.ctrl = ctrl;
    this.sound = sound;
    this.flipKey = `checkers.flip.${ctrl.config && ctrl.config.gameId ? ctrl.config.gameId : ''}`;
    ctrl.flipped = loadTabFlag(this.flipKey);
    ctrl.showCoords = loadChoice(KEYS.coords, true);
    ctrl.premoves.enabled = loadChoice(KEYS.premoves, true);
    sound.setVolume(loadNumber(KEYS.volume, DEFAULT_VOLUME, 0, 100) / 100);
    sound.setMuted(loadChoice(KEYS.muted, false));
    if (els.panel) els.panel.open = loadChoice(KEYS.open, false);
    this.wire();
  }

  /** Which confirm setting applies to this game: correspondence or the others. */
  get confirmKey() {
    const s = this.ctrl.state;
    return s && isCorrespondence(s.clock) ? KEYS.confirmCorrespondence : KEYS.confirmOther;
  }

  get confirmDefault() {
    return this.confirmKey === KEYS.confirmCorrespondence && touchScreen();
  }

  wire() {
    const { els, ctrl, sound } = this;
    const on = (node, event, fn) => node && node.addEventListener(event, fn);
    on(els.panel, 'toggle', () => saveFlag(KEYS.open, els.panel.open));
    on(els.flip, 'click', () => {
      ctrl.flipped = !ctrl.flipped;
      saveTabFlag(this.flipKey, ctrl.flipped);
      ctrl.cancel();
      ctrl.redraw();
    });
    on(els.coords, 'change', () => {
      ctrl.showCoords = els.coords.checked;
      saveFlag(KEYS.coords, ctrl.showCoords);
      ctrl.redraw();
    });
    on(els.numbers, 'change', () => ctrl.toggleNumbers(els.numbers.checked));
    on(els.volume, 'input', () => {
      const value = Number(els.volume.value);
      sound.setVolume(value / 100);
      saveNumber(KEYS.volume, value);
      if (value > 0 && sound.muted) {
        sound.setMuted(false); // moving the slider up means "I want to hear it"
        saveFlag(KEYS.muted, false);
      }
      this.render();
    });
    on(els.volume, 'change', () => sound.play('move'));
    on(els.mute, 'change', () => {
      sound.setMuted(els.mute.checked);
      saveFlag(KEYS.muted, sound.muted);
      this.render();
    });
    on(els.test, 'click', () => {
      sound.unlock();
      sound.play('capture');
    });
    on(els.premoves, 'change', () => {
      ctrl.premoves.enabled = els.premoves.checked;
      saveFlag(KEYS.premoves, ctrl.premoves.enabled);
      if (!ctrl.premoves.enabled) ctrl.premoves.clear();
      ctrl.redraw();
    });
    on(els.confirm, 'change', () => {
      saveFlag(this.confirmKey, els.confirm.checked);
      ctrl.redraw();
    });
    on(els.confirmYes, 'click', () => ctrl.picker.confirm());
    on(els.confirmNo, 'click', () => ctrl.cancel());
  }

  /** Bring the controls and the confirm bar up to date (called on every redraw). */
  render() {
    const { els, ctrl, sound } = this;
    ctrl.picker.confirmMoves = loadChoice(this.confirmKey, this.confirmDefault);
    const set = (node, prop, value) => {
      if (node && node[prop] !== value) node[prop] = value;
    };
    set(els.coords, 'checked', !!ctrl.showCoords);
    set(els.numbers, 'checked', !!ctrl.showNumbers);
    set(els.volume, 'value', String(Math.round(sound.volume * 100)));
    set(els.mute, 'checked', sound.muted);
    set(els.premoves, 'checked', ctrl.premoves.enabled);
    set(els.confirm, 'checked', ctrl.picker.confirmMoves);
    if (els.volume) {
      const text = sound.muted
        ? gettext('muted')
        : interpolate(gettext('%(volume)s of 100'), { volume: Math.round(sound.volume * 100) }, true);
      els.volume.setAttribute('aria-valuetext', text);
      const shown = sound.muted ? text : String(Math.round(sound.volume * 100));
      if (els.volumeValue && els.volumeValue.textContent !== shown) els.volumeValue.textContent = shown;
    }
    if (els.flip) els.flip.setAttribute('aria-pressed', ctrl.flipped ? 'true' : 'false');
    if (els.confirmBar) {
      const move = ctrl.confirming;
      els.confirmBar.hidden = !move;
      if (move && els.confirmText) {
        const text = interpolate(gettext('Play %(move)s?'), { move }, true);
        if (els.confirmText.textContent !== text) els.confirmText.textContent = text;
      }
    }
  }
}
