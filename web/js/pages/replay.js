// The replay viewer: steps through a finished match's public views (GET /api/matches/{id}/replay).
import { errorText, get } from '../api.js';
import { append, h } from '../dom.js';
import { formatDate, t } from '../i18n.js';
import { rulesChips } from '../rules.js';
import { moveText, seatName, seatNames } from '../table/describe.js';
import { discardPile, pairsZone, seatBox, stockPile } from '../table/render.js';

export function mount(root, { id }) {
  let match = null;
  let views = null;
  let step = 0;
  let error = '';
  let playing = null;

  Promise.all([get(`/api/matches/${encodeURIComponent(id)}`), get(`/api/matches/${encodeURIComponent(id)}/replay`)])
    .then(([detail, list]) => {
      match = detail;
      views = list;
      render();
    })
    .catch((failure) => {
      error = errorText(failure);
      render();
    });

  function go(to) {
    step = Math.max(0, Math.min(views.length - 1, to));
    render();
  }

  function togglePlay() {
    if (playing) {
      clearInterval(playing);
      playing = null;
    } else {
      if (step >= views.length - 1) step = 0;
      playing = setInterval(() => {
        if (step >= views.length - 1) {
          clearInterval(playing);
          playing = null;
        } else step += 1;
        render();
      }, 700);
    }
    render();
  }

  function names() {
    return seatNames(match.seats);
  }

  function lastMove(view, previous) {
    // The action that led to this step: the newest move of the bout, or the bout's end.
    if (!previous) return t('replay.deal');
    const seatNames = names();
    if (view.moves.length > previous.moves.length) {
      const attacks = [];
      for (const move of view.moves.slice(0, -1)) if (move.type !== 'cover') attacks.push(...(move.cards || []));
      return moveText(view.moves[view.moves.length - 1], seatNames, attacks);
    }
    if (view.phase === 'over' && view.outcome) {
      return view.outcome.draw ? t('log.match_draw') : t('log.match_end', { name: seatName(seatNames, view.outcome.durak) });
    }
    if (view.taking && !previous.taking) return t('log.take', { name: seatName(seatNames, view.defender) });
    const passed = view.players.find((player, i) => player.passed && !previous.players[i].passed);
    if (passed) return t('log.pass', { name: seatName(seatNames, passed.seat) });
    return t('replay.bout_over');
  }

  function render() {
    const page = h('div', { class: 'page replay-page', id: 'replay' });
    if (error) append(page, [h('h1', { text: t('replay.title') }), h('p', { class: 'form-error', role: 'alert', text: error })]);
    else if (!views) append(page, [h('h1', { text: t('replay.title') }), h('p', { class: 'muted', text: t('common.loading') })]);
    else {
      const view = views[step];
      const revealed = view.revealed_hands ? view.revealed_hands.final : null;
      const dealt = view.revealed_hands ? view.revealed_hands.dealt : null;
      const seats = match.seats.map((seat) => ({ seat: seat.seat, name: seat.display_name, kind: seat.bot_level ? 'bot' : 'human', level: seat.bot_level, guest: seat.guest, connected: true }));
      const controls = h(
        'div',
        { class: 'replay-controls', role: 'group', 'aria-label': t('replay.controls') },
        h('button', { type: 'button', class: 'btn small', dataset: { step: 'first' }, onclick: () => go(0), 'aria-label': t('replay.first'), text: '\u25C0\u25C0' }),
        h('button', { type: 'button', class: 'btn small', dataset: { step: 'prev' }, onclick: () => go(step - 1), 'aria-label': t('replay.previous'), text: '\u25C0' }),
        h('button', { type: 'button', class: 'btn small primary', dataset: { step: 'play' }, onclick: togglePlay, 'aria-label': playing ? t('replay.pause') : t('replay.play'), text: playing ? '\u275A\u275A' : '\u25B6' }),
        h('button', { type: 'button', class: 'btn small', dataset: { step: 'next' }, onclick: () => go(step + 1), 'aria-label': t('replay.next'), text: '\u25B6' }),
        h('button', { type: 'button', class: 'btn small', dataset: { step: 'last' }, onclick: () => go(views.length - 1), 'aria-label': t('replay.last'), text: '\u25B6\u25B6' }),
        h('input', { type: 'range', min: '0', max: String(views.length - 1), value: String(step), 'aria-label': t('replay.position'), oninput: (event) => go(Number(event.target.value)) }),
        h('span', { class: 'step-count', id: 'replay-step', text: t('replay.step', { step: step + 1, steps: views.length }) }),
      );
      append(page, [
        h('div', { class: 'table-top' }, h('h1', { text: t('replay.title') }), h('p', { class: 'muted', text: formatDate(match.finished_at) }), rulesChips(match.rules)),
        controls,
        h('p', { class: 'prompt replay-move', 'aria-live': 'polite', text: lastMove(view, views[step - 1]) }),
        h(
          'section',
          { class: 'felt replay-felt', 'aria-label': t('table.felt') },
          h('div', { class: 'opponents' }, seats.map((seat, i) => seatBox(seat, view.players[i], { revealed: revealed ? revealed[i] : null, showConnection: false }))),
          h('div', { class: 'center' }, h('div', { class: 'piles' }, stockPile(view), discardPile(view)), pairsZone(view)),
        ),
        dealt
          ? h(
              'section',
              { class: 'panel' },
              h('h2', { text: t('replay.dealt_hands') }),
              h('ul', { class: 'dealt' }, dealt.map((hand, i) => h('li', {}, h('b', { text: `${seatName(names(), i)}: ` }), hand.join(' ')))),
            )
          : null,
      ]);
    }
    const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement.dataset.step : null;
    root.replaceChildren(page);
    if (focused) {
      const again = root.querySelector(`[data-step="${focused}"]`);
      if (again) again.focus();
    }
  }

  const keys = (event) => {
    if (!views || event.target.tagName === 'INPUT') return;
    if (event.key === 'ArrowRight') go(step + 1);
    if (event.key === 'ArrowLeft') go(step - 1);
  };
  document.addEventListener('keydown', keys);
  render();
  return {
    relabel: render,
    unmount() {
      document.removeEventListener('keydown', keys);
      clearInterval(playing);
    },
  };
}
