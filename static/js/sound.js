// The game's sounds, made here with WebAudio (oscillators, filtered noise and envelopes: no sound
// files): a move, a capture, your turn, the game's start and end, a draw offer, low time, and on
// every page a challenge received (people.js). The
// volume (0-100) and mute are settings (settings.js). Browsers let a page make sound only after
// the viewer has touched it (a click, a key): the first such gesture opens the audio.
//
// SoundCues turns what the controller shows into cues: a move event (a capture sounds apart), the
// game starting or ending, the opponent's draw offer, the turn coming back to a player whose tab is
// in the background, and the player's own clock falling below the low-time mark (clock.js lowTimeMs).

import { lowTimeMs } from './clock.js';

/** Every cue's name. */
export const SOUNDS = ['move', 'capture', 'yourTurn', 'gameStart', 'gameEnd', 'drawOffer', 'lowTime', 'challenge'];

const LOW_TIME_CHECK_MS = 250;

/** A short noise buffer (shared per context). */
function noise(ctx) {
  if (ctx.__checkersNoise) return ctx.__checkersNoise;
  const length = Math.floor(ctx.sampleRate * 0.08);
  const buffer = ctx.createBuffer(1, length, ctx.sampleRate);
  const data = buffer.getChannelData(0);
  let seed = 7; // a fixed pseudo-random series: every knock sounds alike
  for (let i = 0; i < length; i++) {
    seed = (seed * 16807) % 2147483647;
    data[i] = (seed / 2147483647) * 2 - 1;
  }
  ctx.__checkersNoise = buffer;
  return buffer;
}

/** A wooden knock at `t` (s): filtered noise around `pitch` Hz over a falling thump. */
function knock(ctx, out, t, pitch, level) {
  const src = ctx.createBufferSource();
  src.buffer = noise(ctx);
  const band = ctx.createBiquadFilter();
  band.type = 'bandpass';
  band.frequency.value = pitch;
  band.Q.value = 3;
  const g = ctx.createGain();
  g.gain.setValueAtTime(0.0001, t);
  g.gain.exponentialRampToValueAtTime(level, t + 0.003);
  g.gain.exponentialRampToValueAtTime(0.0001, t + 0.07);
  src.connect(band).connect(g).connect(out);
  src.start(t);
  src.stop(t + 0.08);

  const thump = ctx.createOscillator();
  thump.type = 'sine';
  thump.frequency.setValueAtTime(pitch / 7, t);
  thump.frequency.exponentialRampToValueAtTime(pitch / 14, t + 0.06);
  const tg = ctx.createGain();
  tg.gain.setValueAtTime(0.0001, t);
  tg.gain.exponentialRampToValueAtTime(level * 0.8, t + 0.004);
  tg.gain.exponentialRampToValueAtTime(0.0001, t + 0.08);
  thump.connect(tg).connect(out);
  thump.start(t);
  thump.stop(t + 0.09);
}

/** A soft bell-like note: `freq` Hz from `t` for `length` s. */
function note(ctx, out, t, freq, length, level, type = 'sine') {
  const osc = ctx.createOscillator();
  osc.type = type;
  osc.frequency.value = freq;
  const g = ctx.createGain();
  g.gain.setValueAtTime(0.0001, t);
  g.gain.exponentialRampToValueAtTime(level, t + 0.01);
  g.gain.exponentialRampToValueAtTime(0.0001, t + length);
  osc.connect(g).connect(out);
  osc.start(t);
  osc.stop(t + length + 0.02);
}

/**
 * Schedule the cue `name` on `ctx` into `out` from time `t` (s, the context's clock).
 * @returns {number} the cue's length in seconds
 * @throws {Error} for a name not in SOUNDS
 */
export function synthesize(ctx, name, out, t) {
  switch (name) {
    case 'move':
      knock(ctx, out, t, 1500, 0.9);
      return 0.1;
    case 'capture':
      knock(ctx, out, t, 1100, 1);
      knock(ctx, out, t + 0.075, 2000, 0.75);
      return 0.17;
    case 'yourTurn':
      note(ctx, out, t, 659.25, 0.18, 0.35);
      note(ctx, out, t + 0.12, 987.77, 0.3, 0.3);
      return 0.45;
    case 'gameStart':
      note(ctx, out, t, 523.25, 0.2, 0.35);
      note(ctx, out, t + 0.11, 659.25, 0.2, 0.35);
      note(ctx, out, t + 0.22, 783.99, 0.4, 0.35);
      return 0.65;
    case 'gameEnd':
      note(ctx, out, t, 783.99, 0.3, 0.35);
      note(ctx, out, t + 0.18, 587.33, 0.3, 0.35);
      note(ctx, out, t + 0.36, 392.0, 0.6, 0.4);
      return 1.0;
    case 'drawOffer':
      note(ctx, out, t, 587.33, 0.16, 0.3, 'triangle');
      note(ctx, out, t + 0.2, 587.33, 0.25, 0.3, 'triangle');
      return 0.5;
    case 'challenge':
      note(ctx, out, t, 880.0, 0.12, 0.3, 'triangle');
      note(ctx, out, t + 0.1, 1174.66, 0.12, 0.3, 'triangle');
      note(ctx, out, t + 0.2, 1318.51, 0.3, 0.3, 'triangle');
      return 0.55;
    case 'lowTime':
      for (let i = 0; i < 3; i++) note(ctx, out, t + i * 0.13, 1046.5, 0.08, 0.28, 'square');
      return 0.4;
    default:
      throw new Error(`unknown sound ${name}`);
  }
}

