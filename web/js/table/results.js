// The results overlay: places, coin changes, the series score and the rematch proposal (rules §8:
// the first click opens it, each player agrees with his own click, it starts when all have agreed;
// "Leave the table" declines it and gives up the seat, docs/protocol.md, and goes to the lobby).
import { formatNumber, formatSigned, t } from '../i18n.js';
import { h } from '../dom.js';
import { icon } from '../icons.js';
import { currentUser } from '../session.js';
import { ratingChangeLine } from '../seasons.js';
import { reasonText, seatName } from './describe.js';
import { ruleText } from './reasons.js';

export function resultsPanel(game) {
  const st = game.st;
  const table = st.table;
  const results = table.results;
  if (!results) return null;
  const outcome = results.outcome;
  const seatNames = game.names();
  const changes = results.coin_changes || {};
  const stake = table.rules.stake;
  let title;
  if (outcome.draw) title = t('results.draw');
  else if (st.seat !== null && outcome.durak === st.seat) title = t('results.you_durak');
  else if (st.seat !== null && outcome.places[0] && outcome.places[0].includes(st.seat)) title = t('results.you_won');
  else if (st.seat !== null) title = t('results.you_safe');
  else title = t('results.durak_is', { name: seatName(seatNames, outcome.durak) });
  let place = 1;
  const rows = [];
  for (const group of outcome.places) {
    for (const seat of group) {
      const change = Number(changes[seat] ?? changes[String(seat)] ?? 0);
      const durak = !outcome.draw && seat === outcome.durak;
      rows.push(
        h(
          'li',
          { class: ['result-row', durak && 'durak', seat === st.seat && 'me'], dataset: { seat: String(seat) } },
          h('span', { class: 'place', text: durak ? t('results.durak') : t('results.place', { place }) }),
          h('span', { class: 'who', text: seat === st.seat ? t('table.you_name', { name: seatName(seatNames, seat) }) : seatName(seatNames, seat) }),
          stake > 0 ? h('span', { class: ['coins', change > 0 ? 'up' : change < 0 ? 'down' : 'even'], dataset: { change: String(change) }, text: t('results.coins', { change: formatSigned(change) }) }) : null,
          ratingChangeLine(results, seat),
        ),
      );
    }
    place += group.length;
  }
  const forfeited = outcome.forfeit !== null && outcome.forfeit !== undefined;
  const iForfeited = forfeited && st.seat !== null && outcome.forfeit === st.seat;
  const reasonLine = !forfeited ? '' : iForfeited ? t('results.forfeit_you', { reason: reasonText(outcome.reason, true) }) : t('results.forfeit', { name: seatName(seatNames, outcome.forfeit), reason: reasonText(outcome.reason) });
  const reason = forfeited ? h('p', { class: 'notice', id: 'results-forfeit', text: reasonLine }) : null;
  const series = Object.entries(table.series || {});
  const appear = game.firstSight(results.match_id); // animate its arrival once, not on every later update
  const hidden = st.resultsHidden === results.match_id;
  // A challenge that ended the match: who was caught, and the rule the move broke (the ruling's
  // `rule`, kept in the log).
  const ruling = outcome.reason === 'challenge' ? lastRuling(st.log) : null;
  const caughtText = (ruling) => (st.seat !== null && ruling.loser === st.seat ? t('results.caught_you', { rule: ruleText(ruling.rule) }) : t('results.caught', { loser: seatName(seatNames, ruling.loser), rule: ruleText(ruling.rule) }));
  const caught = ruling && ruling.ruling === 'upheld' && ruling.rule ? h('p', { class: 'notice caught', id: 'results-rule', text: caughtText(ruling) }) : null;
  // Places, coins and rating first, then Rematch and the way out, then why the match ended so; the deal's
  // proof is a small link to the replay's verify panel, the series after.
  const panel = h(
    'section',
    { class: ['panel', 'results', appear && 'appear'], id: 'results', role: 'region', 'aria-label': t('results.title'), tabindex: '-1' },
    h('button', { type: 'button', class: 'btn small ghost results-close icon-button', id: 'results-close', dataset: { key: 'results-close' }, 'aria-label': t('results.look_at_table'), title: t('results.look_at_table'), onclick: () => game.set({ resultsHidden: results.match_id }) }, icon('close')),
    h('h2', { class: 'results-title', text: title }),
    h('ol', { class: 'result-list' }, rows),
    rematchLine(game),
    st.rematchError ? h('p', { class: 'form-error', role: 'alert', id: 'rematch-error', text: st.rematchError }) : null,
    h('div', { class: 'actions results-actions' }, rematchButtons(game), exitButton(game)),
    // Why the match ended so (a forfeit, a caught cheat) under the buttons: they stay in view.
    caught || reason,
    results.match_id
      ? h(
          'p',
          { class: 'results-links' },
          h('a', { class: 'fair-deal-link', id: 'fair-deal-link', href: `/#/replay/${encodeURIComponent(results.match_id)}/verify`, 'aria-label': t('results.fair_deal_label') }, h('span', { text: t('results.fair_deal') }), icon('check', { size: 16 })),
          h('a', { class: 'replay-link', href: `/#/replay/${encodeURIComponent(results.match_id)}`, text: t('results.replay') }),
        )
      : null,
    series.length
      ? h(
          'div',
          { class: 'series-table' },
          h('h3', { text: t('table.series') }),
          h(
            'ul',
            {},
            series.map(([seat, score]) => h('li', { dataset: { seat } }, h('span', { text: seatName(seatNames, Number(seat)) }), h('b', { text: t('results.series_score', { wins: score[0], losses: score[1] }) }))),
          ),
        )
      : null,
  );
  return h('div', { class: ['results-overlay', hidden && 'closed'], id: 'results-overlay' }, panel);
}

