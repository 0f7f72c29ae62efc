// Drawing a table from an engine view: seats, stock and trump, the attack/cover pairs, discard.
// Used by the play/spectate page and by the replay viewer.
import { cardBack, cardFace, cardName, suitName, SUIT_SYMBOLS } from '../cards.js';
import { h, fingerTap } from '../dom.js';
import { t } from '../i18n.js';
import { botLevelText, displayName } from './describe.js';
import { ratingText } from '../rating.js';

/** The "Guest" badge after a guest's name (`seat.guest` from the server), or null. */
export function guestBadge(seat) {
  return seat && seat.guest ? h('span', { class: 'badge guest', text: t('header.guest') }) : null;
}

/** Seat names separated by commas, each guest's with its badge (the lobby, the history). */
export function namesWithBadges(seats) {
  return seats.map((seat, i) => [i ? ', ' : null, displayName(seat), seat.guest ? [' ', guestBadge(seat)] : null]);
}

export function roleText(role, me = false) {
  if (me) {
    switch (role) {
      case 'attacker':
        return t('role.you_attacker');
      case 'defender':
        return t('role.you_defender');
      case 'thrower':
        return t('role.you_thrower');
      default:
        return '';
    }
  }
  switch (role) {
    case 'attacker':
      return t('role.attacker');
    case 'defender':
      return t('role.defender');
    case 'thrower':
      return t('role.thrower');
    default:
      return '';
  }
}

/**
 * A seat's name that shortens sensibly on a narrow seat: a bot keeps its number ("Easy b… #2"),
 * a person's name ends in an ellipsis; the full name stays the text (and the seat's title).
 */
function nameText(seat, name, me) {
  if (seat.kind === 'bot' || seat.bot_level) {
    const [before, after] = t('bot.display', { level: '\u0000', n: seat.seat + 1 }).split('\u0000');
    return h('span', { class: 'name-text bot-name' }, before ? h('span', { class: 'name-fixed', text: before }) : null, h('span', { class: 'name-main', text: botLevelText(seat.level || seat.bot_level) }), after ? h('span', { class: 'name-fixed', text: after }) : null);
  }
  return h('span', { class: 'name-text' }, h('span', { class: 'name-main', text: me ? t('table.you_name', { name }) : name }));
}

/** Two letters that tell seats apart on a narrow phone: a person's initials ("Vasya Pupkin" -> "VP",
 * "vasya" -> "VA"), a bot's level and number ("Easy bot #2" -> "E2"). */
export function initials(seat, name) {
  if (seat.kind === 'bot' || seat.bot_level) return `${botLevelText(seat.level || seat.bot_level).slice(0, 1).toUpperCase()}${seat.seat + 1}`;
  const words = (name || '?').split(/[\s_.-]+/).filter(Boolean);
  const letters = words.length > 1 ? words[0][0] + words[1][0] : (words[0] || '?').slice(0, 2);
  return letters.toUpperCase();
}

/**
 * One seat: name, card count, connection, role, countdown.
 * `seat` = {seat, name, kind, connected}; `player` = view.players[i] or null before a match.
 */
export function seatBox(seat, player, { me = false, deciding = false, series = null, revealed = null, showConnection = true } = {}) {
  const name = seat.kind === 'empty' ? t('table.free_seat') : displayName(seat);
  const cards = player ? player.cards : null;
  const role = player && !player.out ? player.role : null;
  const classes = ['seat', role && `role-${role}`, deciding && 'deciding', me && 'me', player && player.out && 'out', seat.kind === 'empty' && 'empty', showConnection && !seat.connected && seat.kind === 'human' && 'offline'];
  const status = [];
  if (player && player.out) status.push(h('span', { class: 'badge out', text: t('table.out_place', { place: player.place }) }));
  else if (role) status.push(h('span', { class: ['badge', `role-${role}`], text: roleText(role, me) }));
  if (player && player.passed && !player.out) status.push(h('span', { class: 'badge passed', text: t('table.passed') }));
  const connection =
    showConnection && seat.kind === 'human'
      ? h('span', {
          class: ['conn', seat.connected ? 'online' : 'offline'],
          role: 'img',
          'aria-label': seat.connected ? t('table.online') : t('table.offline'),
          title: seat.connected ? t('table.online') : t('table.offline'),
        })
      : null;
  const backs = [];
  if (cards !== null && !me) {
    for (let i = 0; i < Math.min(cards, 8); i++) backs.push(cardBack(['mini']));
  }
  return h(
    'div',
    { class: classes, dataset: { seat: String(seat.seat) }, title: me ? null : name },
    h(
      'div',
      { class: 'seat-head' },
      h('span', { class: 'avatar initials', 'aria-hidden': 'true', text: seat.kind === 'empty' ? '+' : initials(seat, name) }),
      h(
        'div',
        { class: 'seat-info' },
        h('div', { class: 'seat-name' }, connection, nameText(seat, name, me), guestBadge(seat)),
        h(
          'div',
          { class: 'seat-sub' },
          cards !== null ? h('span', { class: 'card-count', dataset: { cards: String(cards) }, text: t('table.cards_n', { count: cards }) }) : null,
          series ? h('span', { class: 'series', text: t('table.series_short', { wins: series[0], losses: series[1] }) }) : null,
          seat.rating ? h('span', { class: 'seat-rating', title: t('table.rating'), text: ratingText(seat.rating) }) : null,
        ),
      ),
      h('span', { class: 'countdown', 'aria-hidden': 'true', hidden: !deciding }),
    ),
    status.length ? h('div', { class: 'seat-badges' }, status) : null,
    backs.length ? h('div', { class: 'mini-hand', 'aria-hidden': 'true' }, backs) : null,
    revealed ? h('div', { class: 'revealed', 'aria-label': t('replay.revealed') }, revealed.map((card) => cardFace(card, { classes: ['tiny'] }))) : null,
    deciding ? h('div', { class: 'timer-bar', 'aria-hidden': 'true' }, h('span')) : null,
  );
}

