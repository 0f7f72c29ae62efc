// The replay viewer: steps through a finished match's views (GET /api/matches/{id}/replay) with every
// hand face up, or what one seat saw; verifies the deal in the browser (docs/fairness.md); and shows
// the coach's analysis of a seat (GET /api/matches/{id}/analysis).
import { ApiError, errorText, get } from '../api.js';
import { coachChart } from '../coachchart.js';
import { append, h } from '../dom.js';
import { verifyDeal } from '../fairness.js';
import { formatDate, t } from '../i18n.js';
import { rulesChips } from '../rules.js';
import { icon } from '../icons.js';
import { currentUser } from '../session.js';
import { moveText, seatName, seatNames } from '../table/describe.js';
import { discardPile, pairsZone, seatBox, stockPile } from '../table/render.js';

export function mount(root, { id, verify = false }) {
  let match = null;
  let views = null;
  let step = 0;
  let error = '';
  let playing = null;
  let perspective = 'all'; // 'all': every hand face up; a seat number: what that seat saw
  let verified = null; // null, 'working', or verifyDeal's result
  const coach = { seat: null, status: 'idle', done: 0, total: 0, report: null, error: '', timer: null };

  Promise.all([get(`/api/matches/${encodeURIComponent(id)}`), get(`/api/matches/${encodeURIComponent(id)}/replay`)])
    .then(([detail, list]) => {
      match = detail;
      views = list;
      render();
      if (verify) {
        // Came by the results' "fair deal" link: the check runs at once and its panel is in view.
        const panel = root.querySelector('#verify');
        if (panel) panel.scrollIntoView({ block: 'start' });
        if (match.fairness) runVerify().then(() => {
          const again = root.querySelector('#verify');
          if (again) again.scrollIntoView({ block: 'start' });
        });
      }
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

  function actionLabel(action) {
    const seatNames = names();
    if (action.type === 'take') return t('log.take', { name: seatName(seatNames, action.seat) });
    if (action.type === 'pass') return t('log.pass', { name: seatName(seatNames, action.seat) });
    return moveText(action, seatNames);
  }

  function mySeat() {
    const me = currentUser();
    const mine = me && me.id !== null && me.id !== undefined ? match.seats.find((seat) => seat.account_id === me.id) : null;
    return mine ? mine.seat : 0;
  }

  /** The hand shown face up for seat i at this step: every hand, or only the chosen seat's own. */
  function shownHand(view, i) {
    const hands = view.hands || (view.revealed_hands ? view.revealed_hands.final : null);
    if (!hands) return null;
    if (perspective === 'all' || perspective === i) return hands[i];
    return null;
  }

  function perspectivePicker() {
    return h(
      'label',
      { class: 'field inline replay-perspective' },
      h('span', { class: 'field-label', text: t('replay.perspective') }),
      h(
        'select',
        {
          id: 'replay-perspective',
          onchange: (event) => {
            perspective = event.target.value === 'all' ? 'all' : Number(event.target.value);
            render();
          },
        },
        h('option', { value: 'all', selected: perspective === 'all', text: t('replay.all_hands') }),
        match.seats.map((seat) => h('option', { value: String(seat.seat), selected: perspective === seat.seat, text: t('replay.seat_saw', { name: seatName(names(), seat.seat) }) })),
      ),
    );
  }

  async function runVerify() {
    verified = 'working';
    render();
    verified = await verifyDeal(match.fairness, views);
    render();
  }

  function verifyPanel() {
    const fair = match.fairness;
    const children = [h('h2', { text: t('replay.verify_title') })];
    if (!fair) {
      children.push(h('p', { class: 'muted', id: 'verify-none', text: t('replay.verify_none') }));
      return h('section', { class: 'panel verify', id: 'verify' }, children);
    }
    const seatNames = names();
    children.push(
      h(
        'dl',
        { class: 'fair-facts' },
        h('dt', { text: t('replay.commitment') }),
        h('dd', {}, h('code', { id: 'fair-commitment', text: fair.commitment })),
        h('dt', { text: t('replay.server_seed') }),
        h('dd', {}, h('code', { id: 'fair-server-seed', text: fair.server_seed })),
        fair.client_seeds.map((seed, i) => [h('dt', { text: t('replay.client_seed_of', { name: seatName(seatNames, i) }) }), h('dd', {}, h('code', { text: seed || t('replay.empty_seed') }))]),
      ),
      h('button', { type: 'button', class: 'btn secondary', id: 'verify-button', disabled: verified === 'working', onclick: runVerify, text: t('replay.verify_button') }),
    );
    if (verified === 'working') children.push(h('p', { class: 'muted', role: 'status', text: t('replay.verify_working') }));
    else if (verified) {
      let text = t('replay.verify_ok');
      if (verified.error) text = t('replay.verify_error', { error: verified.error });
      else if (!verified.commitmentOk) text = t('replay.verify_commitment_bad');
      else if (!verified.deckOk) text = t('replay.verify_deck_bad');
      else if (!verified.replayOk) text = t('replay.verify_replay_bad', { problem: verified.replayProblem });
      children.push(h('p', { class: ['verify-result', verified.ok ? 'ok' : 'bad'], id: 'verify-result', role: 'status', dataset: { ok: String(verified.ok) }, text }));
      if (verified.deck) children.push(h('p', { class: 'hint' }, h('b', { text: `${t('replay.recomputed_deck')}: ` }), h('span', { id: 'verify-deck', text: verified.deck.join(' ') })));
    }
    return h('section', { class: 'panel verify', id: 'verify' }, children);
  }

  async function askCoach() {
    clearTimeout(coach.timer);
    const seat = coach.seat;
    try {
      const answer = await get(`/api/matches/${encodeURIComponent(id)}/analysis?seat=${seat}`);
      if (seat !== coach.seat) return; // another seat was chosen meanwhile
      coach.done = answer.done;
      coach.total = answer.total;
      if (answer.status === 'done') {
        coach.status = 'done';
        coach.report = answer.analysis;
      } else {
        coach.status = 'computing';
        coach.timer = setTimeout(askCoach, 1000);
      }
    } catch (failure) {
      coach.status = 'failed';
      coach.error = failure instanceof ApiError ? errorText(failure) : String(failure);
    }
    render();
  }

  function startCoach() {
    coach.status = 'computing';
    coach.done = 0;
    coach.report = null;
    askCoach();
    render();
  }

  function coachPanel() {
    if (coach.seat === null) coach.seat = mySeat();
    const seatNames = names();
    const children = [
      h('h2', { text: t('coach.title') }),
      h(
        'div',
        { class: 'coach-controls' },
        h(
          'label',
          { class: 'field inline' },
          h('span', { class: 'field-label', text: t('coach.seat') }),
          h(
            'select',
            {
              id: 'coach-seat',
              onchange: (event) => {
                clearTimeout(coach.timer);
                coach.seat = Number(event.target.value);
                coach.status = 'idle';
                coach.report = null;
                render();
              },
            },
            match.seats.map((seat) => h('option', { value: String(seat.seat), selected: coach.seat === seat.seat, text: seatName(seatNames, seat.seat) })),
          ),
        ),
        h('button', { type: 'button', class: 'btn secondary', id: 'coach-button', disabled: coach.status === 'computing', onclick: startCoach, text: t('coach.analyse') }),
      ),
    ];
    if (coach.status === 'computing') {
      children.push(
        h('progress', { id: 'coach-progress', max: String(Math.max(1, coach.total)), value: String(coach.done) }),
        h('p', { class: 'muted', role: 'status', text: t('coach.computing', { done: coach.done, total: coach.total }) }),
      );
    } else if (coach.status === 'failed') {
      children.push(h('p', { class: 'form-error', role: 'alert', text: t('coach.failed', { error: coach.error }) }));
    } else if (coach.status === 'done' && coach.report) {
      const report = coach.report;
      const percent = (value) => Math.round(value * 100);
      const describe = (decision) =>
        t('coach.point', { ply: decision.ply + 1, played: actionLabel(decision.played), played_value: percent(decision.value_played), best: actionLabel(decision.best), best_value: percent(decision.value_best) });
      const blunders = report.decisions.filter((decision) => decision.blunder);
      children.push(
        h('figure', { class: 'coach-figure', id: 'coach-chart' }, coachChart(report, { label: t('coach.chart'), describe }), h('figcaption', { class: 'hint', text: t('coach.chart') })),
        h('p', { id: 'coach-summary', text: t('coach.summary', { estimated: report.estimated, blunders: report.blunders }) }),
        blunders.length
          ? h(
              'ul',
              { class: 'blunders', id: 'coach-blunders' },
              blunders.map((decision) =>
                h('li', {}, h('button', { type: 'button', class: 'btn link', onclick: () => go(decision.ply), text: t('coach.blunder_line', { ply: decision.ply + 1, played: actionLabel(decision.played), best: actionLabel(decision.best), loss: percent(decision.loss) }) })),
              ),
            )
          : null,
      );
    }
    return h('section', { class: 'panel coach', id: 'coach' }, children);
  }

  function render() {
    if (gone) return; // another page took the screen: a late answer draws nothing
    const page = h('div', { class: 'page replay-page', id: 'replay' });
    if (error) append(page, [h('h1', { text: t('replay.title') }), h('p', { class: 'form-error', role: 'alert', text: error })]);
    else if (!views) append(page, [h('h1', { text: t('replay.title') }), h('p', { class: 'muted', text: t('common.loading') })]);
    else {
      const view = views[step];
      const dealt = view.revealed_hands && perspective === 'all' ? view.revealed_hands.dealt : null;
      const seats = match.seats.map((seat) => ({ seat: seat.seat, name: seat.display_name, kind: seat.bot_level ? 'bot' : 'human', level: seat.bot_level, guest: seat.guest, connected: true }));
      const stepButton = (name, label, onclick, extra = '') =>
        h('button', { type: 'button', class: ['btn', 'icon-button', extra], dataset: { step: name }, onclick, 'aria-label': label }, icon(name === 'play' && playing ? 'pause' : name));
      // On a phone the felt comes first and the controls stay under it (sticky at the screen's foot).
      const controls = h(
        'div',
        { class: 'replay-controls', role: 'group', 'aria-label': t('replay.controls') },
        h(
          'div',
          { class: 'replay-buttons' },
          stepButton('first', t('replay.first'), () => go(0)),
          stepButton('prev', t('replay.previous'), () => go(step - 1)),
          stepButton('play', playing ? t('replay.pause') : t('replay.play'), togglePlay, 'primary'),
          stepButton('next', t('replay.next'), () => go(step + 1)),
          stepButton('last', t('replay.last'), () => go(views.length - 1)),
        ),
        h(
          'div',
          { class: 'replay-scrub' },
          h('input', { type: 'range', min: '0', max: String(views.length - 1), value: String(step), 'aria-label': t('replay.position'), oninput: (event) => go(Number(event.target.value)) }),
          h('span', { class: 'step-count', id: 'replay-step', text: t('replay.step', { step: step + 1, steps: views.length }) }),
        ),
      );
      append(page, [
        h('div', { class: 'replay-top' }, h('h1', { text: t('replay.title') }), h('p', { class: 'muted replay-date', text: formatDate(match.finished_at) })),
        h(
          'section',
          { class: 'felt replay-felt', 'aria-label': t('table.felt') },
          h('div', { class: 'opponents' }, seats.map((seat, i) => seatBox(seat, view.players[i], { revealed: shownHand(view, i), showConnection: false }))),
          h('div', { class: 'center' }, h('div', { class: 'piles' }, stockPile(view), discardPile(view)), pairsZone(view)),
        ),
        h('div', { class: 'replay-dock' }, h('p', { class: 'prompt replay-move', 'aria-live': 'polite', text: lastMove(view, views[step - 1]) }), controls),
        h('div', { class: 'replay-options' }, perspectivePicker(), rulesChips(match.rules)),
        dealt
          ? h(
              'section',
              { class: 'panel' },
              h('h2', { text: t('replay.dealt_hands') }),
              h('ul', { class: 'dealt' }, dealt.map((hand, i) => h('li', {}, h('b', { text: `${seatName(names(), i)}: ` }), hand.join(' ')))),
            )
          : null,
        verifyPanel(),
        coachPanel(),
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
    if (!views || event.target.tagName === 'INPUT' || event.target.tagName === 'SELECT') return;
    if (event.key === 'ArrowRight') go(step + 1);
    if (event.key === 'ArrowLeft') go(step - 1);
  };
  document.addEventListener('keydown', keys);
  let gone = false;
  render();
  return {
    relabel: render,
    unmount() {
      gone = true;
      document.removeEventListener('keydown', keys);
      clearInterval(playing);
      clearTimeout(coach.timer);
    },
  };
}