/** The last challenge event of the match (the log keeps it with its ruling and rule), or null. */
function lastRuling(log) {
  for (let i = log.entries.length - 1; i >= 0; i--) {
    const event = log.entries[i].event;
    if (event.type === 'challenge') return event;
    if (event.type === 'match_start') break;
  }
  return null;
}

/** The button that brings the results back after "look at the table". */
export function resultsReopen(game) {
  const st = game.st;
  const results = st.table && st.table.results;
  if (!results || st.resultsHidden !== results.match_id) return null;
  return h('button', { type: 'button', class: 'btn small primary results-open', id: 'results-open', dataset: { key: 'results-open' }, onclick: () => game.set({ resultsHidden: null }), text: t('results.title') });
}

function rematchLine(game) {
  const st = game.st;
  const proposal = st.table.rematch;
  if (!proposal) return null;
  const seatNames = game.names();
  const agreed = proposal.agreed;
  const mine = st.seat !== null && agreed.includes(st.seat);
  let text;
  if (mine) {
    const missing = st.table.seats.filter((seat) => !agreed.includes(seat.seat)).map((seat) => (seat.kind === 'empty' ? t('rematch.new_player') : seatName(seatNames, seat.seat)));
    text = t('rematch.waiting_for', { names: missing.join(', ') });
  } else {
    const askers = st.table.seats.filter((seat) => seat.kind === 'human' && agreed.includes(seat.seat)).map((seat) => seatName(seatNames, seat.seat));
    text = t('rematch.wants', { names: askers.join(', ') });
  }
  return h(
    'p',
    { class: 'notice rematch-line', id: 'rematch-status', role: 'status', dataset: { agreed: agreed.join(',') } },
    h('span', { text }),
    ' ',
    h('span', { class: 'rematch-countdown', id: 'rematch-countdown' }),
  );
}

function rematchButtons(game) {
  const st = game.st;
  const watch = st.watch;
  const proposal = st.table.rematch;
  if (st.seat === null) {
    // A seat freed during the proposal is open to anyone watching: sitting down is agreeing.
    const me = currentUser();
    const stake = st.table.rules.stake;
    const free = st.table.seats.some((seat) => seat.kind === 'empty');
    if (watch || !proposal || !free || !me || (stake > 0 && me.kind === 'guest')) return null;
    return h('button', { type: 'button', class: 'btn primary', id: 'rematch-join', dataset: { key: 'rematch-join' }, onclick: () => game.join(undefined), text: stake > 0 ? t('waiting.join_staked', { coins: formatNumber(stake) }) : t('waiting.join') });
  }
  const agreed = proposal ? proposal.agreed.includes(st.seat) : false;
  if (agreed) return null;
  const text = proposal ? t('rematch.play_again') : t('results.rematch');
  return h('button', { type: 'button', class: 'btn primary', id: 'rematch-button', dataset: { key: 'rematch' }, onclick: () => game.tableCall('rematch', {}), text });
}

/** One way out, which says what it does: a seated player leaves the table (his seat is given up, a
 * rematch declined) and is taken to the lobby; a spectator only goes back to the lobby. */
function exitButton(game) {
  if (game.st.seat === null) return h('a', { class: 'btn ghost', id: 'results-lobby', href: '/#/', text: t('nav.lobby') });
  return h('button', { type: 'button', class: 'btn ghost', id: 'results-leave', dataset: { key: 'results-leave' }, title: t('results.leave_hint'), 'aria-description': t('results.leave_hint'), onclick: game.leave, text: t('table.leave') });
}

