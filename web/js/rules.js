// Table parameters (rule book §1) and presets (§11) in words.
import { h } from './dom.js';
import { formatNumber, t } from './i18n.js';

export function presetName(preset) {
  switch (preset) {
    case 'classic36':
      return t('preset.classic36');
    case 'durac1993':
      return t('preset.durac1993');
    default:
      return t('preset.durak_peak');
  }
}

export function presetDescription(preset, serverLabel) {
  switch (preset) {
    case 'classic36':
      return t('preset.classic36.desc');
    case 'durac1993':
      return t('preset.durac1993.desc');
    case 'durak_peak':
      return t('preset.durak_peak.desc');
    default:
      return serverLabel || '';
  }
}

export function circleName(circle) {
  return circle === 'neighbours' ? t('rules.circle_neighbours') : t('rules.circle_all');
}

export function stakeText(stake) {
  return stake > 0 ? t('rules.stake', { coins: formatNumber(stake) }) : t('rules.free');
}

export function timerText(timer) {
  return timer > 0 ? t('rules.timer', { seconds: timer }) : t('rules.no_timer');
}

/** Short chips describing a table's rules. */
export function rulesChips(rules, { compact = false } = {}) {
  const chips = [
    [presetName(rules.preset), 'preset'],
    [t('rules.deck', { count: rules.deck }), 'deck'],
    compact ? null : [t('rules.seats', { count: rules.seats }), 'seats'],
    [rules.transfer ? t('rules.transfer_on') : t('rules.transfer_off'), 'transfer'],
    [circleName(rules.circle), 'circle'],
    [timerText(rules.timer), 'timer'],
    [stakeText(rules.stake), rules.stake > 0 ? 'stake' : 'free'],
    rules.draws ? null : [t('rules.no_draws'), 'draws'],
    rules.cheating ? [t('rules.cheating'), 'cheating'] : null,
  ].filter(Boolean);
  return h(
    'ul',
    { class: 'chips', 'aria-label': t('rules.label') },
    chips.map(([text, kind]) => h('li', { class: ['chip', `chip-${kind}`], text })),
  );
}
