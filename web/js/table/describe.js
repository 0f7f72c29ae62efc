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

export function reasonText(reason) {
  switch (reason) {
    case 'timeout':
      return t('reason.timeout');
    case 'left':
      return t('reason.left');
    case 'disconnected':
      return t('reason.disconnected');
    case 'challenge':
      return t('reason.challenge');
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

/** A move of the current bout (view.moves[i]); `attacks` are the bout's attack cards in order. */
export function moveText(action, names, attacks = []) {
  const who = seatName(names, action.seat);
  switch (action.type) {
    case 'lead':
      return t('log.lead', { name: who, cards: cardsText(action.cards) });
    case 'throw_in':
      return t('log.throw_in', { name: who, cards: cardsText(action.cards) });
    case 'transfer':
      return t('log.transfer', { name: who, cards: cardsText(action.cards) });
    case 'cover': {
      const attack = attacks[action.attack];
      return attack
        ? t('log.cover', { name: who, card: cardShort(action.card), attack: cardShort(attack) })
        : t('log.cover_short', { name: who, card: cardShort(action.card) });
    }
    default:
      return t('log.other', { name: who });
  }
}

/** One event in words, or null for events the log does not show. */
export function eventText(event, names, attacks) {
  switch (event.type) {
    case 'match_start':
      return t('log.match_start', { dealer: seatName(names, event.dealer), attacker: seatName(names, event.attacker), defender: seatName(names, event.defender) });
    case 'bout_start':
      return t('log.bout_start', { attacker: seatName(names, event.attacker), defender: seatName(names, event.defender) });
    case 'move':
      return moveText({ ...event.action, seat: event.seat }, names, attacks);
    case 'transferred':
      return t('log.transferred', { defender: seatName(names, event.defender) });
    case 'take':
      return t('log.take', { name: seatName(names, event.seat) });
    case 'pass':
      return t('log.pass', { name: seatName(names, event.seat) });
    case 'bout_end':
      return event.result === 'taken'
        ? t('log.picked_up', { name: seatName(names, event.defender), count: (event.cards || []).length })
        : t('log.beaten', { count: (event.cards || []).length });
    case 'draw':
      if (!event.count) return null;
      return event.cards
        ? t('log.draw_own', { name: seatName(names, event.seat), cards: cardsText(event.cards) })
        : t('log.draw', { name: seatName(names, event.seat), count: event.count });
    case 'out':
      return t('log.out', { name: seatName(names, event.seat), place: event.place });
    case 'forfeit':
      return t('log.forfeit', { name: seatName(names, event.seat), reason: reasonText(event.reason) });
    case 'challenge':
      if (event.ruling === 'upheld' && event.rule) return t('log.challenge_upheld_rule', { name: seatName(names, event.seat), loser: seatName(names, event.loser), rule: ruleText(event.rule) });
      return event.ruling === 'upheld'
        ? t('log.challenge_upheld', { name: seatName(names, event.seat), loser: seatName(names, event.loser) })
        : t('log.challenge_rejected', { name: seatName(names, event.seat), loser: seatName(names, event.loser) });
    case 'exchange_trump':
      return t('log.exchange_trump', { name: seatName(names, event.seat), gave: cardShort(event.gave), got: cardShort(event.got) });
    case 'match_end': {
      const outcome = event.outcome || {};
      return outcome.draw ? t('log.match_draw') : t('log.match_end', { name: seatName(names, outcome.durak) });
    }
    case 'seat':
      return event.kind === 'empty' ? t('log.seat_free', { n: event.seat + 1 }) : t('log.seat_taken', { name: names[event.seat] || event.name || '?', n: event.seat + 1 });
    case 'rematch':
      return event.seat === undefined || event.seat === null ? t('log.rematch') : t('log.rematch_by', { name: seatName(names, event.seat) });
    default:
      return null;
  }
}
