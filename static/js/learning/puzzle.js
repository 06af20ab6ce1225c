// The puzzle page (templates/learning/puzzle.html): the opponent's last move is shown, the
// learner plays the solver's moves; each goes to the server, which answers with the reply, the end
// (solved: the rating change), or the refutation and the solution (failed). Nothing of the
// solution is on the page before it is played.

import { gettext, interpolate } from '../i18n.js';
import { Trainer, postJson } from './trainer.js';

function byId(id) {
  return document.getElementById(id);
}

class PuzzlePage {
  constructor(config) {
    this.config = config;
    this.puzzle = config.puzzle;
    this.step = 0; // the solver step of the next move (an even index of the line)
    this.over = false;
    this.trainer = new Trainer(byId('board'), (move) => this.play(move));
    this.trainer.show({ fen: this.puzzle.fen, legal: this.puzzle.legal, lastMove: this.puzzle.last_move,
      orientation: this.puzzle.turn });
    this.say(this.puzzle.turn === 'B' ? gettext('Black to play: find the best move.') : gettext('White to play: find the best move.'));
  }

  say(text, tone = '') {
    const node = byId('puzzle-feedback');
    node.textContent = text;
    node.dataset.tone = tone;
  }

  async play(move) {
    this.trainer.lock(true);
    const body = { move, streak: !!this.config.streak };
    if (this.over) body.step = this.step;
    let answer;
    try {
      answer = await postJson(this.config.moveUrl, body);
    } catch (err) {
      this.say(gettext('The server cannot be reached; try again in a moment.'), 'bad');
      this.trainer.lock(false);
      return;
    }
    if (!answer.ok) {
      this.say(answer.data.message || gettext('That move was refused.'), 'bad');
      this.trainer.lock(false);
      return;
    }
    this.onAnswer(answer.data);
  }

  /** The line under the feedback: the opponent's last move on the board. */
  sayLastMove(move) {
    byId('puzzle-last-move').textContent = interpolate(gettext('The opponent just played %(move)s.'), { move }, true);
  }

  onAnswer(data) {
    const lastMove = data.reply || data.refutation || data.move;
    this.trainer.show({ fen: data.fen, legal: [], lastMove });
    if (data.reply || data.refutation) this.sayLastMove(data.reply || data.refutation);
    if (data.result === 'continue') {
      this.step += 2;
      this.say(interpolate(gettext('Right! The opponent answers %(reply)s. Go on.'), { reply: data.reply }, true), 'good');
      this.trainer.show({ fen: data.fen, legal: data.legal, lastMove });
      this.trainer.lock(false);
      return;
    }
    if (data.practice) {
      this.say(data.result === 'won' ? gettext('Solved again.') : gettext('Not that one: see the solution below.'),
        data.result === 'won' ? 'good' : 'bad');
    } else if (data.result === 'won') {
      this.say(gettext('Solved!'), 'good');
    } else {
      this.say(data.refutation
        ? interpolate(gettext('Not that one: %(move)s is answered by %(reply)s.'), { move: data.move, reply: data.refutation }, true)
        : interpolate(gettext('Not that one: %(move)s does not win.'), { move: data.move }, true), 'bad');
    }
    this.over = true;
    this.showEnd(data);
  }

  showEnd(data) {
    if (typeof data.plays === 'number') byId('puzzle-plays').textContent = String(data.plays);
    if (data.solution) {
      byId('puzzle-solution-moves').textContent = data.solution.join(' ');
      byId('puzzle-solution').hidden = false;
    }
    if (data.rating) {
      const diff = data.rating.diff >= 0 ? `+${data.rating.diff}` : String(data.rating.diff);
      byId('puzzle-rating').textContent = interpolate(gettext('Your puzzle rating: %(rating)s (%(diff)s)'),
        { rating: data.rating.after, diff }, true);
      byId('puzzle-rating').hidden = false;
    }
    if (data.streak !== undefined) {
      byId('streak-count').textContent = String(data.streak.streak);
      byId('streak-best').textContent = String(data.streak.best);
    }
    byId('puzzle-next').hidden = false;
    byId('puzzle-retry').hidden = false;
  }

  retry() {
    this.step = 0;
    this.trainer.show({ fen: this.puzzle.fen, legal: this.puzzle.legal, lastMove: this.puzzle.last_move });
    this.sayLastMove(this.puzzle.last_move);
    this.trainer.lock(false);
    this.say(gettext('Try again (this does not change ratings).'));
  }
}

function boot() {
  const node = byId('puzzle-config');
  if (!node) return;
  const page = new PuzzlePage(JSON.parse(node.textContent));
  byId('puzzle-retry').addEventListener('click', () => page.retry());
  window.checkersPuzzle = page;
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
