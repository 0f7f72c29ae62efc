// The "What happened" log: events kept with the names and attacks they refer to (the words are
// made when drawn, so a language switch redraws them). After a reload the server's welcome brings
// the match's recent events (`recent`), so the log is filled again.
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { icon } from '../icons.js';
import { eventText } from './describe.js';

const LOG_LIMIT = 120;

export function newLog() {
  return { entries: [], boutAttacks: [] };
}

export function addToLog(log, events, names) {
  for (const event of events) {
    if (event.type === 'bout_start' || event.type === 'bout_end' || event.type === 'match_start') log.boutAttacks = [];
    log.entries.push({ event, names, attacks: log.boutAttacks.slice() });
    if (event.type === 'move' && event.action && event.action.type !== 'cover') log.boutAttacks.push(...(event.action.cards || []));
  }
  if (log.entries.length > LOG_LIMIT) log.entries.splice(0, log.entries.length - LOG_LIMIT);
}

/** The log panel; `open` keeps the reader's choice across redraws (`onToggle(open)` reports it);
 * the reader's own seat (`mySeat`, null for a spectator) is told as "you". */
export function logPanel(log, open, onToggle = null, mySeat = null) {
  const items = log.entries
    .map((entry) => [entry.event.type, eventText(entry.event, entry.names, entry.attacks, mySeat)])
    .filter(([, text]) => text)
    .slice(-40)
    .map(([type, text]) => h('li', { class: `log-${type}`, text }));
  const list = h('ol', { class: 'log-list', id: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': t('table.log') }, items);
  const panel = h('details', { class: 'panel log-panel', id: 'log-panel', open }, h('summary', { 'aria-label': t('table.log') }, icon('log'), h('span', { class: 'log-label', text: t('table.log') })), list);
  if (onToggle) panel.addEventListener('toggle', () => onToggle(panel.open));
  return panel;
}
