// The controls: the slim title line (name, spectators, connection, series, mute) and the action bar
// (take, pass/bito, transfer, play the selected group, the trump exchange, the challenge menu).
import { cardShort } from '../cards.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { rulesChips } from '../rules.js';
import { toast } from '../toast.js';
import { icon } from '../icons.js';
import { moveText, seatName, tableTitle } from './describe.js';
import { selectionActions } from './hand.js';
import { isMuted, setMuted } from './sound.js';

function connText(state) {
  if (state === 'gone') return t('table.gone');
  if (state === 'signed_out') return t('table.signed_out');
  return state === 'reconnecting' ? t('table.reconnecting') : t('table.connecting');
}

export function muteButton(game) {
  const muted = isMuted();
  return h('button', {
    type: 'button',
    class: ['btn', 'small', 'ghost', 'mute-toggle', 'icon-button', muted && 'muted'],
    id: 'mute-toggle',
    dataset: { key: 'mute' },
    'aria-pressed': muted ? 'true' : 'false',
    'aria-label': t('table.sound'),
    title: muted ? t('table.sound_off') : t('table.sound_on'),
    onclick: () => setMuted(!isMuted()), // the page hears of it (onMuteChange) and redraws the bar
  }, icon(muted ? 'sound_off' : 'sound'));
}

function seriesLine(game) {
  const entries = Object.entries(game.st.table.series || {});
  if (!entries.some(([, score]) => score[0] || score[1])) return null;
  const names = game.names();
  return h(
    'p',
    { class: 'series-line', id: 'series' },
    h('span', { class: 'muted', text: `${t('table.series')}: ` }),
    entries.map(([seat, score], i) => [i ? ' · ' : '', h('span', { text: t('table.series_entry', { name: seatName(names, Number(seat)), wins: score[0], losses: score[1] }) })]),
  );
}

/** The cheating table's mark: on the top bar, the invite page and the lobby (rules §9). */
export function cheatingBadge(id = null) {
  return h('span', { class: 'badge cheating-badge', id, title: t('table.cheating_explain') }, icon('mask', { size: 16 }), h('span', { text: t('table.cheating') }));
}

export function topBar(game) {
  const { table, seat, conn, watch } = game.st;
  // "Spectating" only for who watches a match (or came by the watch link): an invited player who has
  // not sat down yet is not a spectator.
  const spectating = table && seat === null && (watch || table.status !== 'waiting');
  const connBadge = conn === 'open' ? null : h('span', { class: ['badge', 'conn-state', conn], id: 'conn-state', role: 'status', text: connText(conn) });
  return h(
    'div',
    { class: 'table-top' },
    h(
      'div',
      { class: 'table-title' },
      h('h1', { text: table ? tableTitle(table.name) : t('common.loading') }),
      table && table.rules.cheating ? cheatingBadge('cheating-badge') : null,
      spectating ? h('span', { class: 'badge spectating', id: 'spectating-badge', text: t('table.spectating') }) : null,
      table && table.spectators
        ? h('span', { class: 'badge spectators', id: 'spectator-count', dataset: { count: String(table.spectators) }, 'aria-label': t('table.spectators_n', { count: table.spectators }) }, icon('eye', { size: 14 }), h('span', { text: String(table.spectators) }))
        : null,
      connBadge,
    ),
    table ? rulesChips(table.rules) : null,
    table ? seriesLine(game) : null,
    game.inRunningMatch() ? h('button', { type: 'button', class: 'btn small ghost leave icon-button', id: 'leave-button', 'aria-label': t('table.leave'), onclick: game.leave }, icon('leave', { size: 20 }), h('span', { class: 'leave-label', text: t('table.leave') })) : null,
    table ? muteButton(game) : null,
  );
}

/** The action bar of `view` (the page's view, or the one a move drawn ahead was drawn from). */
export function actionBar(game, view = game.st.view) {
  const st = game.st;
  const actions = (view && view.legal) || [];
  const buttons = [];
  const has = (type) => actions.find((a) => a.type === type);
  const disabled = Boolean(st.busy) || st.conn !== 'open';
  const button = (key, text, onclick, extra = 'secondary') => h('button', { type: 'button', class: ['btn', extra], dataset: { action: key, key: `act:${key}` }, disabled, onclick, text });
  const group = selectionActions(game, actions);
  for (const action of group) {
    if (action.type === 'transfer') continue;
    buttons.push(button('play', t('action.play_selected', { count: st.selection.length }), () => game.send(action), 'primary'));
  }
  const transfers = actions.filter((a) => a.type === 'transfer');
  if (transfers.length) {
    buttons.push(
      button('transfer', t('action.transfer'), () => {
        const chosen = group.find((a) => a.type === 'transfer') || (transfers.length === 1 ? transfers[0] : null);
        if (chosen) game.send(chosen);
        else toast(st.selection.length ? t('why.transfer_same_rank') : t('action.transfer_pick'));
      }),
    );
  }
  if (has('take')) buttons.push(button('take', t('action.take'), () => game.send(has('take')), 'danger'));
  if (has('pass')) {
    const allCovered = view.table.length && view.table.every((pair) => pair.cover);
    const label = view.phase === 'challenge' ? t('action.no_challenge') : view.taking ? t('action.done_adding') : allCovered ? t('action.bito') : t('action.pass');
    buttons.push(button('pass', label, () => game.send(has('pass')), 'primary'));
  }
  if (has('exchange_trump')) buttons.push(button('exchange_trump', t('action.exchange_trump', { card: cardShort(view.trump_card) }), () => game.send(has('exchange_trump'))));
  const challenges = actions.filter((a) => a.type === 'challenge');
  let challengeMenu = null;
  if (challenges.length) {
    const attacks = [];
    const names = game.names();
    const described = view.moves.map((move) => {
      const text = moveText(move, names, attacks);
      if (move.type !== 'cover') attacks.push(...(move.cards || []));
      return text;
    });
    challengeMenu = h(
      'details',
      { class: 'challenge-menu' },
      h('summary', { class: 'btn warn', dataset: { action: 'challenge', key: 'act:challenge' }, text: t('action.challenge') }),
      h(
        'div',
        { class: 'challenge-list' },
        h('p', { class: 'hint', text: t('action.challenge_hint') }),
        challenges.map((action) => h('button', { type: 'button', class: 'btn small warn', dataset: { key: `challenge:${action.move}` }, disabled, onclick: () => game.send(action), text: described[action.move] || `#${action.move}` })),
      ),
    );
  }
  if (st.selection.length) {
    buttons.push(
      button('clear', t('action.clear_selection'), () => game.set({ selection: [] }), 'ghost'),
    );
  }
  return h('div', { class: 'action-bar', id: 'actions', role: 'group', 'aria-label': t('action.label') }, buttons, challengeMenu);
}
