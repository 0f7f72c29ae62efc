// Table events and moves in words, for the bout log and the challenge menu.
import { cardShort } from '../cards.js';
import { t } from '../i18n.js';
import { ruleText } from './reasons.js';

/** A bot level in words, in the current language. */
export function botLevelText(level) {
  switch (level) {
    case 'easy':
      return t('bot.easy');
    case 'hard':
      return t('bot.hard');
    default:
      return t('bot.normal');
  }
}

/** A seat's name as shown: a bot is "Easy bot #2" (in the current language), a person their name. */
export function displayName(seat) {
  if (seat.kind === 'bot' || seat.bot_level) return t('bot.display', { level: botLevelText(seat.level || seat.bot_level), n: seat.seat + 1 });
  return seat.name || seat.display_name || '';
}

/** A table's name as this page says it: the names the server gives quick-play and bot tables
 * ("Quick game", "Vasya vs bot (easy)") in the reader's language; any other name as it is. */
export function tableTitle(name) {
  if (name === 'Quick game') return t('table.name_quick');
  const bot = /^(.+) vs bot \((easy|normal|hard)\)$/.exec(name || '');
  if (bot) return t('table.name_vs_bot', { name: bot[1], level: botLevelText(bot[2]) });
  return name || '';
}

/** seat number -> display name. */
export function seatNames(seats) {
  const out = {};
  for (const seat of seats || []) out[seat.seat] = displayName(seat);
  return out;
}

export function seatName(names, seat) {
  if (seat === null || seat === undefined) return '?';
  return names[seat] || t('table.seat_n', { n: Number(seat) + 1 });
}

function cardsText(cards) {
  return (cards || []).map(cardShort).join(' ');
}

/** Why a seat forfeited; `you` when it is the reader's own seat ("your time ran out"). */
export function reasonText(reason, you = false) {
  switch (reason) {
    case 'timeout':
      return you ? t('reason.timeout_you') : t('reason.timeout');
    case 'left':
      return you ? t('reason.left_you') : t('reason.left');
    case 'disconnected':
      return you ? t('reason.disconnected_you') : t('reason.disconnected');
    case 'challenge':
      return you ? t('reason.challenge_you') : t('reason.challenge');
    default:
      return reason || '';
  }
}

