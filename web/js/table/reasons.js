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
