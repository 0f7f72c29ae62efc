// The player's hand: sorted, fanned and overlapped when long (the CSS lays it out from --n and --i),
// lifted on his turn. A click (tap, Enter) plays a card with one possible action at once; a card
// with several (cover one of two attacks, cover or transfer) is selected first and its targets light
// up on the table: tap-then-tap. Cards can also be dragged onto an attack or onto the table.
import { cardFace, sortHand } from '../cards.js';
import { h, fingerTap } from '../dom.js';
import { t } from '../i18n.js';
import { cheatOf, whyNot } from './reasons.js';

/** Legal actions (view.legal) that use `card`. */
export function actionsForCard(legal, card) {
  return legal.filter((action) => action.card === card || (action.cards && action.cards.includes(card)));
}

function sameCards(a, b) {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

/** Legal actions that play exactly the selected cards. */
export function selectionActions(game, legal = game.legal()) {
  if (!game.st.selection.length) return [];
  return legal.filter((action) => action.cards && sameCards(action.cards, game.st.selection));
}

export function onCardClick(game, card) {
  const st = game.st;
  if (st.busy) return;
  const legal = game.legal();
  const actions = actionsForCard(legal, card);
  if (st.selection.includes(card)) {
    game.set({ selection: st.selection.filter((c) => c !== card) });
    return;
  }
  if (st.selection.length) {
    const wanted = [...st.selection, card];
    if (legal.some((action) => action.cards && wanted.every((c) => action.cards.includes(c)))) {
      game.set({ selection: wanted });
      return;
    }
  }
  if (!actions.length) {
    const why = whyNot(st.view, st.seat, card, st.table.rules);
    game.refuse(why, card);
    return;
  }
  const single = actions.filter((action) => action.card || action.cards.length === 1);
  if (actions.length === 1 && single.length === 1) {
    game.send(actions[0]);
    return;
  }
  game.set({ selection: [card] });
}

export function onDrop(game, card, attackIndex) {
  if (!card) return;
  const actions = actionsForCard(game.legal(), card);
  let action = null;
  if (attackIndex !== null) action = actions.find((a) => a.type === 'cover' && a.attack === attackIndex);
  else {
    const plays = actions.filter((a) => a.cards && a.cards.length === 1);
    action = plays.find((a) => a.type === 'transfer') || plays[0] || (actions.length === 1 ? actions[0] : null);
  }
  if (action) game.send(action);
  else onCardClick(game, card);
}

/** Touch drag: a card dragged with a finger and let go over an attack covers it (or plays on the table). */
function touchDrag(game, el, card) {
  let start = null;
  let moved = false;
  el.addEventListener('pointerdown', (event) => {
    if (event.pointerType === 'mouse' || el.getAttribute('aria-disabled') === 'true') return;
    start = { x: event.clientX, y: event.clientY };
    moved = false;
  });
  el.addEventListener('pointermove', (event) => {
    if (!start) return;
    const dx = event.clientX - start.x;
    const dy = event.clientY - start.y;
    if (!moved && Math.hypot(dx, dy) < 14) return;
    moved = true;
    el.style.translate = `${dx}px ${dy}px`;
    el.classList.add('dragged');
  });
  const end = (event) => {
    if (!start) return;
    const wasMoved = moved;
    start = null;
    el.style.translate = '';
    el.classList.remove('dragged');
    if (!wasMoved || event.type === 'pointercancel') return;
    event.preventDefault();
    el.dataset.dragged = '1'; // the click that follows is not a tap
    const under = document.elementsFromPoint(event.clientX, event.clientY);
    const pair = under.map((node) => node.closest && node.closest('.pair.open')).find(Boolean);
    const zone = under.some((node) => node.id === 'table-zone');
    if (pair) onDrop(game, card, Number(pair.dataset.index));
    else if (zone) onDrop(game, card, null);
  };
  el.addEventListener('pointerup', end);
  el.addEventListener('pointercancel', end);
}

export function handRow(game) {
  const st = game.st;
  const view = st.view;
  const hand = sortHand(view.hand || [], view.trump);
  const legal = game.legal();
  const canAct = !st.busy && st.conn === 'open';
  const cheating = Boolean(st.table && st.table.rules.cheating);
  const cards = hand.map((card, index) => {
    const uses = actionsForCard(legal, card);
    const playable = uses.length > 0;
    // At a cheating table every card is offered: an honest one glows, a card that only cheats is
    // marked as a cheat (dashed red), so a mis-tap is never a silent cheat.
    const honest = !cheating || uses.some((action) => !cheatOf(view, action));
    const selected = st.selection.includes(card);
    const el = cardFace(card, {
      tag: 'button',
      classes: [playable && canAct && (honest ? 'playable' : 'cheat'), selected && 'selected', card.endsWith(view.trump) && 'trump'],
      attrs: {
        dataset: { key: `card:${card}` },
        'aria-pressed': selected ? 'true' : 'false',
        'aria-description': playable && !honest ? t('cheat.card_is_cheat') : null,
        'aria-disabled': playable && canAct ? 'false' : 'true',
        draggable: playable && canAct ? 'true' : 'false',
        onclick: () => {
          if (el.dataset.dragged) {
            delete el.dataset.dragged;
            return;
          }
          onCardClick(game, card);
        },
        ondragstart: (event) => {
          event.dataTransfer.setData('text/plain', card);
          event.dataTransfer.effectAllowed = 'move';
          game.container.classList.add('dragging');
        },
        ondragend: () => game.container.classList.remove('dragging'),
      },
    });
    if (playable && canAct) touchDrag(game, el, card);
    fingerTap(el, () => onCardClick(game, card));
    return el;
  });
  // A long hand keeps every card's strip at least STRIP px wide: one line while it fits, then up to
  // MAX_ROWS overlapping rows of smaller cards (a back row shows the top of its cards, where rank and
  // suit are), then a scroller.
  const oneLine = hand.length <= cardsPerRow();
  const perRow = cardsPerRow(window.innerWidth, window.innerHeight, TWO_ROW_SCALE);
  const count = oneLine ? 1 : Math.ceil(hand.length / perRow);
  const scroll = count > MAX_ROWS;
  const rows = [];
  if (scroll || count === 1) rows.push(cards);
  else {
    const size = Math.ceil(cards.length / count);
    for (let i = 0; i < cards.length; i += size) rows.push(cards.slice(i, i + size));
  }
  const lines = rows.map((line, r) => {
    line.forEach((el, i) => el.style.setProperty('--i', String(i)));
    const div = h('div', { class: ['hand-line', r < rows.length - 1 && 'back'] }, line);
    div.style.setProperty('--n', String(Math.max(1, line.length)));
    return div;
  });
  const row = h('div', { class: ['hand', hand.length > 12 && 'long', rows.length > 1 && 'two-rows', rows.length > 2 && 'three-rows', scroll && 'scroll'], id: 'hand', role: 'group', 'aria-label': t('table.your_hand', { count: hand.length }), dataset: { rows: String(rows.length) } }, lines);
  row.style.setProperty('--n', String(Math.max(1, hand.length)));
  return row;
}

const STRIP = 33; // px of each overlapped card left to tap (at least 32, with a little to spare)
const TWO_ROW_SCALE = 0.9; // the cards of a hand in rows are this much smaller (app.css "two-rows")
const MAX_ROWS = 3;

/** How many cards one line of the hand holds at this window size with STRIP px showing of each
 * (the CSS sizes: app.css "--ch", "--card-w"; pure arithmetic, no layout read while drawing). */
export function cardsPerRow(width = window.innerWidth, height = window.innerHeight, scale = 1) {
  const landscapePhone = height <= 500 && width > height;
  const ch = Math.min(118, Math.max(50, Math.min(0.105 * height, 0.21 * width)));
  const cardW = scale * (landscapePhone ? 0.7 * Math.min(66, Math.max(44, 0.14 * height)) : 0.7 * ch);
  const available = Math.min(width, 1600) - 52; // the page's, the felt's and the hand's padding and borders
  return Math.max(2, 1 + Math.floor((available - cardW) / STRIP));
}
