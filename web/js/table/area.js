// The table area: stock and trump, the attack/cover pairs, the discard pile, the prompt line and
// the note of an idle limit or disconnect grace.
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { clockText, seatName } from './describe.js';
import { discardPile, pairsZone, stockPile } from './render.js';
import { onDrop } from './hand.js';

export function promptText(game) {
  const { view, seat } = game.st;
  if (!view || view.phase === 'over') return '';
  const names = game.names();
  const decision = view.decision;
  const mine = seat !== null && decision.seats.includes(seat);
  const who = decision.seats.map((s) => seatName(names, s)).join(', ');
  switch (decision.kind) {
    case 'lead':
      return mine ? t('prompt.you_lead') : t('prompt.other_leads', { name: who });
    case 'defend':
      return mine ? t('prompt.you_defend') : t('prompt.other_defends', { name: who });
    case 'throw_in':
      return mine ? t('prompt.you_throw_in') : t('prompt.others_throw_in', { names: who });
    case 'throw_in_after_take':
      if (mine) return t('prompt.you_add_to_take', { name: seatName(names, view.defender) });
      return view.defender === seat ? t('prompt.you_take_others_add', { names: who }) : t('prompt.others_add_to_take', { name: seatName(names, view.defender), names: who });
    case 'challenge':
      return mine ? t('prompt.you_challenge_window') : t('prompt.others_challenge_window', { names: who });
    default:
      return '';
  }
}

/** "Bob is not connected: 0:42 to come back", "Your move: 4:59 left, then you forfeit": the idle
 * limit and the disconnect grace of the seat the match waits for (the move timer has its ring). */
function deadlineNote(game) {
  const seat = game.decidingSeats().map((s) => ({ seat: s, deadline: game.deadlineOf(s) })).find((entry) => entry.deadline && entry.deadline.kind !== 'timer');
  if (!seat) return null;
  return h('p', { class: ['deadline-note', `deadline-${seat.deadline.kind}`], id: 'deadline-note', dataset: { seat: String(seat.seat), kind: seat.deadline.kind } });
}

export function deadlineNoteText(game, seat, kind, left) {
  const time = clockText(left);
  const name = seatName(game.names(), seat);
  if (kind === 'grace') return t('deadline.grace', { name, time });
  return seat === game.st.seat ? t('deadline.idle_you', { time }) : t('deadline.idle_other', { name, time });
}

/** The stock with the trump, and the discard pile. */
export function pilesRow(game) {
  const view = game.st.view;
  return h('div', { class: 'piles' }, stockPile(view), discardPile(view));
}

/** The attack/cover pairs (the attacks a selected card may cover are buttons). */
export function pairsArea(game) {
  const st = game.st;
  const view = st.view;
  const selected = st.selection.length === 1 ? st.selection[0] : null;
  const targets = selected ? game.legal().filter((a) => a.type === 'cover' && a.card === selected).map((a) => a.attack) : [];
  const zone = pairsZone(view, {
    targets,
    onTarget: (index) => game.send({ type: 'cover', attack: index, card: selected }),
    onDrop: st.seat !== null ? (card, index) => onDrop(game, card, index) : null,
  });
  if (view.table.length >= 4) zone.classList.add('many');
  return zone;
}

/** The allowance, who is taking, the prompt and the note of an idle limit or a grace. */
export function infoLine(game) {
  const st = game.st;
  const view = st.view;
  const info = [];
  if (view.phase !== 'over' && view.phase !== 'challenge') {
    info.push(h('span', { class: 'allowance', id: 'allowance', dataset: { allowance: String(view.allowance) }, text: t('table.allowance', { count: view.allowance, cap: view.cap }) }));
    if (view.taking) info.push(h('span', { class: 'badge taking', text: view.defender === st.seat ? t('table.you_taking') : t('table.taking', { name: seatName(game.names(), view.defender) }) }));
  }
  return h('div', { class: 'table-info' }, info, h('p', { class: 'prompt', id: 'prompt', 'aria-live': 'polite', text: promptText(game) }), deadlineNote(game));
}