/** Time left as minutes and seconds: "0:42", "4:05". */
export function clockText(ms) {
  const seconds = Math.ceil(Math.max(0, ms) / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/** Time left on a seat's countdown: seconds under a minute ("42"), else as clockText ("4:05"). */
export function countdownText(ms) {
  const seconds = Math.ceil(Math.max(0, ms) / 1000);
  return seconds < 60 ? String(seconds) : clockText(ms);
}

/** Whether `seat` is the reader's own (`mySeat`: his seat, or null for a spectator). */
function isMe(seat, mySeat) {
  return mySeat !== null && mySeat !== undefined && seat !== null && seat !== undefined && Number(seat) === Number(mySeat);
}

/** A move of the current bout (view.moves[i]); `attacks` are the bout's attack cards in order. The
 * reader's own moves (`mySeat`) are told to him as "you". */
export function moveText(action, names, attacks = [], mySeat = null) {
  const who = seatName(names, action.seat);
  const you = isMe(action.seat, mySeat);
  const cards = cardsText(action.cards);
  switch (action.type) {
    case 'lead':
      return you ? t('log.lead_you', { cards }) : t('log.lead', { name: who, cards });
    case 'throw_in':
      return you ? t('log.throw_in_you', { cards }) : t('log.throw_in', { name: who, cards });
    case 'transfer':
      return you ? t('log.transfer_you', { cards }) : t('log.transfer', { name: who, cards });
    case 'cover': {
      const attack = attacks[action.attack];
      const card = cardShort(action.card);
      if (attack) return you ? t('log.cover_you', { card, attack: cardShort(attack) }) : t('log.cover', { name: who, card, attack: cardShort(attack) });
      return you ? t('log.cover_short_you', { card }) : t('log.cover_short', { name: who, card });
    }
    default:
      return you ? t('log.other_you') : t('log.other', { name: who });
  }
}

function matchStartText(event, names, mySeat) {
  const dealer = seatName(names, event.dealer);
  const attacker = seatName(names, event.attacker);
  const defender = seatName(names, event.defender);
  const deals = isMe(event.dealer, mySeat);
  if (isMe(event.attacker, mySeat)) return deals ? t('log.match_start_you_deal_attack', { defender }) : t('log.match_start_you_attack', { dealer, defender });
  if (isMe(event.defender, mySeat)) return deals ? t('log.match_start_you_deal_defend', { attacker }) : t('log.match_start_you_defend', { dealer, attacker });
  return deals ? t('log.match_start_you_deal', { attacker, defender }) : t('log.match_start', { dealer, attacker, defender });
}

function challengeText(event, names, mySeat) {
  const name = seatName(names, event.seat);
  const loser = seatName(names, event.loser);
  if (event.ruling !== 'upheld') return isMe(event.seat, mySeat) ? t('log.challenge_rejected_you') : t('log.challenge_rejected', { name, loser });
  if (event.rule) {
    const rule = ruleText(event.rule);
    if (isMe(event.seat, mySeat)) return t('log.challenge_upheld_rule_you', { loser, rule });
    if (isMe(event.loser, mySeat)) return t('log.challenge_upheld_rule_on_you', { name, rule });
    return t('log.challenge_upheld_rule', { name, loser, rule });
  }
  if (isMe(event.seat, mySeat)) return t('log.challenge_upheld_you', { loser });
  if (isMe(event.loser, mySeat)) return t('log.challenge_upheld_on_you', { name });
  return t('log.challenge_upheld', { name, loser });
}

/** One event in words, or null for events the log does not show. The reader's own seat (`mySeat`)
 * is "you": "You take.", "Rival attacks you.". */
export function eventText(event, names, attacks, mySeat = null) {
  const who = (seat) => seatName(names, seat);
  const you = isMe(event.seat, mySeat);
  switch (event.type) {
    case 'match_start':
      return matchStartText(event, names, mySeat);
    case 'bout_start':
      if (isMe(event.attacker, mySeat)) return t('log.bout_start_you_attack', { defender: who(event.defender) });
      if (isMe(event.defender, mySeat)) return t('log.bout_start_you_defend', { attacker: who(event.attacker) });
      return t('log.bout_start', { attacker: who(event.attacker), defender: who(event.defender) });
    case 'move':
      return moveText({ ...event.action, seat: event.seat }, names, attacks, mySeat);
    case 'transferred':
      return isMe(event.defender, mySeat) ? t('log.transferred_you') : t('log.transferred', { defender: who(event.defender) });
    case 'take':
      return you ? t('log.take_you') : t('log.take', { name: who(event.seat) });
    case 'pass':
      return you ? t('log.pass_you') : t('log.pass', { name: who(event.seat) });
    case 'bout_end': {
      const count = (event.cards || []).length;
      if (event.result !== 'taken') return t('log.beaten', { count });
      return isMe(event.defender, mySeat) ? t('log.picked_up_you', { count }) : t('log.picked_up', { name: who(event.defender), count });
    }
    case 'draw':
      if (!event.count) return null;
      if (event.cards) return you ? t('log.draw_own_you', { cards: cardsText(event.cards) }) : t('log.draw_own', { name: who(event.seat), cards: cardsText(event.cards) });
      return you ? t('log.draw_you', { count: event.count }) : t('log.draw', { name: who(event.seat), count: event.count });
    case 'out':
      return you ? t('log.out_you', { place: event.place }) : t('log.out', { name: who(event.seat), place: event.place });
    case 'forfeit':
      return you ? t('log.forfeit_you', { reason: reasonText(event.reason, true) }) : t('log.forfeit', { name: who(event.seat), reason: reasonText(event.reason) });
    case 'challenge':
      return challengeText(event, names, mySeat);
    case 'exchange_trump':
      return you ? t('log.exchange_trump_you', { gave: cardShort(event.gave), got: cardShort(event.got) }) : t('log.exchange_trump', { name: who(event.seat), gave: cardShort(event.gave), got: cardShort(event.got) });
    case 'match_end': {
      const outcome = event.outcome || {};
      if (outcome.draw) return t('log.match_draw');
      return isMe(outcome.durak, mySeat) ? t('log.match_end_you') : t('log.match_end', { name: who(outcome.durak) });
    }
    case 'seat':
      if (event.kind === 'empty') return t('log.seat_free', { n: event.seat + 1 });
      return you ? t('log.seat_taken_you', { n: event.seat + 1 }) : t('log.seat_taken', { name: names[event.seat] || event.name || '?', n: event.seat + 1 });
    case 'rematch':
      if (event.seat === undefined || event.seat === null) return t('log.rematch');
      return you ? t('log.rematch_by_you') : t('log.rematch_by', { name: who(event.seat) });
    default:
      return null;
  }
}