/**
 * The loudest sample of cue `name` rendered offline at `volume` (0-1): what the settings' test
 * button and the browser tests check (0 means silence).
 * @returns {Promise<number>}
 */
export async function renderPeak(name, volume) {
  const rate = 22050;
  const ctx = new OfflineAudioContext(1, Math.ceil(rate * 1.2), rate);
  const master = ctx.createGain();
  master.gain.value = volume;
  master.connect(ctx.destination);
  synthesize(ctx, name, master, 0);
  const buffer = await ctx.startRendering();
  let peak = 0;
  for (const x of buffer.getChannelData(0)) peak = Math.max(peak, Math.abs(x));
  return peak;
}

export class SoundPlayer {
  constructor() {
    this.volume = 0.7; // 0-1
    this.muted = false;
    this.ctx = null;
    this.master = null;
    this.played = []; // [{name, audible, at}]: the cues asked for, the last 50 (for the tests)
    const unlock = () => this.unlock();
    document.addEventListener('pointerdown', unlock, { capture: true });
    document.addEventListener('keydown', unlock, { capture: true });
  }

  /** Open (or resume) the audio: called on the viewer's gestures, as browsers require. */
  unlock() {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    if (!this.ctx) {
      try {
        this.ctx = new Context();
      } catch (err) {
        return;
      }
      this.master = this.ctx.createGain();
      this.master.connect(this.ctx.destination);
      this.setVolume(this.volume);
    }
    if (this.ctx.state === 'suspended') this.ctx.resume().catch(() => {});
  }

  /** Volume 0-1 (0 or muted: silence). */
  setVolume(volume) {
    this.volume = Math.min(1, Math.max(0, Number(volume) || 0));
    if (this.master) this.master.gain.value = this.muted ? 0 : this.volume;
  }

  setMuted(muted) {
    this.muted = !!muted;
    this.setVolume(this.volume);
  }

  /** True when a cue would be heard (not muted, volume above 0, the audio open). */
  get audible() {
    return !this.muted && this.volume > 0 && !!this.ctx && this.ctx.state === 'running';
  }

  /**
   * The loudest sample of cue `name` as this player would make it (renderPeak), at `volume` (0-1)
   * and `muted` (default: the settings'); 0 when muted.
   * @returns {Promise<number>}
   */
  peak(name, volume = this.volume, muted = this.muted) {
    return muted ? Promise.resolve(0) : renderPeak(name, volume);
  }

  /** Play cue `name` (one of SOUNDS) now, if sound is on. */
  play(name) {
    const audible = this.audible;
    this.played.push({ name, audible, at: performance.now() });
    if (this.played.length > 50) this.played.shift();
    document.body.dataset.lastSound = name;
    if (!audible) return;
    try {
      synthesize(this.ctx, name, this.master, this.ctx.currentTime + 0.005);
    } catch (err) {
      console.error('checkers: sound', name, err);
    }
  }
}

/** Which cues a change of the game page calls for. */
export class SoundCues {
  /**
   * @param {Ctrl} ctrl  the game page's controller
   * @param {SoundPlayer} player
   */
  constructor(ctrl, player) {
    this.ctrl = ctrl;
    this.player = player;
    this.seen = null; // {id, ply, status, drawOffer, turn} of the last state looked at
    this.lowAbove = true; // the player's clock was above the mark at the last look
    this.timer = setInterval(() => this.checkLowTime(), LOW_TIME_CHECK_MS);
  }

  /** The page shows another game now: no more looks at this one's clock. */
  stop() {
    clearInterval(this.timer);
  }

  /** Look at the controller's state after a redraw and play what changed. */
  update() {
    const c = this.ctrl;
    const s = c.state;
    if (!s) return;
    const now = { id: s.id, ply: s.ply, status: s.status, drawOffer: s.draw_offer || null, turn: s.turn };
    const before = this.seen;
    this.seen = now;
    if (!before || before.id !== now.id) {
      // A page opened on a game just begun: its players hear it start.
      if (c.you && s.status === 'active' && s.ply === 0) this.player.play('gameStart');
      return;
    }
    if (now.ply === before.ply + 1 && c.moves.length) {
      const last = c.moves[c.moves.length - 1];
      this.player.play(String(last).includes('x') ? 'capture' : 'move');
      if (c.isMyTurn && document.visibilityState === 'hidden') this.player.play('yourTurn');
    }
    if (before.status === 'waiting' && now.status === 'active') {
      this.player.play('gameStart');
      if (c.isMyTurn) this.player.play('yourTurn');
    }
    const over = (st) => st === 'finished' || st === 'aborted';
    if (!over(before.status) && over(now.status)) this.player.play('gameEnd');
    if (now.drawOffer && now.drawOffer !== before.drawOffer && now.drawOffer !== c.you) this.player.play('drawOffer');
  }

  /** The player's own running clock fell below the low-time mark: one warning, until it is above again. */
  checkLowTime() {
    const c = this.ctrl;
    const s = c.state;
    if (!s || !c.you || s.status !== 'active') return;
    const mark = lowTimeMs(s.clock);
    const now = c.clockNow();
    if (mark === null || !now || now.correspondence) return;
    const left = now[c.you];
    if (left >= mark) {
      this.lowAbove = true;
      return;
    }
    if (now.running === c.you && this.lowAbove) {
      this.lowAbove = false;
      this.player.play('lowTime');
    }
  }
}
