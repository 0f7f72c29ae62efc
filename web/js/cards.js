// Cards as text: "10h" -> rank "10", suit "h"; drawn with CSS, read aloud as "10 of hearts".
import { h } from './dom.js';
import { t } from './i18n.js';

export const SUIT_SYMBOLS = { c: '\u2663', d: '\u2666', h: '\u2665', s: '\u2660' };
const RANK_VALUES = { J: 11, Q: 12, K: 13, A: 14 };

export function parseCard(text) {
  const suit = text.slice(-1).toLowerCase();
  const rank = text.slice(0, -1).toUpperCase();
  return { text, rank, suit, value: RANK_VALUES[rank] || Number(rank) };
}

export function suitName(suit) {
  switch (suit) {
    case 'c':
      return t('suit.clubs');
    case 'd':
      return t('suit.diamonds');
    case 'h':
      return t('suit.hearts');
    default:
      return t('suit.spades');
  }
}

/** The suit as a card name says it ("Queen of hearts", ru "дама червей"; suitName is the
 * suit on its own, ru "Козырь: черви"). */
function suitOfName(suit) {
  switch (suit) {
    case 'c':
      return t('suit_of.clubs');
    case 'd':
      return t('suit_of.diamonds');
    case 'h':
      return t('suit_of.hearts');
    default:
      return t('suit_of.spades');
  }
}

function rankName(rank) {
  switch (rank) {
    case 'J':
      return t('rank.jack');
    case 'Q':
      return t('rank.queen');
    case 'K':
      return t('rank.king');
    case 'A':
      return t('rank.ace');
    default:
      return rank;
  }
}

/** "10 of hearts", "Queen of spades" in the current language. */
export function cardName(text) {
  const card = parseCard(text);
  return t('card.name', { rank: rankName(card.rank), suit: suitOfName(card.suit) });
}

/** Short visual text: "10♥". */
export function cardShort(text) {
  const card = parseCard(text);
  return card.rank + SUIT_SYMBOLS[card.suit];
}

export function isRed(suit) {
  return suit === 'h' || suit === 'd';
}

/** Hand order: non-trumps by rank then suit, trumps last by rank. */
export function sortHand(cards, trump) {
  const order = 'cdhs';
  return [...cards].sort((a, b) => {
    const x = parseCard(a);
    const y = parseCard(b);
    const tx = x.suit === trump ? 1 : 0;
    const ty = y.suit === trump ? 1 : 0;
    return tx - ty || x.value - y.value || order.indexOf(x.suit) - order.indexOf(y.suit);
  });
}

/** The face of a card. `tag` is 'button' for cards a player can act on, else 'div'. */
export function cardFace(text, { tag = 'div', classes = [], label, attrs = {} } = {}) {
  const card = parseCard(text);
  const symbol = SUIT_SYMBOLS[card.suit];
  return h(
    tag,
    {
      class: ['card', isRed(card.suit) ? 'red' : 'black', `suit-${card.suit}`, ...classes],
      'aria-label': label || cardName(text),
      role: tag === 'div' ? 'img' : null,
      type: tag === 'button' ? 'button' : null,
      ...attrs,
      dataset: { card: card.text, ...(attrs.dataset || {}) },
    },
    h('span', { class: 'corner top', 'aria-hidden': 'true' }, h('b', { text: card.rank }), h('i', { text: symbol })),
    h('span', { class: 'pip', 'aria-hidden': 'true', text: symbol }),
    h('span', { class: 'corner bottom', 'aria-hidden': 'true' }, h('b', { text: card.rank }), h('i', { text: symbol })),
  );
}

export function cardBack(classes = []) {
  return h('div', { class: ['card', 'back', ...classes], 'aria-hidden': 'true' });
}
