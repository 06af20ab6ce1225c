// A lesson's page (templates/learning/lesson.html). A rules lesson: each board asks for a move,
// the server checks it and gives the next board. An ending: the learner plays against the engine,
// the server checks every move with the endgame database and answers with the longest defence.

import { gettext, interpolate } from '../i18n.js';
import { Trainer, postJson } from './trainer.js';
import { markFinished } from './progress.js';

function byId(id) {
  return document.getElementById(id);
}

class LessonPage {
  constructor(config) {
    this.config = config;
    this.trainer = new Trainer(byId('board'), (move) => this.play(move));
    byId('lesson-restart').addEventListener('click', () => this.restart());
    this.restart();
  }

  restart() {
    const config = this.config;
    this.moves = [];
    this.say('');
    byId('lesson-restart').hidden = !config.ending;
    if (config.ending) {
      this.side = config.start.turn;
      this.trainer.show({ fen: config.start.fen, legal: config.start.legal, orientation: this.side });
      this.trainer.lock(false);
      byId('lesson-prompt').textContent = this.side === 'B' ? gettext('You play Black: win.') : gettext('You play White: win.');
    } else {
      this.showStep(config.step);
    }
  }

  showStep(step) {
    this.step = step;
    this.say(''); // the last board's "Right!" is not about this one
    byId('lesson-progress').textContent = interpolate(gettext('Board %(n)s of %(count)s'), { n: step.index + 1, count: step.count }, true);
    byId('lesson-prompt').textContent = step.prompt;
    this.trainer.show({ fen: step.fen, legal: step.legal, lastMove: step.last_move, orientation: 'W' });
    this.trainer.lock(false);
  }

  say(text, tone = '') {
    const node = byId('lesson-feedback');
    node.textContent = text;
    node.dataset.tone = tone;
  }

  async play(move) {
    this.trainer.lock(true);
    const body = this.config.ending ? { moves: this.moves, move } : { step: this.step.index, move };
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
    if (this.config.ending) this.onEnding(answer.data);
    else this.onStep(answer.data);
  }

  onStep(data) {
    this.say(data.message, data.right ? 'good' : 'bad');
    if (!data.right) {
      this.trainer.show({ fen: this.step.fen, legal: this.step.legal, lastMove: this.step.last_move });
      this.trainer.lock(false);
      return;
    }
    this.trainer.show({ fen: data.fen, legal: [], lastMove: data.move });
    if (data.next) {
      window.setTimeout(() => this.showStep(data.next), 900);
    } else if (data.done) {
      this.finished();
    }
  }

  onEnding(data) {
    this.moves = data.moves;
    this.trainer.show({ fen: data.fen, legal: data.legal, lastMove: data.reply || data.move });
    const left = data.plies_to_win ? ` ${interpolate(gettext('(a win in %(plies)s plies with best play)'), { plies: data.plies_to_win }, true)}` : '';
    this.say(data.message + (data.result === 'continue' ? left : ''), data.result === 'lost' ? 'bad' : 'good');
    if (data.result === 'won') this.finished();
    else if (data.result === 'lost') this.trainer.lock(true);
    else this.trainer.lock(false);
  }

  finished() {
    markFinished(this.config.key);
    byId('lesson-done-note').hidden = false;
    byId('lesson-back').hidden = false;
    byId('lesson-restart').hidden = false;
  }
}

function boot() {
  const node = byId('lesson-config');
  if (!node) return;
  window.checkersLesson = new LessonPage(JSON.parse(node.textContent));
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
else boot();