/** The stock with the turned trump under it, or the trump suit alone once the stock is gone. */
export function stockPile(view) {
  const trump = view.trump;
  const children = [];
  if (view.trump_card_in_stock) {
    children.push(cardFace(view.trump_card, { classes: ['trump-card'], label: t('table.trump_card', { card: cardName(view.trump_card) }) }));
  }
  if (view.stock > (view.trump_card_in_stock ? 1 : 0)) children.push(cardBack(['stock-back']));
  return h(
    'div',
    { class: 'stock-area', id: 'stock' },
    h('div', { class: 'stock-pile' }, children),
    h(
      'div',
      { class: 'stock-info' },
      h('span', { class: 'stock-count', dataset: { stock: String(view.stock) }, text: t('table.stock_n', { count: view.stock }) }),
      h('span', { class: ['trump-suit', `suit-${trump}`], title: suitName(trump), text: t('table.trump_is', { suit: `${SUIT_SYMBOLS[trump]} ${suitName(trump)}` }) }),
    ),
  );
}

export function discardPile(view) {
  return h(
    'div',
    { class: 'discard-area', id: 'discard', 'aria-label': t('table.discard_n', { count: view.discard }) },
    view.discard > 0 ? h('div', { class: 'discard-pile', 'aria-hidden': 'true' }, cardBack(['discard-a']), cardBack(['discard-b'])) : null,
    h('span', { class: 'discard-count', text: t('table.discard_n', { count: view.discard }) }),
  );
}

/**
 * The attack/cover pairs. `targets` = attack indexes the selected card may cover (they become
 * buttons calling `onTarget(i)`); `seen` = card texts drawn before (others get an entry animation).
 */
export function pairsZone(view, { targets = [], onTarget = null, seen = null, onDrop = null, dropLabel = null } = {}) {
  const pairs = view.table.map((pair, index) => {
    const isTarget = targets.includes(index) && !pair.cover;
    const enter = (card) => (seen && !seen.has(card) ? 'enter' : null);
    const attack = isTarget
      ? cardFace(pair.attack, {
          tag: 'button',
          classes: ['target', enter(pair.attack)],
          label: t('table.cover_this', { card: cardName(pair.attack) }),
          attrs: { dataset: { key: `pair:${index}`, attack: String(index) }, onclick: () => onTarget(index) },
        })
      : cardFace(pair.attack, { classes: [enter(pair.attack)] });
    if (isTarget) fingerTap(attack, () => onTarget(index));
    const pairEl = h('div', { class: ['pair', pair.cover ? 'covered' : 'open'], dataset: { index: String(index) }, role: 'group', 'aria-label': pair.cover ? t('table.pair_covered', { attack: cardName(pair.attack), cover: cardName(pair.cover) }) : t('table.pair_open', { attack: cardName(pair.attack) }) }, attack, pair.cover ? cardFace(pair.cover, { classes: ['cover', enter(pair.cover)] }) : null);
    if (onDrop && !pair.cover) {
      pairEl.addEventListener('dragover', (event) => {
        event.preventDefault();
        pairEl.classList.add('drop-hover');
      });
      pairEl.addEventListener('dragleave', () => pairEl.classList.remove('drop-hover'));
      pairEl.addEventListener('drop', (event) => {
        event.preventDefault();
        event.stopPropagation();
        pairEl.classList.remove('drop-hover');
        onDrop(event.dataTransfer.getData('text/plain'), index);
      });
    }
    return pairEl;
  });
  const zone = h(
    'div',
    { class: ['table-zone', !pairs.length && 'empty'], id: 'table-zone', role: 'region', 'aria-label': dropLabel || t('table.on_table') },
    pairs.length ? pairs : h('p', { class: 'zone-hint', text: view.phase === 'over' ? '' : t('table.zone_empty') }),
  );
  if (onDrop) {
    zone.addEventListener('dragover', (event) => event.preventDefault());
    zone.addEventListener('drop', (event) => {
      event.preventDefault();
      onDrop(event.dataTransfer.getData('text/plain'), null);
    });
  }
  return zone;
}
