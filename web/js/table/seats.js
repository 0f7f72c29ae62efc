// The opponents around the oval: seats in play order after ours (all seats for a spectator), on
// an arc whose ends sit lower, like players around a table. A long press (or hover) shows the full
// name; grace countdowns of disconnected players run on their seats.
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { toast } from '../toast.js';
import { seatBox } from './render.js';

/** Seats in the order they sit after `mySeat` (everyone, from seat 0, when watching). */
export function opponentOrder(count, mySeat) {
  const order = [];
  if (mySeat !== null) for (let i = 1; i < count; i++) order.push((mySeat + i) % count);
  else for (let i = 0; i < count; i++) order.push(i);
  return order;
}

/** How far seat `index` of `count` drops below the top of the oval: 0 at the top, up to ~0.7 at
 * the ends (seats spread over a wider arc the more there are). */
export function ovalDrop(index, count) {
  if (count < 2) return 0;
  const spread = Math.min(140, 50 * (count - 1)); // degrees of the arc the seats cover
  const angle = 90 - spread / 2 + (spread * index) / (count - 1);
  return 1 - Math.sin((angle * Math.PI) / 180);
}

function longPress(el, text) {
  let timer = null;
  const cancel = () => clearTimeout(timer);
  el.addEventListener('pointerdown', (event) => {
    if (event.pointerType === 'mouse') return; // a mouse has the title tooltip
    cancel();
    timer = setTimeout(() => toast(text), 450);
  });
  for (const kind of ['pointerup', 'pointercancel', 'pointerleave']) el.addEventListener(kind, cancel);
  el.addEventListener('contextmenu', (event) => event.preventDefault());
}

/** The opponents row. `deciding` = seats the match waits for; `mayOnly` = seats that may but need not act. */
export function opponentsRing({ table, view, mySeat, deciding, mayOnly, graceSeats }) {
  const order = opponentOrder(table.seats.length, mySeat);
  return h(
    'div',
    { class: ['opponents', `n${order.length}`], id: 'opponents', dataset: { count: String(order.length) } },
    order.map((seatNo, index) => {
      const seat = table.seats[seatNo];
      const player = view ? view.players[seatNo] : null;
      const box = seatBox(seat, player, { deciding: deciding.includes(seatNo), series: null });
      if (mayOnly.includes(seatNo)) box.classList.add('may');
      box.style.setProperty('--drop', ovalDrop(index, order.length).toFixed(3));
      const label = box.getAttribute('title') || '';
      box.setAttribute('role', 'group');
      if (player) box.setAttribute('aria-label', `${label}, ${t('table.cards_n', { count: player.cards })}`);
      longPress(box, label);
      if (graceSeats.includes(seatNo) && !deciding.includes(seatNo)) {
        box.querySelector('.seat-head').append(h('span', { class: 'countdown grace-clock', dataset: { kind: 'grace', seat: String(seatNo) }, 'aria-hidden': 'true' }));
      }
      return box;
    }),
  );
}
