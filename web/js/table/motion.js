// Cards that move: FLIP with the Web Animations API. Before a redraw the page measures where every
// card and landmark (seats, stock, discard) is; after it, each card is played from where it was
// (or from where it came: an opponent's seat, the stock) to where it is now. Cards that left the
// table fly as copies to the taker or the discard pile; opponents' draws fly as backs.
// Nothing here blocks input: the real elements are in place at once, copies ignore the pointer.
// prefers-reduced-motion: no animation at all.

const DURATION = 260; // ms, each flight (the issue asks for 150–350)
const STAGGER = 45; // ms between cards drawn in refill order
const EASING = 'cubic-bezier(0.2, 0.7, 0.3, 1)';

export function motionAllowed() {
  return !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
}

function centre(rect) {
  return { x: rect.left + rect.width / 2, y: rect.top + rect.height / 2 };
}

function landmarks(root) {
  const seats = new Map();
  for (const el of root.querySelectorAll('#felt .seat[data-seat]')) seats.set(Number(el.dataset.seat), el.getBoundingClientRect());
  const stock = root.querySelector('#stock');
  const discard = root.querySelector('#discard');
  const hand = root.querySelector('#hand');
  return {
    seats,
    stock: stock ? stock.getBoundingClientRect() : null,
    discard: discard ? discard.getBoundingClientRect() : null,
    hand: hand ? hand.getBoundingClientRect() : null,
  };
}

/** Where every card on the felt (hand, table, turned trump) and every landmark is now. */
export function measure(root) {
  const cards = new Map();
  // A card played from the hand keeps its place there, unseen (.played), until the hand closes up: the
  // first element of a card (the table's, before the hand's) is the one measured.
  for (const el of root.querySelectorAll('#felt .card[data-card]')) {
    if (!cards.has(el.dataset.card)) cards.set(el.dataset.card, { rect: el.getBoundingClientRect(), el, onTable: Boolean(el.closest('#table-zone')) });
  }
  return { cards, ...landmarks(root) };
}

function cardsOf(action) {
  if (!action) return [];
  if (action.card) return [action.card];
  return action.cards || [];
}

const flying = new WeakSet(); // cards in flight (flyFrom)

/** Fly `el` (already at its new place, `now`) from `rect` to where it is. */
function flyFrom(el, rect, now, { delay = 0, scale = 1 } = {}) {
  const a = centre(rect);
  const b = centre(now);
  const dx = a.x - b.x;
  const dy = a.y - b.y;
  if (Math.abs(dx) < 2 && Math.abs(dy) < 2 && scale === 1) return false;
  const flight = el.animate(
    [
      { translate: `${dx}px ${dy}px`, scale: String(scale) },
      { translate: '0px 0px', scale: '1' },
    ],
    { duration: DURATION, delay, easing: EASING, fill: 'backwards' },
  );
  flying.add(el);
  flight.onfinish = flight.oncancel = () => flying.delete(el);
  return true;
}

/** A copy of a card (or a back) flying from `from` to `to` over everything, then removed. */
function ghost(template, from, to, { delay = 0 } = {}) {
  const el = template.cloneNode(true);
  el.classList.add('card-ghost');
  el.removeAttribute('id');
  el.setAttribute('aria-hidden', 'true');
  Object.assign(el.style, { position: 'fixed', left: `${from.left}px`, top: `${from.top}px`, width: `${from.width}px`, height: `${from.height}px`, margin: '0' });
  document.body.append(el);
  const a = centre(from);
  const b = centre(to);
  const animation = el.animate(
    [
      { translate: '0px 0px', scale: '1', opacity: 1 },
      { translate: `${b.x - a.x}px ${b.y - a.y}px`, scale: '0.55', opacity: 0.35 },
    ],
    { duration: DURATION, delay, easing: EASING, fill: 'both' },
  );
  animation.onfinish = () => el.remove();
  animation.oncancel = () => el.remove();
  return animation;
}

function backTemplate(root) {
  const el = document.createElement('div');
  el.className = 'card back';
  const sample = root.querySelector('#hand .card, #table-zone .card');
  if (sample) {
    const rect = sample.getBoundingClientRect();
    Object.assign(el.style, { width: `${rect.width}px`, height: `${rect.height}px` });
  }
  return el;
}

/**
 * Animate the change from `before` (measure() before the redraw) given the update's `events`.
 * Returns how many flights started.
 */
export function animateChange(root, before, events, mySeat) {
  if (!before || !motionAllowed()) return 0;
  const after = landmarks(root);
  const source = new Map(); // card -> rect it comes from (when it was not on the felt before)
  const delays = new Map();
  let bout = null;
  let order = 0;
  const backs = []; // opponents' draws: [seat, count, delay]
  for (const event of events || []) {
    if (event.type === 'move') {
      const seatRect = before.seats.get(event.seat) || after.seats.get(event.seat);
      for (const card of cardsOf(event.action)) if (seatRect) source.set(card, seatRect);
    } else if (event.type === 'draw' && event.count) {
      if (event.cards && event.seat === mySeat) {
        for (const card of event.cards) {
          if (before.stock) source.set(card, before.stock);
          delays.set(card, order++ * STAGGER);
        }
      } else {
        backs.push([event.seat, Math.min(event.count, 3), order * STAGGER]);
        order += Math.min(event.count, 3);
      }
    } else if (event.type === 'match_start' && after.stock) {
      for (const el of root.querySelectorAll('#hand .card[data-card]')) {
        source.set(el.dataset.card, after.stock);
        delays.set(el.dataset.card, order++ * STAGGER);
      }
    } else if (event.type === 'bout_end') {
      bout = event;
    }
  }
  // Every position is read before the first animation starts: a read after an animate() makes the
  // browser work the style out again, card by card.
  const flights = []; // [el, from, options]
  const present = new Set();
  for (const el of root.querySelectorAll('#felt .card[data-card]:not(.played)')) {
    const card = el.dataset.card;
    present.add(card);
    const was = before.cards.get(card);
    // Not drawn again (the hand closing up after a tap leaves the table as it is): it moves only if
    // the layout moved it, and a card already flying keeps its flight.
    if (was && was.el === el && flying.has(el)) continue;
    const delay = delays.get(card) || 0;
    if (was) flights.push([el, was.rect, { delay }]);
    else if (source.has(card)) flights.push([el, source.get(card), { delay, scale: 0.6 }]);
  }
  const now = flights.map(([el]) => el.getBoundingClientRect());
  const template = backs.length && before.stock ? backTemplate(root) : null;
  let started = 0;
  flights.forEach(([el, from, options], i) => {
    if (flyFrom(el, from, now[i], options)) started++;
  });
  // Cards that left the table: to the taker, or swept to the discard pile.
  let sweep = 0;
  for (const [card, was] of before.cards) {
    if (present.has(card) || !was.onTable) continue;
    let target = after.discard;
    if (bout && bout.result === 'taken') target = after.seats.get(bout.defender) || after.hand;
    if (!target) continue;
    ghost(was.el, was.rect, target, { delay: sweep++ * 25 });
    started++;
  }
  if (template) {
    for (const [seat, count, delay] of backs) {
      const target = after.seats.get(seat);
      if (!target || seat === mySeat) continue;
      for (let i = 0; i < count; i++) {
        ghost(template, before.stock, target, { delay: delay + i * STAGGER });
        started++;
      }
    }
  }
  return started;
}
