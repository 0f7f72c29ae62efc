// Why a card cannot be played now, in words: the engine's refusal reasons (app/engine/errors.py:
// not_your_turn, does_not_beat, rank_not_on_table, limit_exceeded, transfer_not_allowed) worked out
// from the view the page already has, so an illegal click is explained without a round trip
// (sending it would be a move at a cheating table).
import { cardName, cardShort, parseCard } from '../cards.js';
import { t } from '../i18n.js';

function beats(card, attack, trump) {
  const a = parseCard(attack);
  const c = parseCard(card);
  if (c.suit === a.suit) return c.value > a.value;
  return c.suit === trump && a.suit !== trump;
}

/** The refusal code and its words for playing `card` from seat `seat` now. */
export function whyNot(view, seat, card, rules) {
  const decision = view.decision || { seats: [], kind: '' };
  if (!decision.seats.includes(seat)) return { code: 'not_your_turn', text: t('why.not_your_turn') };
  const rank = parseCard(card).rank;
  const pairs = view.table || [];
  if (decision.kind === 'defend' && seat === view.defender) {
    const open = pairs.filter((pair) => !pair.cover).map((pair) => pair.attack);
    const sameRank = open.length && open.every((attack) => parseCard(attack).rank === rank);
    if (rules && rules.transfer && !pairs.some((pair) => pair.cover) && !sameRank && !open.some((attack) => beats(card, attack, view.trump))) {
      return { code: 'does_not_beat', text: t('why.no_beat_no_transfer', { card: cardShort(card) }) };
    }
    if (open.length === 1) return { code: 'does_not_beat', text: t('why.does_not_beat', { card: cardShort(card), attack: cardShort(open[0]) }) };
    return { code: 'does_not_beat', text: t('why.beats_nothing', { card: cardShort(card) }) };
  }
  if (pairs.length && decision.kind !== 'challenge') {
    const ranks = new Set(pairs.flatMap((pair) => [pair.attack, pair.cover]).filter(Boolean).map((c) => parseCard(c).rank));
    if (view.allowance <= 0) {
      return pairs.length >= view.cap
        ? { code: 'limit_exceeded', text: t('why.limit_reached', { cap: view.cap }) }
        : { code: 'limit_exceeded', text: t('why.defender_short') };
    }
    if (!ranks.has(rank)) return { code: 'rank_not_on_table', text: t('why.rank_not_on_table') };
  }
  return { code: 'illegal_action', text: t('table.cannot_play_card', { card: cardName(card) }) };
}

/** The seat a transfer from `seat` would make the defender: the next one in play that holds cards. */
function nextWithCards(view, seat) {
  const n = view.players.length;
  for (let i = 1; i < n; i++) {
    const other = (seat + i) % n;
    const player = view.players[other];
    if (!player.out && player.cards > 0) return other;
  }
  return null;
}

/** At a cheating table every card is offered (view.legal holds the cheats too): which rule `action`
 * would break, as {rule, text} (the same rule codes as a challenge's ruling), or null when honest. */
export function cheatOf(view, action) {
  const cards = action.cards || (action.card ? [action.card] : []);
  if (!cards.length || action.type === 'lead') return null;
  const pairs = view.table || [];
  if (action.type === 'cover') {
    const pair = pairs[action.attack];
    if (!pair || beats(action.card, pair.attack, view.trump)) return null;
    return { rule: 'does_not_beat', text: t('cheat.does_not_beat', { card: cardShort(action.card), attack: cardShort(pair.attack) }) };
  }
  if (action.type === 'throw_in') {
    const ranks = new Set(pairs.flatMap((pair) => [pair.attack, pair.cover]).filter(Boolean).map((c) => parseCard(c).rank));
    const off = cards.find((card) => !ranks.has(parseCard(card).rank));
    if (off) return { rule: 'rank_not_on_table', text: t('cheat.rank_not_on_table', { card: cardShort(off) }) };
    if (cards.length > view.allowance) return { rule: 'attack_limit', text: t('cheat.attack_limit', { card: cardShort(cards[0]) }) };
    return null;
  }
  if (action.type === 'transfer') {
    const ranks = [...new Set(pairs.map((pair) => parseCard(pair.attack).rank))];
    if (cards.some((card) => !ranks.includes(parseCard(card).rank))) return { rule: 'transfer_rank', text: t('cheat.transfer_rank', { card: cardShort(cards[0]) }) };
    const target = nextWithCards(view, view.defender);
    if (target !== null && view.players[target].cards < pairs.length + cards.length) return { rule: 'transfer_limit', text: t('cheat.transfer_limit', { card: cardShort(cards[0]) }) };
    return null;
  }
  return null;
}

/** The rule a challenge found broken (the ruling's `rule`), in words. */
export function ruleText(rule) {
  switch (rule) {
    case 'does_not_beat':
      return t('rule.does_not_beat');
    case 'rank_not_on_table':
      return t('rule.rank_not_on_table');
    case 'attack_limit':
      return t('rule.attack_limit');
    case 'transfer_rank':
      return t('rule.transfer_rank');
    case 'transfer_limit':
      return t('rule.transfer_limit');
    default:
      return '';
  }
}
