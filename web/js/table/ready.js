// Before a staked match (rules §8, docs/protocol.md "Ready check"): the match starts only when every
// player seated is connected and has confirmed. While table.ready_check is open this shows a sheet
// at the bottom of the page with the question, its countdown and who is still missing; seated at a
// waiting staked table, closing or reloading the tab asks first (the browser's own question), since
// a player away from the table loses his seat and cannot confirm.
//
//   const ready = readyCheck(game);   // once per page
//   ready.sync();                     // after the table changed (reads the check's deadline)
//   ready.panel();                    // the ready part's drawing (null when there is no check)
//   ready.stop();                     // when the page goes
import { h } from '../dom.js';
import { formatNumber, t } from '../i18n.js';
import { clockText, seatName } from './describe.js';

export function readyCheck(game) {
  const st = game.st;
  let seenTable = null; // the table facts the deadline was read from
  let deadlineAt = null; // performance.now() time the check runs out

  function check() {
    const table = st.table;
    return table && table.status === 'waiting' && table.ready_check ? table.ready_check : null;
  }

  /** After the table changed (never while drawing): the check's deadline on this page's clock. */
  function sync() {
    if (st.table === seenTable) return;
    seenTable = st.table;
    const open = check();
    deadlineAt = open ? performance.now() + open.deadline_ms : null;
  }

  function panel() {
    const open = check();
    if (!open) return null;
    const table = st.table;
    const names = game.names();
    const seated = st.seat !== null;
    // Who has yet to confirm, besides the one this page asks.
    const missing = table.seats.filter((seat) => seat.kind === 'human' && seat.seat !== st.seat && !(open.ready.includes(seat.seat) && seat.connected)).map((seat) => seatName(names, seat.seat));
    const mine = seated && open.ready.includes(st.seat);
    const coins = formatNumber(table.rules.stake);
    const children = [];
    if (seated && !mine) {
      children.push(h('h2', { text: t('ready.question', { coins }) }));
      children.push(h('p', { class: 'hint', text: t('ready.explain') }));
    } else {
      children.push(h('h2', { text: mine ? t('ready.you_are_ready') : t('ready.title', { coins }) }));
    }
    children.push(
      h(
        'p',
        { class: 'ready-status', role: 'status' },
        h('span', { id: 'ready-missing', text: missing.length ? t('ready.waiting_for', { names: missing.join(', ') }) : '' }),
        ' ',
        h('span', { class: 'ready-countdown', id: 'ready-countdown', text: countdown() }),
      ),
    );
    if (seated && !mine) {
      children.push(h('button', { type: 'button', class: 'btn primary big', id: 'ready-button', dataset: { key: 'ready' }, onclick: () => game.tableCall('ready', {}), text: t('ready.confirm') }));
    }
    return h('div', { class: 'ready-sheet', id: 'ready-sheet' }, h('section', { class: ['panel', 'ready-check', mine && 'confirmed'], role: 'region', 'aria-label': t('ready.title', { coins }), dataset: { ready: open.ready.join(',') } }, children));
  }

  function countdown() {
    return deadlineAt === null ? '' : t('ready.time_left', { time: clockText(deadlineAt - performance.now()) });
  }

  const ticker = setInterval(() => {
    const el = document.getElementById('ready-countdown');
    if (!el) return;
    const text = countdown();
    if (el.textContent !== text) el.textContent = text;
  }, 250);

  // Seated at a waiting staked table: leaving the page (closing, reloading) asks first.
  const onBeforeUnload = (event) => {
    const table = st.table;
    if (!table || table.status !== 'waiting' || !(table.rules.stake > 0) || st.seat === null || st.watch) return;
    event.preventDefault();
    event.returnValue = t('ready.leave_guard'); // browsers show their own words
  };
  window.addEventListener('beforeunload', onBeforeUnload);

  return {
    panel,
    sync,
    stop() {
      clearInterval(ticker);
      window.removeEventListener('beforeunload', onBeforeUnload);
    },
  };
}
